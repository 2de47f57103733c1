"""The assembled prompt's length, computed without assembling it (diagnose/prompt.py), and the
engine's own refusal of a template that would multiply the prompt into gigabytes."""

from __future__ import annotations

import time
import tracemalloc

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnose.case import case_from_dict
from diagnose.errors import CaseError
from diagnose.prompt import (
    DEFAULT_TEMPLATE,
    MAX_PROMPT_CHARS,
    build_messages,
    check_prompt_size,
    flat_prompt,
    prompt_size,
    user_message,
)

DOCUMENT = "The bridge opened in 1937 and carries traffic over the river. " * 160  # ~10 KB

# Text that likes to look like placeholders, braces and whitespace at the ends.
_pieces = st.sampled_from(["{documents}", "{question}", "{index}", "{id}", "{source}", "{text}", "{", "}",
                           "{{", "docs", " ", "\n", "é", "日本", "x"])
_text = st.lists(_pieces, max_size=8).map("".join)


@st.composite
def cases(draw):
    documents = [{"id": f"d{i}{draw(_text)}", "text": draw(_text),
                  **({"source": draw(_text)} if draw(st.booleans()) else {})}
                 for i in range(draw(st.integers(0, 12)))]
    case = {"id": "c", "question": "q" + draw(_text), "documents": documents}
    if draw(st.booleans()):
        case["template"] = draw(_text) + "{documents}" + draw(_text) + "{question}" + draw(_text)
    if draw(st.booleans()):
        case["document_format"] = draw(_text) + "{text}" + draw(_text)
    if draw(st.booleans()):
        case["document_separator"] = draw(_text)
    if draw(st.booleans()):
        case["system"] = draw(_text)
    return case_from_dict(case)


@given(cases())
@settings(max_examples=300, derandomize=True, deadline=None, database=None)
def test_the_computed_length_is_the_assembled_length(case):
    assert prompt_size(case).chars == len(flat_prompt(case))


def test_placeholders_are_substituted_in_one_pass():
    case = case_from_dict({
        "id": "c", "question": "Which {documents}?", "system": "{question}",
        "template": "Q: {question}\n{documents}\nQ again: {question}",
        "document_format": "[{index}|{id}|{source}] {text}",
        "documents": [{"id": "{text}", "source": "{id}", "text": "quotes {question} and {index}"}],
    })
    assert build_messages(case) == [
        {"role": "system", "content": "{question}"},
        {"role": "user", "content": "Q: Which {documents}?\n[1|{text}|{id}] quotes {question} and {index}\n"
                                    "Q again: Which {documents}?"},
    ]


def test_the_default_layout_is_unchanged():
    case = case_from_dict({"id": "c", "question": "  When?  ", "documents": [
        {"id": "a", "text": "  First.\n"}, {"id": "b", "text": "Second."}]})
    assert DEFAULT_TEMPLATE == "{documents}\n\nQuestion: {question}"
    assert user_message(case) == "Document [1] (id: a)\nFirst.\n\nDocument [2] (id: b)\nSecond.\n\nQuestion: When?"


@pytest.mark.parametrize(("changes", "field"), [
    ({"template": "{question}" + "{documents}" * 1000}, "template"),
    ({"document_format": "{text}" * 1000}, "document_format"),
    ({"document_format": "{id}{text}", "documents": [{"id": "x" * 250_000, "text": "t"}]}, "documents"),
    ({"question": "why " * 50_000}, "question"),
    ({"template": "{question}" * 5 + "{documents}" * 5, "document_format": "{text}" * 5}, "template"),
    ({"template": "{question}{documents}{documents}", "document_format": "{text}" * 30}, "document_format"),
    ({"template": "{question}{documents}" + "." * 300_000}, "template"),
])
def test_an_oversized_prompt_names_the_field_to_blame(changes, field):
    case = case_from_dict({"id": "c", "question": "When?", "documents": [{"id": "d1", "text": DOCUMENT}],
                           **changes})
    with pytest.raises(CaseError) as refused:
        check_prompt_size(case, 200_000)
    assert refused.value.field == field
    assert f"{prompt_size(case).chars:,} characters" in str(refused.value) and "200,000" in str(refused.value)


def test_the_engine_refuses_a_gigabyte_prompt_without_building_it():
    case = case_from_dict({"id": "c", "question": "When?", "template": "{question}" + "{documents}" * 100_000,
                           "documents": [{"id": "d1", "text": DOCUMENT}]})
    assert prompt_size(case).chars > 990_000_000  # about 1 GB
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(CaseError, match="^template: .* at most 4,194,304 are accepted"):
            build_messages(case)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 1.0 and peak < 2**20
    assert MAX_PROMPT_CHARS == 4 * 1024 * 1024


class _Counter:
    context_window = 4096

    def chat_ids(self, messages):
        return list(range(sum(len(m["content"]) for m in messages) // 4))


class _Registry:
    """A model registry with a tokenizer only: the prompt is assembled before anything else runs."""

    def prompt_counter(self, model):
        return _Counter()

    def embedder(self):
        raise AssertionError("the case should have been refused before the documents are embedded")


def test_the_cli_answers_an_absurd_template_with_exit_2_naming_the_field(tmp_path, monkeypatch, capsys):
    import diagnose.cli as cli_module
    from diagnose.cli import main
    from diagnose.pipeline import Diagnoser
    from diagnose.settings import Settings

    monkeypatch.setattr(cli_module, "_diagnoser",
                        lambda progress, settings=None: Diagnoser(settings or Settings(), _Registry(), progress))
    path = tmp_path / "amplified.yaml"
    path.write_text(yaml.safe_dump({"id": "amplified", "question": "When?", "template": "{question}" + "{documents}" * 1000,
                                    "documents": [{"id": "d1", "text": DOCUMENT}]}))
    started = time.perf_counter()
    with pytest.raises(SystemExit) as exited:
        main(["inputs", str(path)])
    assert exited.value.code == 2 and time.perf_counter() - started < 5
    assert "invalid case: template: the template writes {documents} 1000 and {question} 1 times" in capsys.readouterr().err
