"""The page's Repairs section (``run --repair``): each candidate's change, diff, verdict
and metrics before/after per temperature. Strings stay raw; the template escapes them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from diagnose.display import fixed, p_value
from diagnose.report import Report


@dataclass(frozen=True, slots=True)
class RepairMetricRow:
    temperature: str
    metric: str
    before: str
    after: str
    p: str


@dataclass(frozen=True, slots=True)
class RepairTestRow:
    metric: str
    role: str
    test: str
    before: str
    after: str
    p_adjusted: str
    outcome: str


@dataclass(frozen=True, slots=True)
class RepairRow:
    id: str
    anchor: str
    verdict: str
    summary: str
    change: str
    """The change as compact JSON."""
    answers: str
    resolved: str
    diff: str
    metrics: list[RepairMetricRow]
    tests: list[RepairTestRow]
    answer: str
    note: str
    new_findings: str
    samples: int


@dataclass(frozen=True, slots=True)
class SkippedRow:
    id: str
    change: str
    samples: int
    reason: str


@dataclass(frozen=True, slots=True)
class RepairsView:
    headline: str
    facts: list[tuple[str, str]]
    repairs: list[RepairRow]
    skipped: list[SkippedRow]


def build_repairs(report: Report) -> RepairsView | None:
    overview = report.repair
    if overview is None:
        return None
    facts = [("budget", f"{overview.spent} / {overview.budget} samples (default {overview.default_budget})"),
             ("tests", f"{overview.tests}, Bonferroni at alpha {overview.alpha:g}"),
             ("batching", overview.batching), ("wall seconds", f"{overview.wall_seconds:.1f}")]
    rows = []
    for i, r in enumerate(report.repairs):
        metrics = [
            RepairMetricRow(
                f"{run.temperature:g}" + (f" → {run.after_temperature:g}" if run.after_temperature != run.temperature else ""),
                name, fixed(run.before.get(name)), fixed(run.after.get(name)), p_value(run.p.get(name)))
            for run in r.runs for name in run.before
        ]
        answer = ""
        if r.answer is not None:
            answer = (f"{r.answer.text} ({r.answer.share:.0%} of a run; center {r.answer.center}"
                      + (f" '{r.answer.label}'" if r.answer.label else "") + f", {r.answer.center_share:.0%} of samples)")
        rows.append(RepairRow(
            id=r.id, anchor=f"repair-{i}", verdict=r.verdict, summary=r.summary,
            change=json.dumps(r.change, ensure_ascii=False), answers=", ".join(r.answers),
            resolved="yes" if r.resolved else "no", diff=r.diff or "(no textual change)",
            metrics=metrics,
            tests=[RepairTestRow(t.metric, t.role, t.test, fixed(t.before), fixed(t.after), p_value(t.p_adjusted),
                                 t.outcome) for t in r.tests],
            answer=answer, note=r.note or "", new_findings=", ".join(r.new_findings), samples=r.samples,
        ))
    skipped = [SkippedRow(s.id, json.dumps(s.change, ensure_ascii=False), s.samples, s.reason)
               for s in report.repairs_skipped]
    return RepairsView(headline=overview.headline, facts=facts, repairs=rows, skipped=skipped)



