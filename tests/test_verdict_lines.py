"""The summary opens with the finding that set the verdict, the stand-in, and the control."""

from __future__ import annotations

from diagnose.html import render_report_html
from diagnose.report import Finding, deciding_finding
from diagnose.verdict_lines import basis_lines
from tests.triage.test_controlled import _case, _run


def _finding(rule: str, stage: str, severity: str) -> Finding:
    return Finding(stage=stage, rule=rule, severity=severity, evidence={}, advice="Do this. Then that.")


def test_the_deciding_finding_is_the_first_of_the_worst_severity():
    findings = [_finding("input.a", "input", "warn"), _finding("sampling.b", "sampling", "fail"),
                _finding("length.c", "length", "fail")]
    assert deciding_finding(findings).rule == "sampling.b"
    assert deciding_finding([_finding("input.a", "input", "info")]) is None


def test_lines_name_the_deciding_finding_first_then_stand_in_then_control():
    report, _ = _run(_case("1937", "1937", "1952"))
    lines = basis_lines(report)
    assert lines[0].startswith("set by sampling.split_center_pull (fail): ")
    assert lines[1].startswith("stand-in model: the embedded default model")
    assert lines[2].startswith("controlled: sampling findings compared with the dominant center's documents alone")
    page = render_report_html(report)
    assert 'id="basis"' in page and "set by sampling.split_center_pull" in page


def test_an_uncontrolled_run_says_so():
    report, _ = _run(_case("1937", "1937", "1952", stand_in=False), controls=False)
    lines = basis_lines(report)
    assert lines[-1].startswith("uncontrolled:") and not any(x.startswith("stand-in") for x in lines)


def test_junit_lines_open_with_the_verdict_and_what_set_it():
    from diagnose.nightly.junit import key_metrics

    report, _ = _run(_case("1937", "1937", "1952"))
    lines = key_metrics(report)
    assert lines[0] == "verdict: fail" and lines[1].startswith("set by sampling.split_center_pull")
