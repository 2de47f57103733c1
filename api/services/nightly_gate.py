"""Finishing a stored nightly run: compare it with its baseline run once every case is finished.

The stored rows are turned into the CLI's :class:`~diagnose.nightly.runner.RunRecord`
(reports inline) so the gate is exactly :func:`diagnose.nightly.compare_runs`: an
errored or cancelled case fails, a case the baseline lacks is an info note, a case
whose content changed is compared with a note. :class:`RunFinalizer` is the
worker's ``on_finished`` hook, so a run is finished without anybody polling.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from sqlalchemy.orm import Session

from api.db.models import PENDING, NightlyItem, NightlyRun, iso_utc
from api.db.nightly import close_run, run_items, run_of, run_progress, run_with_items
from api.db.session import Database
from diagnose.nightly import CaseRecord, NightlyResult, RunRecord, compare_runs
from diagnose.nightly.compare import CaseComparison, Change
from diagnose.nightly.settings import GateSettings
from diagnose.report import Report, read_report

log = logging.getLogger("rag_diagnose.nightly")

LIBRARY = "service:/v1/library"
"""What the run records name as their library (JUnit's ``library`` property)."""


def run_record(run: NightlyRun, items: list[NightlyItem]) -> RunRecord:
    """The run as the CLI's record: one case per item, done ones with their report inline."""
    cases: list[CaseRecord] = []
    reports: dict[str, Report] = {}
    for item in items:
        d, case = item.diagnosis, item.library_case
        status = "done" if d.status == "done" and d.report is not None else (
            "pending" if d.status in PENDING else "error")
        error = None
        if status == "error":
            detail = (d.error or {}).get("detail") or (d.error or {}).get("title") or "no report"
            error = f"{d.status}: {detail}"
        seconds = (d.finished_at - d.started_at).total_seconds() if d.finished_at and d.started_at else None
        cases.append(CaseRecord(case.case_id, f"/v1/diagnoses/{d.id}", case.content_hash, status,
                                None if seconds is None else round(seconds, 3), d.verdict, error))
        if status == "done":
            reports[case.case_id] = read_report(d.report)
    return RunRecord(run_id=run.id, run_dir=None, library=LIBRARY, seed_offset=run.seed_offset,
                     started=iso_utc(run.created_at) or "", finished=iso_utc(run.finished_at), tags=list(run.tags),
                     cases=cases, inline_reports=reports)


def finalize(db: Database, run_id: str, settings: GateSettings | None = None) -> bool:
    """Compare and close the run if every case is finished; True only for the one call that closed it.

    The comparison runs outside any transaction; the close is a conditional update
    (``status = 'running'``), so two workers finishing the last two cases at once
    both may compare, but only one stores the summary.
    """
    with db.session() as session:
        run = session.get(NightlyRun, run_id)
        if run is None or run.status != "running" or _unfinished(session, run_id):
            return False
        items = run_items(session, run_id)
        current = run_record(run, items)
        baseline, baseline_items = _baseline(session, run)
        fail_on = run.fail_on
    comparisons = compare_runs(baseline, current, settings)  # the CPU-heavy part, outside any transaction
    result = NightlyResult(current, comparisons, baseline, fail_on)  # type: ignore[arg-type]
    ids = {i.library_case.case_id: i.diagnosis_id for i in items}
    base_ids = {i.library_case.case_id: i.diagnosis_id for i in baseline_items}
    summary = _plain({
        "counts": result.counts(), "fail_on": fail_on, "gate": result.gate(),
        "baseline_id": baseline.run_id if baseline else None,
        "cases": [{**c.to_dict(), "diagnosis_id": ids.get(c.case_id),
                   "baseline_diagnosis_id": base_ids.get(c.case_id)} for c in result.comparisons],
    })
    with db.session() as session:
        closed = close_run(session, run_id, summary)
    if closed:
        log.info("nightly run %s done: gate %s %s", run_id, summary["gate"], summary["counts"])
    return closed


def stored_result(session: Session, run: NightlyRun) -> NightlyResult:
    """A done run's stored summary as the CLI's result, for the JUnit and Markdown renderers."""
    comparisons = [CaseComparison(c["case_id"], [Change(**change) for change in c["changes"]])
                   for c in (run.summary or {}).get("cases", [])]
    baseline, _ = _baseline(session, run)
    wall = (run.finished_at - run.created_at).total_seconds() if run.finished_at else 0.0
    return NightlyResult(run_record(run, run_items(session, run.id)), comparisons, baseline,
                         run.fail_on, round(wall, 3))  # type: ignore[arg-type]


class RunFinalizer:
    """``DiagnosisRunner(on_finished=RunFinalizer(db))``: close the nightly run a diagnosis belongs to."""

    def __init__(self, db: Database, settings: GateSettings | None = None) -> None:
        self.db, self.settings = db, settings

    def __call__(self, diagnosis_id: str) -> bool:
        with self.db.session() as session:
            run_id = run_of(session, diagnosis_id)
        return run_id is not None and finalize(self.db, run_id, self.settings)


def _unfinished(session: Session, run_id: str) -> bool:
    finished, total = run_progress(session, [run_id])[run_id]
    return finished < total


def _baseline(session: Session, run: NightlyRun) -> tuple[RunRecord | None, list[NightlyItem]]:
    found = run_with_items(session, run.baseline_id) if run.baseline_id else None
    if found is None:
        return None, []
    base, items = found
    return run_record(base, items), items


def _plain(value: Any) -> Any:
    """JSON that both databases store: builtins only, non-finite floats as null (JSONB refuses NaN)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
