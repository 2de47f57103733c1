"""JUnit XML and Markdown renderings of a nightly result; the exit status per --fail-on."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import msgspec
import pytest

from diagnose.nightly import GATE_FAILED_EXIT, NightlyResult
from diagnose.nightly.compare import CaseComparison, Change, verdict_change
from diagnose.nightly.junit import render_junit
from diagnose.nightly.markdown import MAX_CHARS, escape, fenced, render_markdown
from diagnose.nightly.runner import CaseRecord, RunRecord
from diagnose.report import Finding, Report, VerdictBasis, read_report

EVIL = "evil|id`x"
EVIL_MESSAGE = "answer was `rm -rf` | <script>alert(1)</script> @octocat ```` ]]> \x07bell"


def report(case_id: str, verdict: str = "ok") -> Report:
    samples = [{"seed": i, "text": "1889", "finish_reason": "stop", "cluster": 0, "center": "c1",
                "compliant": True, "first_token": "18"} for i in range(4)]
    return read_report({
        "case_id": case_id, "verdict": verdict,
        "input": {"gravity_centers": [{"id": "c1", "documents": ["d1"], "mass": 1.0, "label": "1889"}],
                  "noise_documents": [], "conflict": {"detected": False, "score": 0.1, "pairs": []}},
        "sampling": {"runs": [{"temperature": 0.7, "n": 4, "first_token_divergence": 0.25, "mean_entropy": 0.4,
                               "perplexity": 1.8, "repetition_rate": 0.0, "semantic_entropy": 0.0,
                               "compliance_rate": 1.0, "truncation_rate": 0.0, "center_pull": {"c1": 1.0},
                               "samples": samples}]},
        "findings": [{"stage": "length", "rule": "length.truncated", "severity": "warn", "evidence": {},
                      "advice": "x"}] if verdict == "warn" else [],
        "environment": {},
    })


def change(severity: str, message: str = "something changed", kind: str = "truncation_rate") -> Change:
    return Change(kind=kind, severity=severity, temperature=0.7, baseline=0.0, current=1.0,  # type: ignore[arg-type]
                  evidence={"current_k": 8, "current_n": 8, "p_value": 0.0002, "note": message}, message=message)


def make_result(fail_on: str = "fail") -> NightlyResult:
    ids = ["steady", "wobbly", "broken", EVIL, "errored"]
    reports = {i: report(i, "warn" if i == "wobbly" else "ok") for i in ids if i != "errored"}
    cases = [CaseRecord(i, f"lib/{i}.yaml", "sha256:x", "done", 1.5, reports[i].verdict) for i in reports]
    cases.append(CaseRecord("errored", "lib/errored.yaml", "sha256:y", "error", 0.2, error="RuntimeError: boom"))
    run = RunRecord("20250101T000000Z-abc", None, "/lib", 12345, "2025-01-01T00:00:00+00:00",
                    "2025-01-01T00:01:00+00:00", cases=cases, inline_reports=reports)
    baseline = RunRecord("base", None, "/lib", 1, "", "", cases=[
        CaseRecord(i, f"lib/{i}.yaml", "sha256:x", "done", 1.0, "ok") for i in reports])
    comparisons = [
        CaseComparison("steady", []),
        CaseComparison("wobbly", [change("info", "the case file changed", "case_changed"),
                                  change("warn", "semantic_entropy at T=0.7 rose", "semantic_entropy")]),
        CaseComparison("broken", [change("fail", "truncation_rate at T=0.7 went 0/8 → 8/8")]),
        CaseComparison(EVIL, [change("fail", EVIL_MESSAGE)]),
        CaseComparison("errored", [change("fail", "the case did not produce a report: RuntimeError: boom",
                                          "case_error")]),
    ]
    return NightlyResult(run, comparisons, baseline, fail_on, 61.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("fail_on, expected", [("fail", GATE_FAILED_EXIT), ("warn", GATE_FAILED_EXIT), ("never", 0)])
def test_exit_status_follows_fail_on(fail_on: str, expected: int) -> None:
    assert make_result().exit_status(fail_on) == expected  # type: ignore[arg-type]


def test_exit_status_warn_only() -> None:
    result = make_result()
    result.comparisons = result.comparisons[:2]  # steady + wobbly (warn)
    assert result.exit_status("fail") == 0
    assert result.exit_status("warn") == GATE_FAILED_EXIT
    assert result.counts() == {"pass": 1, "warn": 1, "fail": 0}
    assert [c.case_id for c in result.failing("warn")] == ["wobbly"]


@pytest.mark.parametrize("fail_on, failed", [
    ("fail", {"broken", EVIL, "errored"}), ("warn", {"wobbly", "broken", EVIL, "errored"})])
def test_junit_has_one_testcase_per_case_and_failures_where_expected(fail_on: str, failed: set[str]) -> None:
    xml = render_junit(make_result(fail_on))
    root = ET.fromstring(xml)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["steady", "wobbly", "broken", EVIL, "errored"]
    assert {c.get("classname") for c in cases} == {"diagnose.nightly"}
    assert {c.get("name") for c in cases if c.find("failure") is not None} == failed
    suite = root.find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == str(len(failed))
    by_name = {c.get("name"): c for c in cases}
    broken = by_name["broken"].find("failure")
    assert broken.get("type") == "fail" and "truncation_rate" in broken.get("message")
    assert broken.get("message").startswith("regression: ")
    body = broken.text
    assert '"p_value": 0.0002' in body and '"current_k": 8' in body  # the evidence, as JSON
    out = by_name["steady"].find("system-out").text
    assert "verdict: ok" in out and "semantic_entropy 0.000" in out and "status: pass" in out
    assert by_name["broken"].get("time") == "1.500" and by_name["broken"].get("file") == "lib/broken.yaml"
    assert "RuntimeError: boom" in by_name["errored"].find("failure").text
    assert "[warn] semantic_entropy" in by_name["wobbly"].find("system-out").text
    properties = {p.get("name"): p.get("value") for p in suite.findall("./properties/property")}
    assert properties["run_id"] == "20250101T000000Z-abc" and properties["baseline"] == "base"


def test_junit_survives_hostile_text() -> None:
    xml = render_junit(make_result())
    root = ET.fromstring(xml)  # parses: escaped, no control characters
    assert "\x07" not in xml
    evil = next(c for c in root.iter("testcase") if c.get("name") == EVIL)
    text = evil.find("failure").text
    assert "<script>alert(1)</script>" in text and "]]>" in text  # kept as text, not markup


def test_markdown_summary_table_and_details() -> None:
    md = render_markdown(make_result())
    assert md.startswith("## diagnose nightly: ❌ gate failed")
    assert "5 cases: 1 pass, 1 warn, 3 fail" in md and "12345" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 5
    assert [r.split(" | ")[0] for r in rows][-1] == "| steady"  # regressions first, passing last
    assert all(len(re.findall(r"(?<!\\)\|", r)) == 5 for r in rows)  # no stray column breaks
    wobbly = next(r for r in rows if r.startswith("| wobbly"))
    assert "ok → warn" in wobbly and "semantic\\_entropy at T=0.7 rose" in wobbly
    assert md.count("<details>") == 4 and "### Details" in md
    assert "```text" in md


def test_markdown_escapes_untrusted_text() -> None:
    md = render_markdown(make_result())
    assert "<script>" not in md.split("### Details")[0]
    row = next(line for line in md.splitlines() if line.startswith("| evil"))
    assert "evil\\|id\\`x" in row
    assert "\\`rm -rf\\`" in row and "&lt;script&gt;" in row and "&#64;octocat" in row
    assert escape("a|b`c") == "a\\|b\\`c"
    block = fenced("x ```` y")
    assert block.startswith("`````text\n") and block.endswith("\n`````")


def test_markdown_stays_short_for_a_big_library() -> None:
    result = make_result()
    result.comparisons = [CaseComparison(f"case-{i}", [change("fail", "x" * 5000) for _ in range(3)])
                          for i in range(300)]
    md = render_markdown(result)
    assert len(md) <= MAX_CHARS
    assert "truncated" in md or "more; see the JUnit report" in md


def test_markdown_all_passing() -> None:
    result = make_result()
    result.comparisons = result.comparisons[:1]
    md = render_markdown(result)
    assert "✅ gate passed" in md and "### Details" not in md
    assert json.dumps(md)  # plain text


def test_a_failing_verdict_without_regression_fails_the_gate_and_says_so() -> None:
    result = make_result("fail")
    own = verdict_change(msgspec.structs.replace(report("steady"), verdict="fail", findings=[
        Finding(stage="input", rule="input.value_conflict", severity="fail", evidence={}, advice="x")]))
    result.comparisons[0] = CaseComparison("steady", [own])
    steady = next(c for c in ET.fromstring(render_junit(result)).iter("testcase") if c.get("name") == "steady")
    message = steady.find("failure").get("message")
    assert message.startswith("verdict: ") and "input.value_conflict" in message
    md = render_markdown(result)
    assert "gate failed (fail on: fail): 3 case(s) regressed against the baseline, 1 case(s) have a failing verdict" in md
    assert verdict_change(report("steady")) is None  # an "ok" verdict adds nothing


def test_markdown_verdict_names_the_finding_that_set_it() -> None:
    result = make_result()
    result.run.inline_reports["wobbly"].basis = VerdictBasis(deciding="length.truncated", controlled=True)
    wobbly = next(r for r in render_markdown(result).splitlines() if r.startswith("| wobbly"))
    assert "ok → warn (set by length.truncated)" in wobbly


def test_markdown_says_the_same_gate_as_the_service() -> None:
    """A case that warns below fail_on: the service's run says gate warn, and so do the Markdown
    headline and the gate line (they used to say "gate passed")."""
    result = make_result("fail")
    result.comparisons = result.comparisons[:2]  # steady + wobbly (warn)
    assert result.gate() == "warn" and result.exit_status() == 0
    md = render_markdown(result)
    assert md.startswith("## diagnose nightly: ⚠️ gate warn") and "gate passed" not in md
    assert "gate warn (fail on: fail): 1 case(s) changed or warn, none reaches fail" in md


def test_markdown_leaves_out_a_missing_baseline_value() -> None:
    """A new case has no baseline value: its evidence shows none, not `"baseline": null`."""
    result = make_result("warn")
    new = Change(kind="verdict", severity="warn", temperature=None, baseline=None, current="warn",  # type: ignore[arg-type]
                 evidence={"rule": "length.truncated"}, message="the case's own verdict is warn")
    result.comparisons = [CaseComparison("fresh-case", [new])]
    md = render_markdown(result)
    assert "null" not in md and '"current": "warn"' in md
