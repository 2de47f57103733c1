"""Run one stored diagnosis: claim it, run the engine, record the result exactly once."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, TypeVar

from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.orm import Session

from api.db.session import Database
from api.services.errors import failure_record
from api.db.leases import forget_leases, new_token
from api.db.store import claim_next, finish, finish_running, record_report, set_progress
from api.jobs.lease import LeaseKeeper, LeaseLost
from api.settings import QueueSettings
from diagnose.case import case_from_dict
from diagnose.errors import DiagnoseError
from diagnose.pipeline import Diagnoser

log = logging.getLogger("rag_diagnose.worker")

MAX_ATTEMPTS: int = QueueSettings.max_attempts
"""Deliveries of one diagnosis (a worker that died counts) before it is marked failed;
``RAG_DIAGNOSE_MAX_ATTEMPTS`` (:attr:`QueueSettings.max_attempts`) overrides it."""
JOB_TIMEOUT_S: float = QueueSettings.job_timeout_s
"""Wall-clock limit of one attempt (``RAG_DIAGNOSE_JOB_TIMEOUT_S``); 0: none."""


class Cancelled(Exception):
    """Raised inside the engine's progress callback when the client cancelled the diagnosis."""


class Interrupted(Exception):
    """The worker is shutting down: the diagnosis goes back to the queue, unfinished."""


class TimedOut(Exception):
    """Raised inside the engine's progress callback once the attempt ran past its time limit."""


class DatabaseUnavailable(Exception):
    """The database stayed unreachable through every retry; the job should run again later."""


# What a restarting or unreachable database raises through SQLAlchemy.
DATABASE_ERRORS = (OperationalError, InterfaceError, DisconnectionError)
RETRY_DELAYS_S = (0.5, 1, 2, 4, 8, 8, 8, 8, 8)
"""About 50 s in all: longer than a database restart, short enough to free the worker."""

T = TypeVar("T")


def with_database_retries(write: Callable[[], T], what: str) -> T:
    """Run ``write`` (one transaction), retrying while the database is unreachable."""
    for delay in RETRY_DELAYS_S:
        try:
            return write()
        except DATABASE_ERRORS as exc:
            log.warning("%s: database unavailable (%s); retrying in %.1f s", what, type(exc).__name__, delay)
            time.sleep(delay)
    try:
        return write()
    except DATABASE_ERRORS as exc:
        raise DatabaseUnavailable(f"{what}: {exc}") from exc


class _DatabaseProgress:
    """The engine's progress protocol, saved to the row at most once a second.

    Each save also reads the row's cancel flag, which is how a running diagnosis
    is cancelled between decode steps.
    """

    def __init__(self, db: Database, diagnosis_id: str, stopping: threading.Event, every_s: float = 1.0,
                 deadline: float | None = None, lease: LeaseKeeper | None = None) -> None:
        self.db, self.diagnosis_id, self.stopping, self.every_s = db, diagnosis_id, stopping, every_s
        self.lease = lease
        """Checked at every report: waits while the lease is unsure, raises :class:`LeaseLost` once lost."""
        self.deadline = deadline
        """``time.monotonic()`` past which the next report raises :class:`TimedOut`; None: no limit."""
        self.state: dict = {"phase": "starting", "completed": 0, "total": None}
        self._saved_at = 0.0

    def phase(self, description: str, total: int | None = None) -> None:
        self.state = {"phase": description, "completed": 0, "total": total}
        self._save(force=True)

    def update(self, completed: int) -> None:
        self.state["completed"] = completed
        self._save()

    def _save(self, force: bool = False) -> None:
        if self.lease is not None:
            self.lease.check(self.stopping)
        if self.stopping.is_set():
            raise Interrupted()
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise TimedOut()
        if not force and now - self._saved_at < self.every_s:
            return
        self._saved_at = now
        try:
            with self.db.session() as session:
                cancelled = set_progress(session, self.diagnosis_id, dict(self.state))
        except DATABASE_ERRORS as exc:
            # Progress is best effort: a database restart must not cost the diagnosis.
            log.warning("progress of %s not saved: %s", self.diagnosis_id, type(exc).__name__)
            return
        if cancelled:
            raise Cancelled()


class DiagnosisRunner:
    """Owns the models of one worker; ``execute`` is what every queue transport calls."""

    def __init__(self, db: Database, diagnoser_factory: Callable[[], Diagnoser],
                 on_finished: Callable[[str], object] | None = None, *,
                 max_attempts: int = MAX_ATTEMPTS, time_limit_s: float = JOB_TIMEOUT_S,
                 lease_s: float = QueueSettings.stalled_after_s, renew_every_s: float = QueueSettings.heartbeat_s) -> None:
        if max_attempts < 1:
            raise ValueError(f"RAG_DIAGNOSE_MAX_ATTEMPTS: must be at least 1 (got {max_attempts})")
        self.db = db
        self._factory = diagnoser_factory
        self.max_attempts = max_attempts
        self.time_limit_s = time_limit_s
        """Wall-clock limit of one attempt, from when the models are loaded; 0: none."""
        self.current: str | None = None
        """The id of the diagnosis this runner is executing, if any."""
        self.running_since: float | None = None
        """``time.monotonic()`` when the diagnosis now running started (models loaded); None when idle.
        A worker's watchdog reads it to find a job stuck past its limit without reporting progress."""
        self.on_finished = on_finished
        """Called with the diagnosis id once its result is recorded (done, failed or cancelled),
        and again on a redelivery of a finished one; e.g. the nightly run's finalizer."""
        self.lease_s, self.renew_every_s = lease_s, renew_every_s
        """The lease of a running diagnosis and how often it is renewed (:mod:`api.jobs.lease`)."""
        self.keepalive: Callable[[Session], object] | None = None
        """Run in each lease renewal's transaction: the PostgreSQL queue marks its worker alive there."""
        self.token: str | None = None
        """The lease token of the attempt running now: every write of its result names it."""
        self.running: str | None = None
        """The diagnosis running now: the fair order may run another than the job's (:attr:`current`)."""
        self._diagnoser: Diagnoser | None = None
        self.stopping = threading.Event()
        """Set on shutdown: the running diagnosis stops at its next progress report."""

    @property
    def diagnoser(self) -> Diagnoser:
        if self._diagnoser is None:
            self._diagnoser = self._factory()
        return self._diagnoser

    def execute(self, diagnosis_id: str) -> None:
        """Run one pending diagnosis for the job of ``diagnosis_id``: the one whose turn it is
        across keys (:func:`api.db.leases.fair_order`), that one when it is the only one left."""
        self.current = diagnosis_id
        try:
            diagnosis_id = self._execute(diagnosis_id)  # Interrupted propagates: the diagnosis is not finished
        finally:
            self.current = None
        if self.on_finished is not None:
            try:
                self.on_finished(diagnosis_id)
            except Exception:  # noqa: BLE001 - the result is recorded; a failed hook must not redo or loop the job
                log.exception("on_finished hook failed for diagnosis %s", diagnosis_id)

    def _execute(self, delivered: str) -> str:
        """Run the diagnosis whose turn it is (:func:`~api.db.store.claim_next`); returns its id."""
        token = new_token()
        claimed = with_database_retries(lambda: self._claim(delivered, token), f"claiming for {delivered}")
        if claimed is None:
            return delivered
        diagnosis_id, mode, case_data, seed_offset = claimed
        log.info("diagnosis %s started (%s)", diagnosis_id, mode)
        self.running, self.token = diagnosis_id, token
        try:
            with LeaseKeeper(self.db, diagnosis_id, token, self.lease_s, self.renew_every_s, self.keepalive,
                             errors=DATABASE_ERRORS) as lease:
                self._run_claimed(diagnosis_id, lease, mode, case_data, seed_offset)
        except LeaseLost as exc:
            log.warning("%s; its result is not recorded here", exc)
        finally:
            self.running = self.token = None
        return diagnosis_id

    def _run_claimed(self, diagnosis_id: str, lease: LeaseKeeper, mode: str, case_data: dict,
                     seed_offset: int) -> None:
        try:
            report = self._diagnose(diagnosis_id, mode, case_data, seed_offset, lease)
        except LeaseLost:
            raise  # another worker holds it: nothing of this attempt is written
        except Cancelled:
            self._finish(diagnosis_id, "cancelled")
        except TimedOut:
            log.warning("diagnosis %s stopped: past its time limit of %.0f s", diagnosis_id, self.time_limit_s)
            self._finish(diagnosis_id, "failed", {
                "title": "time limit",
                "detail": f"still running after {self.time_limit_s:g} s, the limit of one attempt "
                          "(RAG_DIAGNOSE_JOB_TIMEOUT_S); stopped"})
        except Interrupted:
            self._requeue(diagnosis_id)
            raise
        except DiagnoseError as exc:
            self._finish(diagnosis_id, "failed", failure_record(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must fail the job, not loop it through retries
            log.exception("diagnosis %s crashed", diagnosis_id)
            self._finish(diagnosis_id, "failed", {"title": "internal error", "detail": f"{type(exc).__name__}: {exc}"})
        else:
            try:
                with_database_retries(lambda: self._record(diagnosis_id, report), f"recording {diagnosis_id}")
            except DatabaseUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 - a report that cannot be stored must not stay "running"
                log.exception("diagnosis %s could not be recorded", diagnosis_id)
                self._finish(diagnosis_id, "failed", {
                    "title": "internal error", "detail": f"the report could not be stored: {type(exc).__name__}: {exc}"})
                return
            log.info("diagnosis %s done: %s", diagnosis_id, report["verdict"])

    def _claim(self, delivered: str, token: str) -> tuple[str, str, dict, int] | None:
        with self.db.session(immediate=True) as session:
            diagnosis = claim_next(session, delivered, self.max_attempts, token, self.lease_s)
            if diagnosis is None:
                return None
            return diagnosis.id, diagnosis.mode, diagnosis.case, diagnosis.seed_offset

    def _record(self, diagnosis_id: str, report: dict) -> None:
        """Store the report unless the diagnosis was cancelled meanwhile (then it ends cancelled) or
        another worker holds it now (then nothing is written)."""
        with self.db.session(immediate=True) as session:
            diagnosis = finish_running(session, diagnosis_id, self.token)
            if diagnosis is not None:
                record_report(session, diagnosis, report)

    def _diagnose(self, diagnosis_id: str, mode: str, case_data: dict, seed_offset: int,
                  lease: LeaseKeeper | None = None) -> dict:
        case = case_from_dict(case_data)
        diagnoser = self.diagnoser  # loads the models on the first job: not part of the time limit
        self.running_since = started = time.monotonic()
        deadline = started + self.time_limit_s if self.time_limit_s > 0 else None
        diagnoser.progress = _DatabaseProgress(self.db, diagnosis_id, self.stopping, deadline=deadline, lease=lease)
        try:
            if mode == "inputs":
                report = diagnoser.inputs(case)
            elif mode == "repair":
                report = diagnoser.run(case, seed_offset=seed_offset, repair=True)
            else:
                report = diagnoser.run(case, seed_offset=seed_offset)
        finally:
            self.running_since = None
        return report.to_dict()

    def forget_leases(self) -> None:
        """End every lease (:func:`api.db.leases.forget_leases`): only for the one worker of a database."""
        def write() -> None:
            with self.db.session(immediate=True) as session:
                forget_leases(session)

        with_database_retries(write, "forgetting leases")

    def overdue_s(self) -> float:
        """Seconds the running diagnosis is past its time limit (0 when idle, within it, or unlimited)."""
        since = self.running_since
        if since is None or self.time_limit_s <= 0:
            return 0.0
        return max(0.0, time.monotonic() - since - self.time_limit_s)

    def _finish(self, diagnosis_id: str, status: str, error: dict | None = None) -> None:
        def write() -> None:
            with self.db.session(immediate=True) as session:
                diagnosis = finish_running(session, diagnosis_id, self.token)
                if diagnosis is not None:
                    finish(diagnosis, status, error)

        with_database_retries(write, f"finishing {diagnosis_id}")

    def _requeue(self, diagnosis_id: str) -> None:
        """Undo the claim of an interrupted diagnosis; the interrupted try does not count."""
        def write() -> None:
            with self.db.session(immediate=True) as session:
                diagnosis = finish_running(session, diagnosis_id, self.token)
                if diagnosis is not None:
                    diagnosis.status, diagnosis.progress = "queued", None
                    diagnosis.lease_owner = diagnosis.lease_expires_at = None
                    diagnosis.attempts = max(0, diagnosis.attempts - 1)

        with_database_retries(write, f"requeueing {diagnosis_id}")
