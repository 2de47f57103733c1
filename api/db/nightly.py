"""Reads and writes of nightly runs (``nightly_runs``) and their items (``nightly_items``),
for the nightly service, its gate and the pages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, contains_eager, selectinload

from api.db.models import PENDING, Diagnosis, LibraryCase, NightlyItem, NightlyRun, utcnow


def recent_runs(session: Session, limit: int = 50, status: str | None = None,
                scope: int | None = None) -> list[NightlyRun]:
    """The newest runs first (ties by id), of ``status`` and started by ``scope`` when given."""
    query = select(NightlyRun).order_by(NightlyRun.created_at.desc(), NightlyRun.id).limit(limit)
    if scope is not None:
        query = query.where(NightlyRun.api_key_id == scope)
    if status:
        query = query.where(NightlyRun.status == status)
    return list(session.scalars(query))


def runs_by_id(session: Session, run_ids: list[str]) -> dict[str, NightlyRun]:
    return {run.id: run for run in session.scalars(select(NightlyRun).where(NightlyRun.id.in_(run_ids)))}


def recent_summaries(session: Session, limit: int) -> list[tuple[str, dict[str, Any]]]:
    """``(run id, summary)`` of the newest ``limit`` runs that have a gate summary, newest first."""
    return [(run_id, summary) for run_id, summary in session.execute(
        select(NightlyRun.id, NightlyRun.summary).where(NightlyRun.summary.is_not(None))
        .order_by(NightlyRun.created_at.desc()).limit(limit))]


def latest_done_run(session: Session, tags: list[str], owner: int | None = None) -> str | None:
    """The id of ``owner``'s newest done run over exactly ``tags`` (sorted), or None."""
    mine = NightlyRun.api_key_id.is_(None) if owner is None else NightlyRun.api_key_id == owner
    done = session.execute(select(NightlyRun.id, NightlyRun.tags).where(NightlyRun.status == "done", mine)
                           .order_by(NightlyRun.created_at.desc(), NightlyRun.id))
    return next((run_id for run_id, run_tags in done if sorted(run_tags) == tags), None)


def run_of(session: Session, diagnosis_id: str) -> str | None:
    """The id of the nightly run a diagnosis belongs to, or None."""
    return session.scalar(select(NightlyItem.run_id).where(NightlyItem.diagnosis_id == diagnosis_id))


def run_items(session: Session, run_id: str, reports: bool = True) -> list[NightlyItem]:
    """The run's items by case id, each with its library case's id and content hash and its
    diagnosis loaded (with its report unless ``reports`` is False; the cases' bodies are left out)."""
    diagnosis = selectinload(NightlyItem.diagnosis).defer(Diagnosis.case)
    if not reports:
        diagnosis = diagnosis.defer(Diagnosis.report)
    return list(session.scalars(
        select(NightlyItem).join(NightlyItem.library_case).where(NightlyItem.run_id == run_id)
        .order_by(LibraryCase.case_id, NightlyItem.id)
        .options(contains_eager(NightlyItem.library_case).load_only(LibraryCase.case_id, LibraryCase.content_hash),
                 diagnosis)))


def run_with_items(session: Session, run_id: str, reports: bool = True
                   ) -> tuple[NightlyRun, list[NightlyItem]] | None:
    """The run and its items (:func:`run_items`), or None when there is no such run."""
    run = session.get(NightlyRun, run_id)
    return None if run is None else (run, run_items(session, run_id, reports))


def run_item_statuses(session: Session, run_ids: list[str]) -> dict[str, dict[str, int]]:
    """``run id → {diagnosis status: count}`` over the nightly runs' items, in one grouped query."""
    if not run_ids:
        return {}
    rows = session.execute(
        select(NightlyItem.run_id, Diagnosis.status, func.count())
        .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
        .where(NightlyItem.run_id.in_(run_ids))
        .group_by(NightlyItem.run_id, Diagnosis.status))
    counts: dict[str, dict[str, int]] = {}
    for run_id, status, count in rows:
        counts.setdefault(run_id, {})[status] = count
    return counts


def run_progress(session: Session, run_ids: list[str]) -> dict[str, tuple[int, int]]:
    """``run id → (finished, total)`` diagnoses, for every id asked for (an unknown one: ``(0, 0)``)."""
    statuses = run_item_statuses(session, run_ids)
    return {run_id: (sum(n for status, n in statuses.get(run_id, {}).items() if status not in PENDING),
                     sum(statuses.get(run_id, {}).values()))
            for run_id in run_ids}


def close_run(session: Session, run_id: str, summary: dict[str, Any]) -> bool:
    """Mark a running run done with its gate summary; True only for the one call that closed it."""
    return session.execute(
        update(NightlyRun).where(NightlyRun.id == run_id, NightlyRun.status == "running")
        .values(status="done", summary=summary, finished_at=utcnow())).rowcount == 1
