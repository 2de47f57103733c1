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


# --- regex constraints run with a time limit ---------------------------------------------------

import random  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402

from diagnose.case import CaseError  # noqa: E402
from diagnose.sampling import constraints as constraints_module  # noqa: E402
from diagnose.sampling.constraints import ConstraintChecker, ConstraintTimeout  # noqa: E402
from diagnose.text.patterns import MAX_PATTERN_SIZE, PatternError, compile_pattern  # noqa: E402

#: The pattern of the incident: the stdlib backtracks exponentially on it (minutes on 30 characters).
STDLIB_HOSTILE = "(.*)*\\x00"
#: A pattern the regex module cannot shortcut either: it must be stopped by the time limit.
HOSTILE = r"^(\w|\w)+$"
HOSTILE_TEXT = "TheanswerisinBrokenBow1937abc!"  # 30 characters, one sampled "word"

SAMPLE_TEXTS = [
    "about 3,559 people", "Yes, it is.", "Well. Yes.", "The capital is Paris.", "colour or color",
    "Prices: $12.50 and $7", "line one\n- item\n- other", "naïve café in Zürich", "", "aa bb abab",
    '{"answer": "1937"}', "2024-03-05 and 5/3/2024", "the cat sat", "concatenate", "1937年",
]
SAMPLE_PATTERNS = [
    r"\d", r"^Yes", r"\bcat\b", r"(?i)PARIS", r"colou?r", r"\$\d+(?:\.\d\d)?", r"(?<=\$)\d+\b",
    r"(?m)^- \w+$", r"é", r"[^\W\d_]{5,}", r"(a|b)\1", r"x*", r"^$", r"\d{4}-\d{2}-\d{2}", r"(?s)one.*other",
    r"^\{.*\}$", r"(?P<w>\w+) (?P=w)", r"\w+年", r"(?i)zürich", r"(?:ab)+$", r"[.!?]$", r"(?x) cat \s sat",
]


def test_regex_constraints_match_as_re_search_did():
    for pattern in SAMPLE_PATTERNS:
        for text in SAMPLE_TEXTS:
            expected = re.search(pattern, text) is not None
            assert check_constraint(RegexConstraint(pattern=pattern), text) is expected, (pattern, text)
    flags, unknown = ConstraintChecker([RegexConstraint(pattern=p) for p in SAMPLE_PATTERNS]).check(SAMPLE_TEXTS)
    assert unknown == []
    assert flags == [all(re.search(p, t) for p in SAMPLE_PATTERNS) for t in SAMPLE_TEXTS]


def test_the_incident_pattern_returns_at_once_with_re_search_s_answer():
    # 48 samples of ~8 tokens: with re.search each one backtracks for minutes.
    texts = [f"The answer is {1900 + i} in Broken Bow." for i in range(47)] + ["a NUL \x00 here"]
    checker = ConstraintChecker([RegexConstraint(pattern=STDLIB_HOSTILE)])
    started = time.perf_counter()
    flags, unknown = checker.check(texts)
    assert time.perf_counter() - started < 2.0
    assert unknown == [] and not checker.stopped
    assert flags == ["\x00" in t for t in texts]  # (.*)* matches empty: found exactly where a NUL is


def test_a_catastrophic_pattern_is_stopped_within_the_limit_and_left_unknown():
    texts = [HOSTILE_TEXT] * 48
    constraints = [MustIncludeConstraint(text="broken"), RegexConstraint(pattern=HOSTILE), MaxWordsConstraint(max=1)]
    checker = ConstraintChecker(constraints, timeout_s=0.05, budget_s=1.0)
    started = time.perf_counter()
    flags, unknown = checker.check(texts)
    first = time.perf_counter() - started
    assert first < 2.0
    assert unknown == [1]
    assert set(checker.stopped) == {1}
    stop = checker.stopped[1]
    assert (stop.constraint, stop.pattern, stop.checked) == (1, HOSTILE, 0)
    # judged on the other two constraints only: neither a pass nor a fail for the regex.
    # The text contains "Broken" (must_include ignores case) and is one word (max_words 1).
    assert "broken" in HOSTILE_TEXT.lower() and len(HOSTILE_TEXT.split()) == 1
    assert flags == [True] * len(texts)
    # not run again in this diagnosis: the next temperature's samples cost nothing
    started = time.perf_counter()
    flags, unknown = checker.check(texts)
    assert time.perf_counter() - started < 0.05
    assert unknown == [1] and flags == [True] * len(texts)


def test_the_budget_bounds_one_constraint_over_all_samples(monkeypatch):
    # Every match takes 0.3 s on this clock (each under the 0.5 s limit): the 1 s budget runs out
    # after 4 samples, and the constraint is stopped instead of costing 48 x 0.3 s.
    ticks = iter(range(10_000))
    monkeypatch.setattr(constraints_module, "_clock", lambda: next(ticks) * 0.3)  # one tick a match
    checker = ConstraintChecker([RegexConstraint(pattern=r"\d")], timeout_s=0.5, budget_s=1.0)
    flags, unknown = checker.check(["1"] * 48)
    assert unknown == [0]
    assert checker.stopped[0].checked == 4
    assert flags == [True] * 48
    # a constraint decided for only some samples is left out for all of them
    checker = ConstraintChecker([RegexConstraint(pattern=r"\d")], timeout_s=0.5, budget_s=1.0)
    assert checker.check(["1", "x"])[0] == [True, False]


def test_one_check_raises_instead_of_answering_when_stopped():
    started = time.perf_counter()
    with pytest.raises(ConstraintTimeout) as stopped:
        check_constraint(RegexConstraint(pattern=HOSTILE), HOSTILE_TEXT, timeout_s=0.05)
    assert time.perf_counter() - started < 2.0
    assert stopped.value.pattern == HOSTILE and stopped.value.timeout_s == 0.05
    assert isinstance(stopped.value, TimeoutError)


def test_a_compiled_pattern_is_reused():
    assert compile_pattern(r"\d+") is compile_pattern(r"\d+")


def _case_with_pattern(pattern: str):
    return case_from_dict({"id": "c", "question": "q?", "constraints": [{"type": "regex", "pattern": pattern}]})


@pytest.mark.parametrize("pattern", ["((a{1000}){1000}){1000}", "(((a{100}){100}){100}){100}",
                                     f"a{{{MAX_PATTERN_SIZE + 1}}}", "(?=a{200}){200}"])
def test_patterns_too_large_to_compile_quickly_are_rejected_at_load(pattern):
    # The regex module unrolls counted repeats as it compiles: these would take minutes to hours.
    started = time.perf_counter()
    with pytest.raises(CaseError) as error:
        _case_with_pattern(pattern)
    assert time.perf_counter() - started < 1.0
    assert error.value.field == "constraints[0].pattern"
    assert "too large" in str(error.value)


@pytest.mark.parametrize("pattern", ["(", r"\p{L}", "(?<name>a)", r"\m", "a{4294967295}", "(" * 1000 + ")" * 1000])
def test_patterns_the_documented_re_syntax_rejects_are_rejected(pattern):
    with pytest.raises(CaseError) as error:
        _case_with_pattern(pattern)
    assert error.value.field == "constraints[0].pattern"
    with pytest.raises(PatternError):
        compile_pattern(pattern)


@pytest.mark.parametrize("pattern", [STDLIB_HOSTILE, HOSTILE, f"a{{{MAX_PATTERN_SIZE}}}", r"^.{0,100000}$",
                                     r"(?<=\$)\d+", r"\d{4}-\d{2}"])
def test_valid_patterns_load(pattern):
    assert _case_with_pattern(pattern).constraints[0].pattern == pattern


# --- the json check's fence is found without a backtracking regex ------------------------------

_OLD_FENCE = re.compile(r"\A```[ \t]*(?:json)?[ \t]*\n?(?P<body>.*?)\n?[ \t]*```\Z", re.S | re.I)


def test_fenced_body_is_what_the_fence_regex_found():
    rng = random.Random(7)
    alphabet = ["`", "`", "``", "```", " ", "\t", "\n", "json", "JSON", "jso", "{", "}", '"a"', ":", "1"]
    for _ in range(3000):
        stripped = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))).strip()
        old = _OLD_FENCE.match(stripped)
        new = constraints_module._fenced_body(stripped)
        assert (new is None) == (old is None), repr(stripped)
        if old is not None:
            assert new == old.group("body").strip(), repr(stripped)


def test_a_fence_with_long_space_runs_is_checked_in_linear_time():
    # The old fence regex took ~5 s on 400 spaces and grew with the cube of the run.
    started = time.perf_counter()
    assert not check_constraint(JsonConstraint(), "```" + " " * 20_000 + "x")
    assert check_constraint(JsonConstraint(), "```json" + " \t" * 10_000 + '\n{"a": 1}' + " " * 20_000 + "\n```")
    assert time.perf_counter() - started < 1.0


def test_json_nested_past_the_parser_depth_is_not_json():
    assert not check_constraint(JsonConstraint(), "[" * 100_000)
