"""JUnit XML for a nightly run: one test case per prompt, failures carry the evidence.

Built with ``xml.etree.ElementTree`` (which escapes text and attributes); control
characters that XML 1.0 forbids (model output may hold them) are dropped first.
"""

from __future__ import annotations

import json
import re
import socket
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from diagnose.report import SEVERITY_RANK, Report
from diagnose.display import fixed
from diagnose.verdict_lines import basis_lines

if TYPE_CHECKING:
    from diagnose.nightly import NightlyResult
    from diagnose.nightly.compare import CaseComparison, Change

CLASSNAME = "diagnose.nightly"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def clean(text: Any) -> str:
    """``text`` as a string XML 1.0 can hold."""
    return _INVALID_XML.sub("", str(text))


def key_metrics(report: Report | None) -> list[str]:
    """A few lines that sum a report up: verdict, input stage, each temperature run."""
    if report is None:
        return []
    inp = report.input
    lines = [
        f"verdict: {report.verdict}",
        *basis_lines(report),
        f"input: {len(inp.gravity_centers)} gravity center(s), {len(inp.noise_documents)} noise document(s), "
        f"conflict {'detected' if inp.conflict.detected else 'none'} (score {fixed(inp.conflict.score)})",
    ]
    for run in report.sampling.runs if report.sampling else []:
        pull = run.center_pull
        top = max(pull.items(), key=lambda kv: kv[1]) if pull else None
        lines.append(
            f"T={run.temperature} n={run.n}: semantic_entropy {fixed(run.semantic_entropy)}, "
            f"first_token_divergence {fixed(run.first_token_divergence)}, "
            f"compliance {fixed(run.compliance_rate)}, truncation {fixed(run.truncation_rate)}"
            + (f", top center {top[0]} {fixed(top[1])}" if top else "")
        )
    findings = [f"{f.severity} {f.stage}/{f.rule}" for f in report.findings if f.severity != "info"]
    if findings:
        lines.append("findings: " + ", ".join(findings))
    return lines


def describe_change(change: "Change") -> str:
    """One line: severity, kind, temperature and message."""
    at = f" (T={change.temperature})" if change.temperature is not None else ""
    return f"[{change.severity}] {change.kind}{at}: {change.message}"


def evidence_json(change: "Change") -> str:
    """The change's values and evidence as JSON; a side without a value (a new case has no
    baseline) is left out rather than shown as null."""
    body = {key: value for key, value in (("baseline", change.baseline), ("current", change.current))
            if value is not None}
    body["evidence"] = change.evidence
    return json.dumps(body, indent=2, ensure_ascii=False, default=str, sort_keys=True)


def main_change(comparison: "CaseComparison") -> "Change | None":
    """The most severe change (the first of its severity), or None."""
    if not comparison.changes:
        return None
    return max(comparison.changes, key=lambda c: SEVERITY_RANK.get(c.severity, 0))


def failure_reason(comparison: "CaseComparison") -> str:
    """Why a case fails the gate: "regression", "verdict" (its own verdict) or both."""
    reasons = [name for name, present in (("regression", bool(comparison.regressions)),
                                          ("verdict", comparison.failing_verdict is not None)) if present]
    return " and ".join(reasons) or "regression"


def render_junit(result: "NightlyResult") -> str:
    """The result as a JUnit XML document (one ``<testcase>`` per case, in run order)."""
    run = result.run
    failing = {c.case_id for c in result.failing()}
    total_time = sum(c.seconds or 0.0 for c in run.cases)
    suites = ET.Element("testsuites", name="diagnose nightly")
    suite = ET.SubElement(suites, "testsuite", name=CLASSNAME, timestamp=clean(run.started),
                          hostname=clean(socket.gethostname()))
    properties = ET.SubElement(suite, "properties")
    for name, value in (("run_id", run.run_id), ("library", run.library), ("seed_offset", run.seed_offset),
                        ("baseline", result.baseline.run_id if result.baseline else "none"),
                        ("fail_on", result.fail_on), ("tags", ",".join(run.tags))):
        ET.SubElement(properties, "property", name=name, value=clean(value))
    failures = 0
    for comparison in result.comparisons:
        record = run.case(comparison.case_id)
        case = ET.SubElement(suite, "testcase", classname=CLASSNAME, name=clean(comparison.case_id),
                             time=f"{(record.seconds or 0.0) if record else 0.0:.3f}")
        if record is not None:
            case.set("file", clean(record.path))
        if comparison.case_id in failing:
            failures += 1
            bad = [c for c in comparison.changes if c.severity in ("warn", "fail")] or comparison.changes
            failure = ET.SubElement(case, "failure", type=comparison.status,
                                    message=clean(f"{failure_reason(comparison)}: "
                                                  + "; ".join(c.message for c in bad))[:1000])
            failure.text = clean("\n\n".join(f"{describe_change(c)}\n{evidence_json(c)}" for c in bad))
        out = [f"status: {comparison.status}", *key_metrics(run.report(comparison.case_id))]
        if record is not None and record.seconds is not None:
            out.append(f"seconds: {record.seconds}" + (" (reused from an earlier attempt)" if record.reused else ""))
        out += ["changes:", *(f"  {describe_change(c)}" for c in comparison.changes)] if comparison.changes else []
        ET.SubElement(case, "system-out").text = clean("\n".join(out))
    for element in (suites, suite):
        element.set("tests", str(len(result.comparisons)))
        element.set("failures", str(failures))
        element.set("errors", "0")
        element.set("time", f"{total_time:.3f}")
    suite.set("skipped", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"



