"""A Markdown summary of a nightly run, short enough for a pull-request comment.

Case ids, messages and evidence come from case files and model output, so they
are untrusted: table cells escape Markdown and HTML (``|`` and backticks
included, and ``@`` so nobody is mentioned); evidence sits in code fences longer
than any backtick run inside it. The whole text stays under GitHub's comment limit.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from diagnose.nightly.junit import describe_change, evidence_json, main_change

if TYPE_CHECKING:
    from diagnose.nightly import NightlyResult
    from diagnose.nightly.compare import CaseComparison

#: GitHub refuses comments over 65,536 characters; stay well below.
MAX_CHARS = 60_000
MAX_CELL = 140
MAX_EVIDENCE = 1_500
MAX_DETAILED = 25
_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌"}
_ORDER = {"fail": 0, "warn": 1, "pass": 2}
_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")


def escape(text: Any, limit: int = MAX_CELL) -> str:
    """Untrusted text as inert inline Markdown on one line (table-cell safe)."""
    value = " ".join(str(text).split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    value = _SPECIAL.sub(r"\\\1", value)
    return value.replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")


def fenced(text: str, limit: int = MAX_EVIDENCE) -> str:
    """``text`` in a code fence that no backtick run inside it can close."""
    if len(text) > limit:
        text = text[:limit] + "\n… (truncated)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def render_markdown(result: "NightlyResult") -> str:
    """Headline, one table row per case (regressions first), then details per regression."""
    run, counts = result.run, result.counts()
    gate = result.gate()
    headline = {"fail": "❌ gate failed", "warn": "⚠️ gate warn", "pass": "✅ gate passed"}[gate]
    lines = [
        f"## diagnose nightly: {headline}",
        "",
        *([f"{result.gate_line()}.", ""] if gate != "pass" else []),
        f"{len(result.comparisons)} cases: {counts['pass']} pass, {counts['warn']} warn, "
        f"{counts['fail']} fail (fail on: {result.fail_on}).",
        f"Run {escape(run.run_id)} against baseline "
        f"{escape(result.baseline.run_id) if result.baseline else '(none: every case is new)'}; "
        f"seed offset {run.seed_offset}; {_timing(result)}.",
        "",
        "| Case | Status | Verdict | Main change |",
        "|---|---|---|---|",
    ]
    ordered = sorted(result.comparisons, key=lambda c: _ORDER.get(c.status, 3))
    for comparison in ordered:
        change = main_change(comparison)
        lines.append(
            f"| {escape(comparison.case_id)} | {_ICON.get(comparison.status, '')} {comparison.status} "
            f"| {_verdict(result, comparison.case_id)} | {escape(change.message) if change else '—'} |"
        )
    regressions = [c for c in ordered if c.status != "pass"]
    if regressions:
        lines += ["", "### Details"]
    for comparison in regressions[:MAX_DETAILED]:
        lines += ["", *_details(comparison)]
    if len(regressions) > MAX_DETAILED:
        lines += ["", f"… and {len(regressions) - MAX_DETAILED} more; see the JUnit report."]
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:
        cut = text.rfind("\n<details>", 0, MAX_CHARS - 200)
        text = text[: cut if cut > 0 else MAX_CHARS - 200] + "\n\n… (truncated; see the JUnit report)\n"
    return text


def _details(comparison: "CaseComparison") -> list[str]:
    name = html.escape(" ".join(comparison.case_id.split())[:MAX_CELL]).replace("@", "&#64;")
    out = [f"<details><summary>{_ICON.get(comparison.status, '')} {name}: {comparison.status}</summary>", ""]
    for change in comparison.changes:
        if change.severity == "info":
            out.append(f"- {escape(describe_change(change), 300)}")
            continue
        out += [f"- {escape(describe_change(change), 300)}", "", fenced(evidence_json(change)), ""]
    return [*out, "", "</details>"]


def _verdict(result: "NightlyResult", case_id: str) -> str:
    current = result.run.case(case_id)
    now = current.verdict if current and current.verdict else (current.status if current else "?")
    before = result.baseline.case(case_id) if result.baseline else None
    report = result.run.report(case_id)
    deciding = report.basis.deciding if report is not None and report.basis is not None else None
    set_by = f" (set by {escape(deciding)})" if deciding else ""
    if before is not None and before.verdict and before.verdict != now:
        return f"{escape(before.verdict)} → {escape(now)}{set_by}"
    return escape(now) + set_by


def _timing(result: "NightlyResult") -> str:
    seconds = result.run.diagnosed_seconds
    per_case = f"{sum(seconds) / len(seconds):.1f} s per diagnosed case" if seconds else "no case diagnosed"
    reused = sum(1 for c in result.run.cases if c.reused)
    return f"{per_case}, {result.wall_seconds:.0f} s in all" + (f", {reused} reused on resume" if reused else "")
