"""What the pages read from the database, as plain records (no ORM row leaves this module).

Reads only, through the queries of :mod:`api.db` that the services use too:
diagnoses for the index, diagnosis and compare pages; library cases with the
verdicts of their nightly diagnoses; nightly runs with their items.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from api.db.library import current_cases, nightly_history
from api.db.models import Diagnosis, NightlyRun
from api.db.nightly import recent_runs, recent_summaries, run_item_statuses, run_with_items
from api.db.session import Database
from api.db.store import previous_done, recent_diagnoses
from api.services.diagnoses import visible

HISTORY = 20
"""Nightly diagnoses kept per library case for its verdict strip (newest last)."""
GATE_RUNS = 20
"""Finished runs searched for each case's latest gate status."""


@dataclass(frozen=True, slots=True)
class DiagnosisSummary:
    id: str
    case_id: str
    mode: str
    status: str
    verdict: str | None
    progress: dict[str, Any] | None
    created_at: dt.datetime
    finished_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class DiagnosisDetail:
    summary: DiagnosisSummary
    case: dict[str, Any]
    report: dict[str, Any] | None
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One nightly diagnosis of a library case."""

    run_id: str
    run_created_at: dt.datetime
    diagnosis_id: str
    status: str
    verdict: str | None


@dataclass(frozen=True, slots=True)
class GatePoint:
    run_id: str
    status: str
    """The gate's status for the case in that run: pass, warn or fail."""


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    case_id: str
    content_hash: str
    tags: list[str]
    case: dict[str, Any]
    created_at: dt.datetime
    history: list[HistoryPoint]
    """Oldest first, at most :data:`HISTORY`."""
    last_gate: GatePoint | None


@dataclass(frozen=True, slots=True)
class RunItem:
    case_id: str
    diagnosis_id: str
    status: str
    verdict: str | None


@dataclass(frozen=True, slots=True)
class RunSummary:
    id: str
    status: str
    tags: list[str]
    fail_on: str
    baseline_id: str | None
    summary: dict[str, Any] | None
    created_at: dt.datetime
    finished_at: dt.datetime | None
    item_statuses: dict[str, int] = field(default_factory=dict)
    """How many of the run's diagnoses are in each status."""


@dataclass(frozen=True, slots=True)
class RunDetail:
    run: RunSummary
    items: list[RunItem]


class PageQueries:
    """The pages' reads: one session per call, through :mod:`api.db` (no SQL here).

    ``scope`` is the key whose work the reader may see (None: everyone's, an admin or a
    keyless service); another key's diagnosis or run reads as missing."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- diagnoses --------------------------------------------------------------
    def recent(self, limit: int = 100, case_id: str | None = None, scope: int | None = None) -> list[DiagnosisSummary]:
        with self.db.session() as session:
            return [_summary(row) for row in recent_diagnoses(session, limit, case_id=case_id, scope=scope)]

    def diagnosis(self, diagnosis_id: str, scope: int | None = None) -> DiagnosisDetail | None:
        with self.db.session() as session:
            row = session.get(Diagnosis, diagnosis_id)
            if row is None or not visible(row.api_key_id, scope):
                return None
            return DiagnosisDetail(_summary(row), row.case, row.report, row.error)

    def previous_done(self, summary: DiagnosisSummary, scope: int | None = None) -> str | None:
        """The newest finished diagnosis of the same case created before this one."""
        with self.db.session() as session:
            return previous_done(session, summary.case_id, summary.created_at, summary.id, scope)

    # -- library ----------------------------------------------------------------
    def library(self, scope: int | None = None) -> list[LibraryEntry]:
        with self.db.session() as session:
            cases = current_cases(session, scope=scope)
            history = nightly_history(session, [c.case_id for c in cases], HISTORY, scope)
            gates = _last_gates(recent_summaries(session, GATE_RUNS), {c.case_id for c in cases})
            return [LibraryEntry(c.case_id, c.content_hash, [str(t) for t in c.tags], c.case, c.created_at,
                                 [HistoryPoint(*point) for point in history.get(c.case_id, [])],
                                 gates.get(c.case_id))
                    for c in cases]

    # -- nightly runs -----------------------------------------------------------
    def runs(self, limit: int = 50, scope: int | None = None) -> list[RunSummary]:
        with self.db.session() as session:
            runs = recent_runs(session, limit, scope=scope)
            counts = run_item_statuses(session, [r.id for r in runs])
            return [_run_summary(r, counts.get(r.id, {})) for r in runs]

    def run(self, run_id: str, scope: int | None = None) -> RunDetail | None:
        with self.db.session() as session:
            found = run_with_items(session, run_id, reports=False)
            if found is None or not visible(found[0].api_key_id, scope):
                return None
            run, rows = found
            items = [RunItem(i.library_case.case_id, i.diagnosis_id, i.diagnosis.status, i.diagnosis.verdict)
                     for i in rows]
            return RunDetail(_run_summary(run, dict(Counter(item.status for item in items))), items)


def _summary(row: Diagnosis) -> DiagnosisSummary:
    return DiagnosisSummary(row.id, row.case_id, row.mode, row.status, row.verdict, row.progress,
                            row.created_at, row.finished_at)


def _last_gates(summaries: list[tuple[str, dict[str, Any]]], case_ids: set[str]) -> dict[str, GatePoint]:
    """Each case's status in the newest of these (newest first) run summaries that lists it."""
    gates: dict[str, GatePoint] = {}
    for run_id, summary in summaries:
        for case in (summary or {}).get("cases") or []:
            case_id = case.get("case_id")
            if case_id in case_ids and case_id not in gates:
                gates[case_id] = GatePoint(run_id, str(case.get("status")))
    return gates


def _run_summary(run: NightlyRun, statuses: dict[str, int]) -> RunSummary:
    return RunSummary(run.id, run.status, [str(t) for t in run.tags], run.fail_on, run.baseline_id, run.summary,
                      run.created_at, run.finished_at, statuses)
