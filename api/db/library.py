"""Reads of the stored prompt library (``library_cases``) for its service and pages, and the lock
its pushes take turns on.

A case id has one row per version (content hash); ``current`` marks the one a
nightly run diagnoses. Nightly history is read per case id, across versions.
"""

from __future__ import annotations

from typing import Any, Sequence

from sqlalchemy import Row, func, select
from sqlalchemy.orm import Session

from api.db.models import Diagnosis, LibraryCase, NightlyItem, NightlyRun
from api.db.store import advisory_xact_lock, owned

PUSH_LOCK = 0x6C6962
"""PostgreSQL advisory lock key ('lib') held by a push, so that one version per case stays current."""


def lock_pushes(session: Session) -> None:
    """Hold until commit, across API processes, the right to change which versions are current."""
    advisory_xact_lock(session, PUSH_LOCK)


def of_owner(owner: int | None):
    """The condition "pushed by ``owner``" (None: by ``diagnose library push`` or a keyless service)."""
    return LibraryCase.api_key_id.is_(None) if owner is None else LibraryCase.api_key_id == owner


def current_cases(session: Session, tags: Sequence[str] = (), scope: int | None = None) -> list[LibraryCase]:
    """The current version of every case carrying all of ``tags`` that ``scope`` may read (None:
    every owner's), by case id."""
    rows = session.scalars(owned(
        select(LibraryCase).where(LibraryCase.current.is_(True)).order_by(LibraryCase.case_id, LibraryCase.id),
        LibraryCase.api_key_id, scope)).all()
    wanted = set(tags)
    return [r for r in rows if wanted.issubset(r.tags)]  # tags are JSON: filtered here, on both databases


def library_of(session: Session, owner: int | None, tags: Sequence[str] = ()) -> list[LibraryCase]:
    """``owner``'s own library (what its nightly run diagnoses): its current cases carrying all of ``tags``."""
    rows = session.scalars(select(LibraryCase).where(LibraryCase.current.is_(True), of_owner(owner))
                           .order_by(LibraryCase.case_id)).all()
    wanted = set(tags)
    return [r for r in rows if wanted.issubset(r.tags)]


def current_case_ids(session: Session, owner: int | None = None) -> set[str]:
    """The ids of ``owner``'s cases that have a current version (every case id of its library)."""
    return set(session.scalars(select(LibraryCase.case_id).where(LibraryCase.current.is_(True), of_owner(owner))))


def case_versions(session: Session, case_id: str, owner: int | None = None) -> list[LibraryCase]:
    """Every stored version of ``owner``'s ``case_id``, oldest first (version ``n`` is index ``n - 1``)."""
    return list(session.scalars(
        select(LibraryCase).where(LibraryCase.case_id == case_id, of_owner(owner)).order_by(LibraryCase.id)))


def referenced_versions(session: Session, library_case_ids: list[int]) -> set[int]:
    """Which of these library case versions a nightly run points at (those are never deleted)."""
    if not library_case_ids:
        return set()
    return set(session.scalars(select(NightlyItem.library_case_id).distinct()
                               .where(NightlyItem.library_case_id.in_(library_case_ids))))


def version_counts(session: Session) -> dict[tuple[int | None, str], int]:
    """``(owner, case id) → number of stored versions``."""
    return {(owner, case_id): n for owner, case_id, n in session.execute(
        select(LibraryCase.api_key_id, LibraryCase.case_id, func.count())
        .group_by(LibraryCase.api_key_id, LibraryCase.case_id))}


def latest_done_results(session: Session, library_case_ids: list[int]) -> dict[int, Row]:
    """Per library case version: its newest finished nightly diagnosis (newest by finish time),
    as a row of ``library_case_id, run_id, diagnosis_id, verdict, finished_at``."""
    if not library_case_ids:
        return {}
    rows = session.execute(
        select(NightlyItem.library_case_id, NightlyItem.run_id, Diagnosis.id.label("diagnosis_id"),
               Diagnosis.verdict, Diagnosis.finished_at)
        .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
        .where(NightlyItem.library_case_id.in_(library_case_ids), Diagnosis.status == "done")
        .order_by(Diagnosis.finished_at, Diagnosis.id))
    return {row.library_case_id: row for row in rows}


def nightly_history(session: Session, case_ids: list[str], last: int,
                    scope: int | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Per case id: its ``last`` nightly diagnoses, oldest run first, whatever their status, each
    ``(run_id, run_created_at, diagnosis_id, status, verdict)``.

    Every version's diagnoses count: a case's trend survives an edit of the case.
    """
    if not case_ids:
        return {}
    rows = session.execute(
        select(LibraryCase.case_id, NightlyRun.id, NightlyRun.created_at, Diagnosis.id, Diagnosis.status,
               Diagnosis.verdict)
        .join(NightlyItem, NightlyItem.library_case_id == LibraryCase.id)
        .join(NightlyRun, NightlyRun.id == NightlyItem.run_id)
        .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
        .where(LibraryCase.case_id.in_(case_ids), *([] if scope is None else [LibraryCase.api_key_id == scope]))
        .order_by(NightlyRun.created_at, NightlyRun.id))
    history: dict[str, list[tuple[Any, ...]]] = {}
    for case_id, *point in rows:
        history.setdefault(case_id, []).append(tuple(point))
    return {case_id: points[-last:] for case_id, points in history.items()}
