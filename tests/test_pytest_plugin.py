"""The pytest plugin: fixtures in a user's test suite (pytester) and the assertion messages."""

pytest_plugins = ["pytester"]

import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

import msgspec  # noqa: E402
import pytest  # noqa: E402

from diagnose.pytest_plugin import (  # noqa: E402
    assert_center_pull_at_least,
    assert_no_conflict,
    assert_no_findings,
    assert_semantic_entropy_below,
    format_top_findings,
)
from diagnose.report import Report  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"

COMPETING_ADVICE = (
    "The retrieved documents disagree: they form competing gravity centers, so the model's "
    "answer depends on which one it happens to follow. Fix the context, not the temperature."
)


def _report(conflict: bool = True, sampled: bool = True, findings: list | None = None) -> Report:
    """A hand-built report: two centers (1937 vs 1952), one sampled run at 0.7."""
    data = {
        "case_id": "golden-gate",
        "verdict": "warn",
        "input": {
            "gravity_centers": [
                {"id": "c1", "documents": ["d1"], "mass": 0.5, "label": "1937"},
                {"id": "c2", "documents": ["d2"], "mass": 0.5, "label": "1952"},
            ],
            "noise_documents": [],
            "conflict": {
                "detected": conflict,
                "score": 0.81 if conflict else 0.05,
                "pairs": [{"a": "d1", "b": "d2", "kind": "value_mismatch",
                           "evidence": "d1: 'opened in 1937' / d2: 'opened in 1952'"}] if conflict else [],
            },
        },
        "findings": findings if findings is not None else [
            {"stage": "input", "rule": "input.competing_centers", "severity": "warn",
             "evidence": {}, "advice": COMPETING_ADVICE},
            {"stage": "sampling", "rule": "sampling.high_semantic_entropy", "severity": "fail",
             "evidence": {},
             "advice": "Outputs disagree in meaning across seeds. Fix the context (e.g. drop a passage)."},
            {"stage": "framework", "rule": "framework.sampler_portability", "severity": "info",
             "evidence": {}, "advice": "Other runtimes order the sampler differently."},
            {"stage": "length", "rule": "length.truncated", "severity": "warn",
             "evidence": {}, "advice": "Samples hit max_new_tokens! Raise it."},
        ],
        "environment": {"model": "fake"},
    }
    if sampled:
        samples = [{"seed": i, "text": t, "finish_reason": "stop", "cluster": c, "center": ctr}
                   for i, (t, c, ctr) in enumerate([("1937", 0, "c1"), ("1952", 1, "c2"),
                                                    ("1952", 1, "c2"), ("1937", 0, "c1")])]
        data["sampling"] = {"runs": [{
            "temperature": 0.7, "n": 4, "first_token_divergence": 0.5, "mean_entropy": 0.9,
            "perplexity": 2.0, "repetition_rate": 0.0, "semantic_entropy": 0.693,
            "compliance_rate": 1.0, "truncation_rate": 0.0,
            "center_pull": {"c1": 0.5, "c2": 0.5, "none": 0.0}, "samples": samples,
        }]}
    return msgspec.convert(data, Report)


def _message(excinfo) -> str:
    return str(excinfo.value)


def test_no_conflict_message_names_score_centers_pairs_and_top_findings():
    assert_no_conflict(_report(conflict=False))
    with pytest.raises(AssertionError) as excinfo:
        assert_no_conflict(_report())
    message = _message(excinfo)
    assert "case 'golden-gate': the documents conflict (conflict score 0.810)" in message
    assert "c1 '1937' (mass 0.50, 1 docs)" in message and "c2 '1952'" in message
    assert "d1 vs d2 [value_mismatch]" in message
    lines = message.splitlines()
    top = lines[lines.index("top findings (3 of 4):") + 1:]
    # Most severe first, first sentence of the advice only.
    assert top == [
        "  - [fail] sampling.high_semantic_entropy: Outputs disagree in meaning across seeds.",
        "  - [warn] input.competing_centers: The retrieved documents disagree: they form competing "
        "gravity centers, so the model's answer depends on which one it happens to follow.",
        "  - [warn] length.truncated: Samples hit max_new_tokens!",
    ]


def test_semantic_entropy_message_has_measured_value_and_threshold():
    assert_semantic_entropy_below(_report(), 0.7, temperature=0.7)
    with pytest.raises(AssertionError) as excinfo:
        assert_semantic_entropy_below(_report(), 0.5, temperature=0.7)
    assert ("semantic entropy at temperature 0.7 is 0.693 nats, expected below 0.5 "
            "(2 meaning clusters in 4 samples)") in _message(excinfo)
    assert "[fail] sampling.high_semantic_entropy" in _message(excinfo)


def test_sampling_assertions_explain_missing_runs():
    with pytest.raises(AssertionError, match=r"no sampling runs \(diagnosed with mode='inputs'\)"):
        assert_semantic_entropy_below(_report(sampled=False), 0.5, temperature=0.7)
    with pytest.raises(AssertionError, match=r"no sampling run at temperature 1.2; the case sampled \[0.7\]"):
        assert_semantic_entropy_below(_report(), 0.5, temperature=1.2)


def test_no_findings_respects_the_severity_floor():
    info_only = [{"stage": "framework", "rule": "framework.sampler_portability", "severity": "info",
                  "evidence": {}, "advice": "Other runtimes differ."}]
    assert_no_findings(_report(findings=info_only))
    with pytest.raises(AssertionError) as excinfo:
        assert_no_findings(_report(), severity="fail")
    message = _message(excinfo)
    assert "1 finding(s) at severity 'fail' or worse, expected none (verdict 'warn'): " \
           "sampling.high_semantic_entropy" in message
    assert "top findings (1 of 1):" in message and "input.competing_centers" not in message
    with pytest.raises(AssertionError, match="3 finding"):
        assert_no_findings(_report())
    with pytest.raises(AssertionError, match="info"):
        assert_no_findings(_report(findings=info_only), severity="info")
    with pytest.raises(ValueError, match="severity"):
        assert_no_findings(_report(), severity="error")


def test_center_pull_by_id_or_label():
    assert_center_pull_at_least(_report(), "c1", 0.5, temperature=0.7)
    assert_center_pull_at_least(_report(), "1952", 0.5, temperature=0.7)
    with pytest.raises(AssertionError) as excinfo:
        assert_center_pull_at_least(_report(), "1937", 0.75, temperature=0.7)
    assert ("center c1 '1937' pulls 0.50 of the samples at temperature 0.7, expected at least 0.75"
            in _message(excinfo))
    assert "center pull: c1: 0.50, c2: 0.50, none: 0.00" in _message(excinfo)
    with pytest.raises(AssertionError, match="no gravity center with id or label '1999'; centers: c1 '1937'"):
        assert_center_pull_at_least(_report(), "1999", 0.5, temperature=0.7)


def test_format_top_findings_without_findings():
    assert format_top_findings([]) == "top findings: none"


def _user_suite(pytester, body: str, conftest: str = "") -> None:
    if conftest:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_user_prompts=textwrap.dedent(body))


FAKE_DIAGNOSER = '''
    import msgspec, pytest
    from diagnose.report import Report

    class FakeDiagnoser:
        """Stands in for the models: canned reports keyed by case id."""
        def __init__(self):
            self.calls = []
        def inputs(self, case):
            self.calls.append(("inputs", case.id))
            return msgspec.json.decode(REPORTS[case.id], type=Report)
        run = inputs

    @pytest.fixture(scope="session")
    def diagnoser():
        return FakeDiagnoser()
'''


def test_plugin_fixture_and_helpers_in_a_user_suite_without_models(pytester):
    """The entry point registers the plugin: no conftest import, only a diagnoser override."""
    reports = {
        "clean": _report(conflict=False, findings=[]).to_json(),
        "golden-gate": _report().to_json(),
    }
    conftest = f"REPORTS = {reports!r}\n" + textwrap.dedent(FAKE_DIAGNOSER)
    _user_suite(pytester, '''
        from diagnose.pytest_plugin import assert_no_conflict, assert_semantic_entropy_below

        CLEAN = {"id": "clean", "question": "When?", "documents": [{"id": "d1", "text": "In 1937."}]}
        SPLIT = {"id": "golden-gate", "question": "When?", "documents": [{"id": "d1", "text": "1937"}]}

        def test_clean_prompt(diagnose_case, diagnoser):
            report = diagnose_case(CLEAN)
            assert_no_conflict(report)
            assert diagnoser.calls == [("inputs", "clean")]

        def test_split_prompt(diagnose_case):
            report = diagnose_case(SPLIT, mode="run")
            assert_semantic_entropy_below(report, 0.3, temperature=0.7)
    ''', conftest)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: case 'golden-gate': semantic entropy at temperature 0.7 is 0.693 nats, "
        "expected below 0.3*",
        "*top findings (3 of 4):*",
        "*[[]fail] sampling.high_semantic_entropy: Outputs disagree in meaning across seeds.",
    ])


@pytest.fixture(scope="session")
def model_cache_dir() -> Path:
    """The real model cache, read before pytester points HOME at a temporary directory."""
    from diagnose.settings import Settings

    return Settings.from_env().models.cache_dir


@pytest.mark.models
def test_plugin_on_the_embedded_models(model_cache_dir, pytester, monkeypatch):
    """Real diagnoser (session fixture from the plugin) on two fixture cases, input stage only."""
    monkeypatch.setenv("RAG_DIAGNOSE_CACHE_DIR", str(model_cache_dir))
    _user_suite(pytester, f'''
        from diagnose.pytest_plugin import assert_no_conflict, assert_no_findings

        def test_clean_prompt_has_no_conflicting_centers(diagnose_case):
            report = diagnose_case({str(FIXTURES / "clean-single-answer.yaml")!r}, mode="inputs")
            assert_no_conflict(report)
            assert_no_findings(report, severity="warn")

        def test_contradicting_years_has_no_conflicting_centers(diagnose_case):
            assert_no_conflict(diagnose_case({str(FIXTURES / "contradicting-years.yaml")!r}))
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: case 'contradicting-years': the documents conflict (conflict score*",
        "*[[]warn] input.competing_centers: The retrieved documents disagree*",
    ])
