"""Case validation: documented defaults, and a CaseError naming the exact field for bad input."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from diagnose.case import (
    CONSTRAINT_TYPES,
    MAX_NESTING,
    MAX_SEEDS,
    Case,
    Document,
    JsonConstraint,
    RegexConstraint,
    SamplingSpec,
    case_from_dict,
)
from diagnose.errors import CaseError


def minimal() -> dict[str, Any]:
    return {"id": "c-1", "question": "What is the population of Broken Bow?",
            "documents": [{"id": "d1", "text": "3,559 people lived there in 2010."}]}


def with_(path: str, value: Any) -> dict[str, Any]:
    """The minimal case with one (possibly nested, dotted) key set."""
    data = copy.deepcopy(minimal())
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return data


def error_for(data: Any) -> CaseError:
    with pytest.raises(CaseError) as info:
        case_from_dict(data)
    return info.value


# --- defaults ----------------------------------------------------------------------------


def test_minimal_case_gets_documented_defaults() -> None:
    case = case_from_dict({"id": "c-1", "question": "Who?"})
    assert case.id == "c-1"
    assert case.question == "Who?"
    assert case.documents == []
    assert case.system is None
    assert case.template is None
    assert case.constraints == []
    assert case.model == "default"
    s = case.sampling
    assert (s.seeds, s.temperatures, s.top_p, s.top_k, s.repetition_penalty, s.max_new_tokens) == (
        8, [0.2, 0.7, 1.2], 0.9, 50, 1.0, 128
    )


def test_defaults_are_not_shared_between_cases() -> None:
    a = case_from_dict({"id": "a", "question": "q"})
    b = case_from_dict({"id": "b", "question": "q"})
    a.sampling.temperatures.append(1.5)
    assert b.sampling.temperatures == [0.2, 0.7, 1.2]


def test_full_case_keeps_every_field() -> None:
    data = {
        "id": "full.case_1",
        "question": "Q?",
        "system": "Answer from the documents.",
        "template": "Docs:\n{documents}\nQ: {question}",
        "documents": [{"id": "d1", "text": "t1", "score": 0.8, "source": "wiki/X"},
                      {"id": "d2", "text": "t2"}],
        "sampling": {"seeds": 4, "temperatures": [0.0, 1.0], "top_p": 1.0, "top_k": 0,
                     "repetition_penalty": 1.1, "max_new_tokens": 64},
        "constraints": [{"type": "json", "keys": ["a"]}, {"type": "regex", "pattern": r"\d+"},
                        {"type": "max_words", "max": 10}, {"type": "must_include", "text": "X"}],
        "model": "some/dir",
    }
    case = case_from_dict(data)
    assert case.documents[0] == Document(id="d1", text="t1", score=0.8, source="wiki/X")
    assert case.documents[1] == Document(id="d2", text="t2")
    assert case.sampling == SamplingSpec(seeds=4, temperatures=[0.0, 1.0], top_p=1.0, top_k=0,
                                         repetition_penalty=1.1, max_new_tokens=64)
    assert case.constraints[0] == JsonConstraint(keys=["a"])
    assert case.constraints[1] == RegexConstraint(pattern=r"\d+")
    assert [type(c).__name__ for c in case.constraints] == [
        "JsonConstraint", "RegexConstraint", "MaxWordsConstraint", "MustIncludeConstraint"]
    assert case.model == "some/dir"


@pytest.mark.parametrize("seeds", [1, MAX_SEEDS])
def test_seed_bounds_are_inclusive(seeds: int) -> None:
    assert case_from_dict(with_("sampling.seeds", seeds)).sampling.seeds == seeds


def test_greedy_temperature_and_edge_values_are_accepted() -> None:
    case = case_from_dict(with_("sampling", {"temperatures": [0.0, 2.0], "top_p": 1.0, "top_k": 0}))
    assert case.sampling.temperatures == [0.0, 2.0]


# --- invalid input: field path and value ---------------------------------------------------


@pytest.mark.parametrize(
    "data, field, shown",
    [
        (with_("question", ""), "question", "''"),
        (with_("question", "  \t "), "question", "'  \\t '"),
        (with_("id", "bad id!"), "id", "'bad id!'"),
        (with_("id", "x" * 129), "id", None),
        (with_("documents", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]),
         "documents[1].id", "'a'"),
        (with_("documents", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}]),
         "documents[2].id", "'a'"),
        (with_("sampling.temperatures", [0.2, 2.5]), "sampling.temperatures[1]", "2.5"),
        (with_("sampling.temperatures", [-0.1]), "sampling.temperatures[0]", "-0.1"),
        (with_("sampling.seeds", 0), "sampling.seeds", "0"),
        (with_("sampling.seeds", MAX_SEEDS + 1), "sampling.seeds", str(MAX_SEEDS + 1)),
        (with_("sampling.top_p", 0), "sampling.top_p", "0"),
        (with_("sampling.top_p", 1.5), "sampling.top_p", "1.5"),
        (with_("sampling.top_k", -1), "sampling.top_k", "-1"),
        (with_("sampling.repetition_penalty", 0), "sampling.repetition_penalty", "0"),
        (with_("sampling.max_new_tokens", 0), "sampling.max_new_tokens", "0"),
        (with_("constraints", [{"type": "regex", "pattern": "(unclosed"}]),
         "constraints[0].pattern", "'(unclosed'"),
        (with_("constraints", [{"type": "regex", "pattern": "a{99999999999}"}]),
         "constraints[0].pattern", "'a{99999999999}'"),
        (with_("constraints", [{"type": "regex", "pattern": "(" * 1000 + ")" * 1000}]),
         "constraints[0].pattern", None),
        (with_("constraints", [{"type": "json"}, {"type": "max_words", "max": 0}]),
         "constraints[1].max", "0"),
        (with_("template", "Q: {question} only"), "template", "'Q: {question} only'"),
        (with_("sampling.seeds", "many"), "sampling.seeds", "'many'"),
    ],
)
def test_invalid_value_names_field_and_value(data: dict, field: str, shown: str | None) -> None:
    err = error_for(data)
    assert err.field == field
    assert str(err).startswith(f"{field}: ")
    if shown is not None:
        assert shown in str(err)
    assert err.exit_code == 2


def test_unknown_constraint_type_lists_known_types() -> None:
    err = error_for(with_("constraints", [{"type": "bogus_check", "x": 1}]))
    assert err.field == "constraints[0].type"
    assert "bogus_check" in str(err)
    for known in ("json", "regex", "max_words", "must_include"):
        assert known in str(err)
    assert set(CONSTRAINT_TYPES) == {"json", "regex", "max_words", "must_include"}


def test_an_enum_error_lists_the_allowed_values() -> None:
    doc = {"id": "n1", "text": "The Tarrow ferry leaves at nine.", "authority": "gold"}
    with pytest.raises(CaseError) as info:
        case_from_dict({"id": "ferry", "question": "When does the Tarrow ferry leave?", "documents": [doc]})
    assert info.value.field == "documents[0].authority"
    assert "must be one of" in str(info.value)
    assert {"authoritative", "standard", "archived"} <= set(str(info.value).replace(",", " ").split())


def test_a_bad_date_is_explained_as_iso_8601_as_the_docs_say() -> None:
    doc = {"id": "n1", "text": "The Tarrow ferry leaves at nine.", "date": "spring 2019"}
    with pytest.raises(CaseError) as info:
        case_from_dict({"id": "ferry", "question": "When does the Tarrow ferry leave?", "documents": [doc]})
    assert info.value.field == "documents[0].date"
    assert "ISO 8601" in str(info.value) and "RFC3339" not in str(info.value) and "YYYY-MM-DD" in str(info.value)


def test_unknown_top_level_field() -> None:
    err = error_for(with_("colour", "red"))
    assert err.field == "colour"
    assert "known field" in str(err)


def test_unknown_nested_field() -> None:
    err = error_for(with_("sampling.temprature", 0.5))
    assert err.field == "sampling.temprature"


def test_unknown_document_field() -> None:
    err = error_for(with_("documents", [{"id": "d1", "text": "t", "url": "http://x"}]))
    assert err.field == "documents[0].url"


def test_missing_required_field() -> None:
    err = error_for({"id": "c-1", "documents": []})
    assert err.field == "question"
    assert "required" in str(err)


def test_missing_document_text() -> None:
    assert error_for(with_("documents", [{"id": "d1"}])).field == "documents[0].text"


def test_wrong_type_names_nested_path() -> None:
    err = error_for(with_("sampling.temperatures", [0.2, "hot"]))
    assert err.field == "sampling.temperatures[1]"
    assert "'hot'" in str(err)


def test_template_missing_documents_placeholder() -> None:
    err = error_for(with_("template", "{question}"))
    assert err.field == "template"
    assert "{documents}" in str(err)


def test_template_missing_question_placeholder() -> None:
    err = error_for(with_("template", "{documents}"))
    assert err.field == "template"
    assert "{question}" in str(err)


def test_lone_surrogate_in_document_text() -> None:
    err = error_for(with_("documents", [{"id": "d1", "text": "ok"}, {"id": "d2", "text": "a\ud800b"}]))
    assert err.field == "documents[1].text"
    assert "UTF-8" in str(err)
    # the position of the bad character (index 1 in "a\ud800b")
    assert "character 1" in str(err)


def test_lone_surrogate_in_first_document_text() -> None:
    assert error_for(with_("documents", [{"id": "d1", "text": "\udfff"}])).field == "documents[0].text"


def test_lone_surrogate_in_question() -> None:
    assert error_for(with_("question", "why\udc80?")).field == "question"


def test_not_a_mapping() -> None:
    err = error_for(["id", "question"])
    assert err.field == "$"
    assert "list" in str(err)


def test_duplicate_temperatures_rejected() -> None:
    err = error_for(with_("sampling.temperatures", [0.7, 0.7]))
    assert err.field == "sampling.temperatures"


def test_constructor_validates_too() -> None:
    with pytest.raises(CaseError) as info:
        Case(id="c", question="q", sampling=SamplingSpec(top_k=-3))
    assert info.value.field == "sampling.top_k"
    assert "-3" in str(info.value)


# --- non-finite numbers, whole-string ids, nesting ----------------------------------------

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "data, field",
    [
        (with_("documents", [{"id": "d1", "text": "x", "score": "NaN"}]), "documents[0].score"),
        (with_("documents", [{"id": "d1", "text": "x", "score": 0.5},
                             {"id": "d2", "text": "y", "score": "Infinity"}]), "documents[1].score"),
        (with_("documents", [{"id": "d1", "text": "x", "score": "-inf"}]), "documents[0].score"),
        (with_("documents", [{"id": "d1", "text": "x", "score": NAN}]), "documents[0].score"),
        (with_("documents", [{"id": "d1", "text": "x", "score": -INF}]), "documents[0].score"),
        (with_("sampling.temperatures", [0.2, NAN]), "sampling.temperatures[1]"),
        (with_("sampling.temperatures", ["nan"]), "sampling.temperatures[0]"),
        (with_("sampling.top_p", NAN), "sampling.top_p"),
        (with_("sampling.top_p", "Infinity"), "sampling.top_p"),
        (with_("sampling.repetition_penalty", INF), "sampling.repetition_penalty"),
        (with_("sampling.repetition_penalty", "NaN"), "sampling.repetition_penalty"),
    ],
)
def test_non_finite_numbers_are_refused_naming_the_field(data: dict, field: str) -> None:
    # A NaN score passed every check (no range) and reached the database: PostgreSQL's
    # jsonb refused it (a 500), SQLite stored non-standard JSON.
    err = error_for(data)
    assert err.field == field
    assert str(err).startswith(f"{field}: must be a finite number")


def test_non_finite_numbers_are_refused_from_the_python_api() -> None:
    from langchain_core.documents import Document as LCDocument

    with pytest.raises(CaseError) as info:
        Case(id="c", question="q", documents=[Document(id="a", text="x", score=NAN)])
    assert info.value.field == "documents[0].score"
    with pytest.raises(CaseError) as info:
        Case(id="c", question="q", documents=[LCDocument(page_content="a"),
                                              LCDocument(page_content="b", metadata={"score": INF})])
    assert info.value.field == "documents[1].score"
    with pytest.raises(CaseError) as info:
        Case(id="c", question="q", sampling=SamplingSpec(temperatures=[0.7, -INF]))
    assert info.value.field == "sampling.temperatures[1]"


def test_finite_extremes_are_still_accepted() -> None:
    docs = [{"id": "a", "text": "x", "score": -1e308}, {"id": "b", "text": "y", "score": 5e-324}]
    assert [d.score for d in case_from_dict(with_("documents", docs)).documents] == [-1e308, 5e-324]


@pytest.mark.parametrize("case_id", ["abc\n", "abc\r\n", "\nabc", "a\nb", "abc\x00", "abc "])
def test_id_must_match_as_a_whole(case_id: str) -> None:
    # ``^...$`` with re.match let "abc\n" through: ``$`` also matches before a final newline.
    err = error_for(with_("id", case_id))
    assert err.field == "id"
    assert repr(case_id) in str(err)


def test_case_data_nested_too_deeply_is_refused_without_recursing() -> None:
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    err = error_for(with_("tags", deep))
    assert err.field == "$"
    assert f"nested more than {MAX_NESTING} levels" in str(err)
    cyclic: dict = {"id": "c", "question": "q"}
    cyclic["system"] = cyclic
    assert error_for(cyclic).field == "$"


def test_nesting_up_to_the_limit_reaches_the_type_checks() -> None:
    nested: list = []
    for _ in range(MAX_NESTING - 2):  # the case mapping and its tags list are two levels
        nested = [nested]
    assert error_for(with_("tags", nested)).field == "tags[0]"


# --- LangChain documents -------------------------------------------------------------------


def test_langchain_documents_are_converted() -> None:
    from langchain_core.documents import Document as LCDocument

    case = Case(
        id="lc",
        question="Q?",
        documents=[
            LCDocument(page_content="first", metadata={"source": "wiki/A", "score": 0.5}, id="x"),
            LCDocument(page_content="second", metadata={"source": "wiki/B"}),
            LCDocument(page_content="third"),
        ],
    )
    assert case.documents == [
        Document(id="x", text="first", score=0.5, source="wiki/A"),
        Document(id="wiki/B", text="second", score=None, source="wiki/B"),  # a stable id: the source
        Document(id="d2", text="third", score=None, source=None),
    ]
    assert all(isinstance(d, Document) for d in case.documents)


def test_langchain_documents_are_validated() -> None:
    from langchain_core.documents import Document as LCDocument

    with pytest.raises(CaseError) as info:
        Case(id="lc", question="Q?", documents=[LCDocument(page_content="a", id="same"),
                                                  LCDocument(page_content="b", id="same")])
    assert info.value.field == "documents[1].id"
    assert "'same'" in str(info.value)


def test_mixed_documents_are_converted() -> None:
    from langchain_core.documents import Document as LCDocument

    case = Case(id="mix", question="Q?",
                documents=[Document(id="own", text="a"), LCDocument(page_content="b")])
    assert [(d.id, d.text) for d in case.documents] == [("own", "a"), ("d1", "b")]
