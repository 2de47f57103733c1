"""Reads and writes of diagnoses, shared by the API, the workers, the inline path and the pages.

The library's and the nightly runs' are in :mod:`api.db.library` and :mod:`api.db.nightly`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, defer

from api.db.leases import LeaseHeld, claimable, fair_order, lease_is_live, new_token
from api.db.models import PENDING, Diagnosis, FindingRow, Fingerprint, utcnow


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


ADMISSION_LOCK = 0x7261675F
"""PostgreSQL advisory lock key ('rag_') held while a submission checks capacity and inserts."""


def advisory_xact_lock(session: Session, key: int) -> None:
    """On PostgreSQL, wait for ``key`` and hold it until the transaction ends, across
    processes; a no-op on SQLite, whose embedded service is a single process."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(key)))


def lock_admission(session: Session) -> None:
    """Hold until commit, across API processes, the right to count pending work and add to it
    (:class:`~api.services.diagnoses.DiagnosisService` serialises its own threads)."""
    advisory_xact_lock(session, ADMISSION_LOCK)


def mark_not_queued(session: Session, diagnosis_ids: list[str], exc: Exception) -> None:
    """The job queue refused these diagnoses: they fail now rather than wait forever."""
    for diagnosis_id in diagnosis_ids:
        finish(session.get(Diagnosis, diagnosis_id), "failed",
               {"title": "not queued", "detail": f"the job queue refused it: {exc}"})


def pending_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Diagnosis).where(Diagnosis.status.in_(PENDING))) or 0


_ALL = object()


def pending_load(session: Session, owner: int | None | object = _ALL) -> tuple[int, int]:
    """``(diagnoses, cost)`` queued or running, of ``owner``'s key when given (None: unowned ones)."""
    query = select(func.count(), func.coalesce(func.sum(Diagnosis.cost), 0)).where(Diagnosis.status.in_(PENDING))
    if owner is not _ALL:
        query = query.where(Diagnosis.api_key_id.is_(None) if owner is None else Diagnosis.api_key_id == owner)
    count, cost = session.execute(query).one()
    return int(count), int(cost)


def active_keys(session: Session) -> int:
    """How many owners (keys, and the keyless as one) have diagnoses queued or running; at least 1."""
    owners = session.scalar(select(func.count(func.distinct(func.coalesce(Diagnosis.api_key_id, -1))))
                            .where(Diagnosis.status.in_(PENDING)))
    return max(1, int(owners or 0))


RATE_SAMPLE = 20
"""Finished sampling diagnoses the measured rate is taken over (the newest)."""


def measured_rate(session: Session) -> float:
    """Tokens per second the workers delivered lately: the cost of the newest :data:`RATE_SAMPLE`
    done sampling diagnoses over their running time (each admitted cost is an upper bound, so
    this errs slow); 0 when none was measured."""
    rows = session.execute(
        select(Diagnosis.cost, Diagnosis.started_at, Diagnosis.finished_at)
        .where(Diagnosis.status == "done", Diagnosis.mode.in_(("run", "repair")), Diagnosis.cost > 0,
               Diagnosis.started_at.is_not(None), Diagnosis.finished_at.is_not(None))
        .order_by(Diagnosis.finished_at.desc()).limit(RATE_SAMPLE)).all()
    tokens = sum(cost for cost, _, _ in rows)
    seconds = sum(max((finished - started).total_seconds(), 0.0) for _, started, finished in rows)
    return tokens / seconds if seconds > 0 else 0.0


def pending_ids(session: Session, older_than: dt.timedelta = dt.timedelta(0)) -> list[str]:
    """Ids of diagnoses still queued or running, created at least ``older_than`` ago."""
    cutoff = utcnow() - older_than
    return list(session.scalars(
        select(Diagnosis.id).where(Diagnosis.status.in_(PENDING), Diagnosis.created_at <= cutoff)))


def owned(query, column, scope: int | None):
    """``query`` limited to rows whose owner ``column`` is ``scope`` (None: every row)."""
    return query if scope is None else query.where(column == scope)


def find_cached(session: Session, request_key: str, scope: int | None = None) -> Diagnosis | None:
    """The newest diagnosis of an identical request that is done or still on its way, among
    those owned by ``scope`` (None: anyone's)."""
    return session.scalars(owned(
        select(Diagnosis)
        .where(Diagnosis.request_key == request_key, Diagnosis.status.in_(("done", *PENDING)))
        .order_by(Diagnosis.created_at.desc())
        .limit(1), Diagnosis.api_key_id, scope)
    ).first()


def recent_diagnoses(session: Session, limit: int, case_id: str | None = None,
                     status: str | None = None, scope: int | None = None) -> list[Diagnosis]:
    """The newest diagnoses first (ties by id), of ``case_id``, in ``status`` and owned by ``scope``
    when given; their case and report are not loaded (read one through ``session.get``)."""
    query = owned(select(Diagnosis).options(defer(Diagnosis.case), defer(Diagnosis.report))
                  .order_by(Diagnosis.created_at.desc(), Diagnosis.id).limit(limit), Diagnosis.api_key_id, scope)
    if case_id:
        query = query.where(Diagnosis.case_id == case_id)
    if status:
        query = query.where(Diagnosis.status == status)
    return list(session.scalars(query))


def previous_done(session: Session, case_id: str, before: dt.datetime, other_than: str,
                  scope: int | None = None) -> str | None:
    """The id of the newest finished diagnosis of ``case_id`` created before ``before``, other than
    ``other_than`` (the diagnosis created then), owned by ``scope`` when given."""
    return session.scalar(owned(
        select(Diagnosis.id)
        .where(Diagnosis.case_id == case_id, Diagnosis.status == "done", Diagnosis.created_at < before,
               Diagnosis.id != other_than)
        .order_by(Diagnosis.created_at.desc()).limit(1), Diagnosis.api_key_id, scope))


def claim(session: Session, diagnosis_id: str, max_attempts: int, token: str | None = None,
          lease_s: float = 30.0) -> Diagnosis | None:
    """Mark a diagnosis running under a lease of ``lease_s`` held by ``token`` (a fresh one when
    None) and count the attempt; None when there is nothing to do.

    ``running`` is claimable too when its lease is not live (:mod:`api.db.leases`): its worker
    died, froze or lost the database for longer than the lease. A live one raises
    :class:`~api.db.leases.LeaseHeld`: no two workers ever run a diagnosis at once. A second
    delivery of a finished one is skipped, so a job's result is recorded exactly once.

    Run it in an immediate session (:meth:`api.db.session.Database.session`): the row is
    read locked, and the claim itself is a conditional update whose row count is checked,
    so a cancel that got there first always wins.
    """
    diagnosis = session.get(Diagnosis, diagnosis_id, with_for_update=True)
    if diagnosis is None or diagnosis.status not in PENDING:
        return None
    now = utcnow()
    if lease_is_live(session, diagnosis_id, now):
        raise LeaseHeld(f"diagnosis {diagnosis_id} is running under another worker's live lease")
    if diagnosis.cancel_requested:
        finish(diagnosis, "cancelled")
        return None
    if diagnosis.attempts >= max_attempts:
        finish(diagnosis, "failed", error={
            "title": "worker lost",
            "detail": f"gave up after {diagnosis.attempts} attempts: each time the worker running it died, "
                      "crashed or froze (RAG_DIAGNOSE_MAX_ATTEMPTS); it is not run again"})
        return None
    claimed = session.execute(
        update(Diagnosis)
        .where(Diagnosis.id == diagnosis_id, claimable(now), Diagnosis.cancel_requested.is_(False))
        .values(status="running", attempts=Diagnosis.attempts + 1, started_at=now,
                lease_owner=token or new_token(), lease_expires_at=now + dt.timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)).rowcount
    if claimed != 1:
        return None
    session.refresh(diagnosis)
    return diagnosis


def claim_next(session: Session, delivered: str, max_attempts: int, token: str,
               lease_s: float) -> Diagnosis | None:
    """Claim the diagnosis whose turn it is (:func:`~api.db.leases.fair_order`), whichever job
    (``delivered``) brought the worker here: every pending diagnosis has a job of its own, so
    each is run by one delivery or another. None when nothing is left to run; raises
    :class:`~api.db.leases.LeaseHeld` when only ``delivered`` is left and another worker holds it."""
    for diagnosis_id in fair_order(session, delivered):
        try:
            diagnosis = claim(session, diagnosis_id, max_attempts, token, lease_s)
        except LeaseHeld:  # claimed by another worker since the order was read
            continue
        if diagnosis is not None:
            return diagnosis
    return claim(session, delivered, max_attempts, token, lease_s)


def cancel(session: Session, diagnosis: Diagnosis) -> bool:
    """Cancel a pending diagnosis by conditional updates (row counts checked): a queued one ends
    ``cancelled`` now, a running one is flagged and its worker stops at its next progress
    report. False when it was no longer pending. Run it in an immediate session."""
    cancelled = session.execute(
        update(Diagnosis).where(Diagnosis.id == diagnosis.id, Diagnosis.status == "queued")
        .values(status="cancelled", progress=None, finished_at=utcnow())
        .execution_options(synchronize_session=False)).rowcount
    if not cancelled:
        cancelled = session.execute(
            update(Diagnosis).where(Diagnosis.id == diagnosis.id, Diagnosis.status == "running")
            .values(cancel_requested=True).execution_options(synchronize_session=False)).rowcount
    session.refresh(diagnosis)
    return cancelled == 1


def cancel_owned(session: Session, api_key_id: int) -> int:
    """Cancel every pending diagnosis of a key (it was revoked): queued ones end ``cancelled``
    now, running ones are flagged and their workers stop at the next progress report.
    Returns how many. Run it in an immediate session."""
    queued = session.execute(
        update(Diagnosis).where(Diagnosis.api_key_id == api_key_id, Diagnosis.status == "queued")
        .values(status="cancelled", progress=None, finished_at=utcnow())
        .execution_options(synchronize_session=False)).rowcount
    running = session.execute(
        update(Diagnosis).where(Diagnosis.api_key_id == api_key_id, Diagnosis.status == "running")
        .values(cancel_requested=True).execution_options(synchronize_session=False)).rowcount
    return queued + running


def finish_running(session: Session, diagnosis_id: str, token: str | None = None) -> Diagnosis | None:
    """The diagnosis, locked, if it is still this worker's to finish (running, not cancelled, and
    with ``token`` given, under this attempt's lease); a running one whose cancel was requested
    ends ``cancelled`` here. Run it in an immediate session."""
    diagnosis = session.get(Diagnosis, diagnosis_id, with_for_update=True)
    if diagnosis is None or diagnosis.status != "running":
        return None
    if token is not None and diagnosis.lease_owner != token:
        return None  # another worker took it over: its result is that worker's to record
    if diagnosis.cancel_requested:
        finish(diagnosis, "cancelled")
        return None
    return diagnosis


def finish(diagnosis: Diagnosis, status: str, error: dict[str, Any] | None = None) -> None:
    diagnosis.status = status
    diagnosis.error = error
    diagnosis.progress = None
    diagnosis.finished_at = utcnow()
    diagnosis.lease_owner = diagnosis.lease_expires_at = None


def record_report(session: Session, diagnosis: Diagnosis, report: dict[str, Any]) -> None:
    """Store the report, its findings as rows and its fingerprint, and mark the diagnosis done."""
    environment = report.get("environment") or {}
    fingerprint_id = sha256_of(environment)
    if session.get(Fingerprint, fingerprint_id) is None:
        _insert_fingerprint(session, fingerprint_id, environment)
    diagnosis.report = report
    diagnosis.verdict = report.get("verdict")
    diagnosis.fingerprint_id = fingerprint_id
    diagnosis.findings = [
        FindingRow(
            position=i, stage=f["stage"], rule=f["rule"], severity=f["severity"],
            evidence=f.get("evidence") or {}, advice=f.get("advice") or "",
        )
        for i, f in enumerate(report.get("findings") or [])
    ]
    finish(diagnosis, "done")


def _insert_fingerprint(session: Session, fingerprint_id: str, environment: dict[str, Any]) -> None:
    """Insert unless present: two workers finishing at once on a new environment both try."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    session.execute(insert(Fingerprint).values(id=fingerprint_id, data=environment, created_at=utcnow())
                    .on_conflict_do_nothing(index_elements=["id"]))


def set_progress(session: Session, diagnosis_id: str, progress: dict[str, Any]) -> bool:
    """Save progress; returns whether the worker should stop: cancellation was requested
    meanwhile, or the diagnosis is no longer running (cancelled or finished elsewhere)."""
    session.execute(update(Diagnosis).where(Diagnosis.id == diagnosis_id, Diagnosis.status == "running")
                    .values(progress=progress))
    row = session.execute(select(Diagnosis.status, Diagnosis.cancel_requested)
                          .where(Diagnosis.id == diagnosis_id)).first()
    return row is None or row.status != "running" or bool(row.cancel_requested)
