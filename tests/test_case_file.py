"""load_case on real files: YAML/JSON parity, byte-level UTF-8 errors, parse errors, bad paths."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from diagnose.case import Document
from diagnose.case_file import load_case
from diagnose.errors import CaseError, UsageError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"

CASE = {
    "id": "parity",
    "question": "Wie viele Einwohner hat Broken Bow? 人口は?",
    "system": "Answer only from the documents.",
    "documents": [
        {"id": "d1", "text": "As of the census of 2010, there were 3,559 people.", "score": 0.82,
         "source": "wiki/Broken_Bow"},
        {"id": "d2", "text": "Line one\nline two: with a colon", "score": 0.4},
    ],
    "sampling": {"seeds": 4, "temperatures": [0.2, 0.9], "top_k": 0, "max_new_tokens": 32},
    "constraints": [{"type": "regex", "pattern": "\\d"}, {"type": "max_words", "max": 40}],
}


def test_yaml_and_json_load_to_equal_cases(tmp_path: Path) -> None:
    y = tmp_path / "case.yaml"
    j = tmp_path / "case.json"
    y.write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    j.write_text(json.dumps(CASE, ensure_ascii=False, indent=2), encoding="utf-8")
    from_yaml = load_case(y)
    from_json = load_case(str(j))
    assert from_yaml == from_json
    assert from_yaml.question == CASE["question"]
    assert from_yaml.documents[0] == Document(id="d1", text=CASE["documents"][0]["text"], score=0.82,
                                              source="wiki/Broken_Bow")
    assert from_yaml.documents[1].text == "Line one\nline two: with a colon"
    assert from_yaml.sampling.temperatures == [0.2, 0.9]
    assert from_yaml.sampling.top_p == 0.9  # default kept


def test_yml_suffix_is_yaml(tmp_path: Path) -> None:
    f = tmp_path / "case.yml"
    f.write_text("id: y\nquestion: q\n", encoding="utf-8")
    assert load_case(f).id == "y"


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_invalid_utf8_in_document_text(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"bad{suffix}"
    if suffix == ".json":
        raw = b'{"id": "c1", "question": "Q?", "documents": [{"id": "d1", "text": "ab\xff\xfecd"}]}'
    else:
        raw = b"id: c1\nquestion: Q?\ndocuments:\n  - id: d1\n    text: \"ab\xff\xfecd\"\n"
    f.write_bytes(raw)
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == "documents[0].text"
    assert "UTF-8" in str(info.value)


def test_invalid_utf8_in_second_document(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_bytes(b"id: c1\nquestion: Q?\ndocuments:\n  - id: d1\n    text: fine\n"
                  b"  - id: d2\n    text: broken \xc3\x28 here\n")
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == "documents[1].text"


def test_valid_file_holding_private_use_character_loads(tmp_path: Path) -> None:
    # U+10FFFD is valid UTF-8; it must not be mistaken for an undecodable byte.
    f = tmp_path / "pua.yaml"
    f.write_text("id: c1\nquestion: Q?\ndocuments:\n  - id: d1\n    text: \"x\U0010fffdy\"\n",
                 encoding="utf-8")
    assert load_case(f).documents[0].text == "x\U0010fffdy"


def _line_of(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    assert match, message
    return int(match.group(1))


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("id: c1\nquestion: ok\ndocuments:\n  - id: d1\n    text: [unclosed\n  bad: : :\n",
                 encoding="utf-8")
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == "$"
    assert "YAML" in str(info.value)
    assert _line_of(str(info.value)) >= 5  # the problem is at or after the unclosed bracket


def test_malformed_json_names_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{\n  "id": "c1",\n  "question": "q",\n  "documents": [,]\n}\n', encoding="utf-8")
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == "$"
    assert "JSON" in str(info.value)
    assert _line_of(str(info.value)) == 4


@pytest.mark.parametrize(
    "name, text, field, shown",
    [
        ("c.yaml", "id: c1\nquestion: q\ndocuments:\n  - {id: d1, text: t, score: .nan}\n", "documents[0].score", "nan"),
        ("c.yaml", "id: c1\nquestion: q\ndocuments:\n  - {id: d1, text: t, score: -.inf}\n", "documents[0].score", "-inf"),
        ("c.yaml", "id: c1\nquestion: q\nsampling: {temperatures: [0.2, .inf]}\n", "sampling.temperatures[1]", "inf"),
        ("c.json", '{"id": "c1", "question": "q", "documents": [{"id": "d1", "text": "t", "score": NaN}]}',
         "documents[0].score", "nan"),
        ("c.json", '{"id": "c1", "question": "q", "sampling": {"top_p": Infinity}}', "sampling.top_p", "inf"),
        ("c.json", '{"id": "c1", "question": "q", "documents": [{"id": "d1", "text": "t", "score": 1e999}]}',
         "documents[0].score", "inf"),
    ],
)
def test_non_finite_numbers_in_a_file_name_the_field(tmp_path: Path, name: str, text: str, field: str,
                                                       shown: str) -> None:
    # YAML's .nan/.inf and Python's json (NaN, Infinity, 1e999) all give non-finite floats.
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == field
    assert str(info.value) == f"{field}: must be a finite number (got {shown})"


MALFORMED = {
    "id with a trailing newline": ('{"id": "c1\\n", "question": "q"}', "id", ""),
    "empty file": ("", "$", ""),
    "a field's own error passes through": ('{"id": "c1", "question": "q", "sampling": {"top_p": 1.5}}',
                                           "sampling.top_p", "1.5"),
    # Both parsers recurse per level: a RecursionError, exit 1 as an internal failure, before.
    "nested too deep for the parser": ('{"id": "c1", "question": "q", "tags": ' + "[" * 50_000 + "]" * 50_000 + "}",
                                       "$", "nested more than"),
    "nested less deep than that, still too deep": (
        '{"id": "c1", "question": "q", "tags": ' + "[" * 200 + "]" * 200 + "}", "$", "nested more than"),
    # Python refuses int() of more than 4300 digits with a ValueError: exit 1 before.
    "integer too long to parse": ('{"id": "c1", "question": "q", "sampling": {"top_k": ' + "9" * 5000 + "}}",
                                  "$", "4300 digits"),
}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])  # JSON is YAML too: one text, both parsers
@pytest.mark.parametrize("text, field, says", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_is_a_case_error_naming_its_field(
        tmp_path: Path, suffix: str, text: str, field: str, says: str) -> None:
    f = tmp_path / f"case{suffix}"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(CaseError) as info:
        load_case(f)
    assert info.value.field == field
    assert says in str(info.value)
    assert info.value.exit_code == 2


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(UsageError) as info:
        load_case(missing)
    assert info.value.exit_code == 2
    assert "nope.yaml" in str(info.value)
    assert not isinstance(info.value, CaseError)


def test_directory_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_case(tmp_path)


FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.suffix in {".yaml", ".yml", ".json"})


def test_fixtures_exist() -> None:
    assert FIXTURE_FILES


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_every_fixture_loads(path: Path) -> None:
    case = load_case(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert case.id == raw["id"]
    assert [d.id for d in case.documents] == [d["id"] for d in raw.get("documents", [])]
