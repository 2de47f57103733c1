"""Output constraints: one test group per constraint type."""

from __future__ import annotations

import pytest

from diagnose.case import (
    JsonConstraint,
    MaxWordsConstraint,
    MustIncludeConstraint,
    RegexConstraint,
    case_from_dict,
)
from diagnose.sampling.constraints import check_constraint, passes_all


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  \n{"a": 1}\n ',
        "[1, 2]",
        "42",
        '```json\n{"a": 1}\n```',
        '```JSON\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        '  ```json {"a": 1} ```  ',
    ],
)
def test_json_accepts(text):
    assert check_constraint(JsonConstraint(), text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        '{"a": 1',
        'Here it is: {"a": 1}',
        'Here:\n```json\n{"a": 1}\n```',  # the fence must be the whole output
        '```json\n{"a": 1}\n``` and more',
        "```json\n{oops}\n```",
    ],
)
def test_json_rejects(text):
    assert not check_constraint(JsonConstraint(), text)


def test_json_keys():
    constraint = JsonConstraint(keys=["name", "age"])
    assert check_constraint(constraint, '{"name": "x", "age": 3, "extra": null}')
    assert check_constraint(constraint, '```json\n{"name": "x", "age": 3}\n```')
    assert not check_constraint(constraint, '{"name": "x"}')
    assert not check_constraint(constraint, '["name", "age"]')  # not an object
    assert not check_constraint(constraint, '"name age"')


def test_regex_uses_search():
    constraint = RegexConstraint(pattern=r"\d")
    assert check_constraint(constraint, "about 3,559 people")
    assert not check_constraint(constraint, "no digits here")
    assert check_constraint(RegexConstraint(pattern="^Yes"), "Yes, it is.")
    assert not check_constraint(RegexConstraint(pattern="^Yes"), "Well. Yes.")


def test_max_words_counts_whitespace_separated_words():
    constraint = MaxWordsConstraint(max=3)
    assert check_constraint(constraint, "one two three")
    assert check_constraint(constraint, "  one\ttwo\n\nthree  ")
    assert not check_constraint(constraint, "one two three four")
    assert check_constraint(constraint, "")


def test_must_include_ignores_case():
    constraint = MustIncludeConstraint(text="Broken Bow")
    assert check_constraint(constraint, "the population of BROKEN BOW is 3,559")
    assert not check_constraint(constraint, "the population of Broken-Bow")


def test_passes_all():
    constraints = [RegexConstraint(pattern=r"\d"), MaxWordsConstraint(max=4)]
    assert passes_all(constraints, "It is 3,559.")
    assert not passes_all(constraints, "It is about 3,559 people.")
    assert not passes_all(constraints, "No number.")
    assert passes_all([], "anything at all")


def test_constraints_parsed_from_a_case():
    case = case_from_dict(
        {
            "id": "c",
            "question": "q?",
            "constraints": [{"type": "json", "keys": ["answer"]}, {"type": "max_words", "max": 5}],
        }
    )
    assert passes_all(case.constraints, '{"answer": "3,559"}')
    assert not passes_all(case.constraints, '{"result": "3,559"}')


def test_unknown_constraint_type_is_a_programming_error():
    with pytest.raises(TypeError):
        check_constraint(object(), "text")  # type: ignore[arg-type]
