"""The repairs as plain text lines for the terminal summary (``diagnose run --repair``).

The summary leads with :func:`headline_lines` (the best verified repair) and ends
with :func:`repair_lines` (every candidate, best first, then the skipped ones).
Both are empty for a report without ``--repair``.
"""

from __future__ import annotations

from diagnose.report import Report


def headline_lines(report: Report) -> list[str]:
    return [f"repair: {report.repair.headline}"] if report.repair is not None else []


def repair_lines(report: Report) -> list[str]:
    if report.repair is None:
        return []
    overview = report.repair
    lines = [f"repairs (best first; {overview.spent}/{overview.budget} samples, "
             f"{overview.tests} tests, Bonferroni alpha {overview.alpha:g}):"]
    for repair in report.repairs:
        lines.append(f"  {repair.verdict:<9} {repair.id}: {repair.summary.split(': ', 1)[-1]}")
        if repair.answer is not None:
            answer = " ".join(repair.answer.text.split())
            lines.append(f"            answer then: {answer[:80]!r} ({repair.answer.share:.0%} of a run; "
                         f"center {repair.answer.center} {repair.answer.label!r})")
        if repair.new_findings:
            lines.append(f"            new findings: {', '.join(repair.new_findings)}")
    for skipped in report.repairs_skipped:
        lines.append(f"  skipped   {skipped.id}: {skipped.reason}")
    if not report.repairs and not report.repairs_skipped:
        lines.append("  (no finding calls for a change)")
    return lines
