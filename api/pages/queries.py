"""What the pages read from the database, as plain records (no ORM row leaves this module).

Reads only: diagnoses for the index, diagnosis and compare pages; library cases
with the verdicts of their nightly diagnoses; nightly runs with their items.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from api.db.models import Diagnosis, LibraryCase, NightlyItem, NightlyRun
from api.db.session import Database
from api.db.store import run_item_statuses

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


_SUMMARY_COLUMNS = (Diagnosis.id, Diagnosis.case_id, Diagnosis.mode, Diagnosis.status, Diagnosis.verdict,
                    Diagnosis.progress, Diagnosis.created_at, Diagnosis.finished_at)


class PageQueries:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- diagnoses --------------------------------------------------------------
    def recent(self, limit: int = 100, case_id: str | None = None) -> list[DiagnosisSummary]:
        query = select(*_SUMMARY_COLUMNS).order_by(Diagnosis.created_at.desc(), Diagnosis.id).limit(limit)
        if case_id:
            query = query.where(Diagnosis.case_id == case_id)
        with self.db.session() as session:
            return [DiagnosisSummary(*row) for row in session.execute(query)]

    def diagnosis(self, diagnosis_id: str) -> DiagnosisDetail | None:
        with self.db.session() as session:
            row = session.get(Diagnosis, diagnosis_id)
            if row is None:
                return None
            summary = DiagnosisSummary(row.id, row.case_id, row.mode, row.status, row.verdict, row.progress,
                                       row.created_at, row.finished_at)
            return DiagnosisDetail(summary, row.case, row.report, row.error)

    def previous_done(self, summary: DiagnosisSummary) -> str | None:
        """The newest finished diagnosis of the same case created before this one."""
        query = (select(Diagnosis.id)
                 .where(Diagnosis.case_id == summary.case_id, Diagnosis.status == "done",
                        Diagnosis.created_at < summary.created_at, Diagnosis.id != summary.id)
                 .order_by(Diagnosis.created_at.desc()).limit(1))
        with self.db.session() as session:
            return session.scalar(query)

    # -- library ----------------------------------------------------------------
    def library(self) -> list[LibraryEntry]:
        with self.db.session() as session:
            cases = session.scalars(
                select(LibraryCase).where(LibraryCase.current.is_(True)).order_by(LibraryCase.case_id)).all()
            ids = [c.case_id for c in cases]
            history = self._history(session, ids)
            gates = self._last_gates(session, set(ids))
            return [LibraryEntry(c.case_id, c.content_hash, [str(t) for t in c.tags], c.case, c.created_at,
                                 history.get(c.case_id, []), gates.get(c.case_id))
                    for c in cases]

    @staticmethod
    def _history(session, case_ids: list[str]) -> dict[str, list[HistoryPoint]]:
        """Every version's nightly diagnoses count: a case's trend survives an edit of the case."""
        if not case_ids:
            return {}
        rows = session.execute(
            select(LibraryCase.case_id, NightlyRun.id, NightlyRun.created_at, Diagnosis.id, Diagnosis.status,
                   Diagnosis.verdict)
            .join(NightlyItem, NightlyItem.library_case_id == LibraryCase.id)
            .join(NightlyRun, NightlyRun.id == NightlyItem.run_id)
            .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
            .where(LibraryCase.case_id.in_(case_ids))
            .order_by(NightlyRun.created_at, NightlyRun.id))
        history: dict[str, list[HistoryPoint]] = {}
        for case_id, *point in rows:
            history.setdefault(case_id, []).append(HistoryPoint(*point))
        return {case_id: points[-HISTORY:] for case_id, points in history.items()}

    @staticmethod
    def _last_gates(session, case_ids: set[str]) -> dict[str, GatePoint]:
        runs = session.execute(
            select(NightlyRun.id, NightlyRun.summary).where(NightlyRun.summary.is_not(None))
            .order_by(NightlyRun.created_at.desc()).limit(GATE_RUNS))
        gates: dict[str, GatePoint] = {}
        for run_id, summary in runs:
            for case in (summary or {}).get("cases") or []:
                case_id = case.get("case_id")
                if case_id in case_ids and case_id not in gates:
                    gates[case_id] = GatePoint(run_id, str(case.get("status")))
        return gates

    # -- nightly runs -----------------------------------------------------------
    def runs(self, limit: int = 50) -> list[RunSummary]:
        with self.db.session() as session:
            runs = session.scalars(
                select(NightlyRun).order_by(NightlyRun.created_at.desc(), NightlyRun.id).limit(limit)).all()
            counts = run_item_statuses(session, [r.id for r in runs])
            return [_run_summary(r, counts.get(r.id, {})) for r in runs]

    def run(self, run_id: str) -> RunDetail | None:
        with self.db.session() as session:
            run = session.get(NightlyRun, run_id)
            if run is None:
                return None
            rows = session.execute(
                select(LibraryCase.case_id, Diagnosis.id, Diagnosis.status, Diagnosis.verdict)
                .select_from(NightlyItem)
                .join(LibraryCase, LibraryCase.id == NightlyItem.library_case_id)
                .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
                .where(NightlyItem.run_id == run_id)
                .order_by(LibraryCase.case_id))
            items = [RunItem(*row) for row in rows]
            statuses = dict(Counter(item.status for item in items))
            return RunDetail(_run_summary(run, statuses), items)


def _run_summary(run: NightlyRun, statuses: dict[str, int]) -> RunSummary:
    return RunSummary(run.id, run.status, [str(t) for t in run.tags], run.fail_on, run.baseline_id, run.summary,
                      run.created_at, run.finished_at, statuses)
