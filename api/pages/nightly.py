"""View models of the nightly pages: the runs with their gate trend, and one run's cases.

A finished run's ``summary`` (written by the nightly service) is
``{counts, fail_on, gate, cases: [{case_id, status, changes, diagnosis_id,
baseline_diagnosis_id}]}`` with each change as ``diagnose.nightly.compare.Change``
(kind, severity, temperature, baseline, current, evidence, message). While a
run is unfinished its summary is None and progress comes from its diagnoses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from api.db.models import PENDING
from api.pages import format as fmt
from api.pages.charts import TrendBar, gate_trend
from api.pages.diagnoses import page_href
from api.pages.queries import RunDetail, RunItem, RunSummary

TREND_RUNS = 30
REGRESSION = ("warn", "fail")
GATE_STATES = ("pass", "warn", "fail")
REFRESH_S = 10


@dataclass(frozen=True, slots=True)
class RunRow:
    id: str
    short_id: str
    href: str
    created: str
    finished: str
    status: str
    gate: str | None
    counts: list[tuple[str, str]]
    """(state, count) for pass, warn and fail; the count is "—" before the gate ran."""
    tags: str
    fail_on: str
    baseline_href: str | None
    baseline_short: str
    progress: str
    """``done/total`` diagnoses of the run."""
    finished_items: int
    total_items: int


@dataclass(frozen=True, slots=True)
class ChangeView:
    kind: str
    severity: str
    temperature: str
    baseline: str
    current: str
    """Both values in brief: a finding by its rule, structures clipped (whole in ``details``)."""
    message: str
    details: list[fmt.KeyValue]
    """The evidence, then the baseline and current values when they are structures."""


@dataclass(frozen=True, slots=True)
class CaseGate:
    anchor: str
    case_id: str
    status: str
    verdict: str | None
    diagnosis_href: str | None
    compare_href: str | None
    """The baseline and current diagnoses side by side, when both exist."""
    regressions: list[ChangeView]
    notes: list[ChangeView]
    """Informational changes (severity info)."""


@dataclass(frozen=True, slots=True)
class ItemRow:
    case_id: str
    href: str
    status: str
    verdict: str | None


@dataclass(frozen=True, slots=True)
class RunPage:
    run: RunRow
    refresh_s: int | None
    cases: list[CaseGate]
    """Empty until the run is finished."""
    regressed: list[CaseGate]
    """The cases with at least one warn or fail change."""
    items: list[ItemRow]


def run_row(run: RunSummary) -> RunRow:
    summary = run.summary or {}
    counts = summary.get("counts") or {}
    total = sum(run.item_statuses.values())
    finished = sum(n for status, n in run.item_statuses.items() if status not in PENDING)
    return RunRow(
        id=run.id, short_id=fmt.short_id(run.id), href=f"/nightly/{run.id}", created=fmt.when(run.created_at),
        finished=fmt.when(run.finished_at), status=run.status, gate=summary.get("gate"),
        counts=[(state, fmt.number(counts.get(state)) if counts else fmt.DASH) for state in GATE_STATES],
        tags=", ".join(run.tags) or "all cases", fail_on=run.fail_on,
        baseline_href=f"/nightly/{run.baseline_id}" if run.baseline_id else None,
        baseline_short=fmt.short_id(run.baseline_id), progress=f"{finished}/{total}",
        finished_items=finished, total_items=total,
    )


def trend(runs: list[RunSummary]) -> Markup:
    """Pass/warn/fail counts of the finished runs, oldest left (``runs`` come newest first)."""
    finished = [r for r in runs if r.summary][:TREND_RUNS][::-1]
    bars = []
    for r in finished:
        counts = {k: int(v) for k, v in (r.summary.get("counts") or {}).items()}
        title = (f"{fmt.when(r.created_at)} · gate {r.summary.get('gate')} · "
                 + ", ".join(f"{k} {counts.get(k, 0)}" for k in GATE_STATES))
        bars.append(TrendBar(fmt.day(r.created_at), counts, title, f"/nightly/{r.id}"))
    return gate_trend(bars)


def run_page(detail: RunDetail) -> RunPage:
    run = detail.run
    items = {item.case_id: item for item in detail.items}
    cases = [case_gate(i, case, items.get(str(case.get("case_id"))))
             for i, case in enumerate((run.summary or {}).get("cases") or [])]
    return RunPage(
        run=run_row(run),
        refresh_s=None if run.summary is not None or run.status != "running" else REFRESH_S,
        cases=cases,
        regressed=[c for c in cases if c.regressions],
        items=[ItemRow(i.case_id, page_href(i.diagnosis_id), i.status, i.verdict) for i in detail.items],
    )


def case_gate(index: int, case: Mapping[str, Any], item: RunItem | None) -> CaseGate:
    current, baseline = case.get("diagnosis_id"), case.get("baseline_diagnosis_id")
    changes = [change_view(c) for c in case.get("changes") or []]
    return CaseGate(
        anchor=f"case-{index}",
        case_id=str(case.get("case_id")),
        status=str(case.get("status")),
        verdict=item.verdict if item else None,
        diagnosis_href=page_href(current) if current else None,
        compare_href=f"/compare/{baseline}/{current}" if baseline and current else None,
        regressions=[c for c in changes if c.severity in REGRESSION],
        notes=[c for c in changes if c.severity not in REGRESSION],
    )


def change_view(change: Mapping[str, Any]) -> ChangeView:
    temperature = change.get("temperature")
    return ChangeView(
        kind=str(change.get("kind")),
        severity=str(change.get("severity")),
        temperature=f"{temperature:g}" if isinstance(temperature, (int, float)) else "all",
        baseline=fmt.brief(change.get("baseline")),
        current=fmt.brief(change.get("current")),
        message=str(change.get("message") or ""),
        details=fmt.key_values({**(change.get("evidence") or {}), **{
            side: change[side] for side in ("baseline", "current") if isinstance(change.get(side), (dict, list))}}),
    )
