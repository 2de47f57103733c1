"""The PostgreSQL transport: procrastinate jobs, run by ``diagnose worker`` processes.

Workers send heartbeats. Beside the job it runs, every worker sweeps the queue each
heartbeat: the jobs of a worker that fell silent (killed, frozen, machine lost) go back
to the queue in one atomic statement, so they run again elsewhere without waiting for
any worker to finish its own job or for the jobs queued before them. How often one
diagnosis may lose its worker is bounded (``max_attempts``): the next delivery fails it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import Callable

import croniter
import procrastinate
from sqlalchemy import text
from sqlalchemy.orm import Session

from api.db.session import server_options
from api.db.leases import LeaseHeld
from api.jobs.runner import MAX_ATTEMPTS, DatabaseUnavailable, DiagnosisRunner, Interrupted
from api.settings import DatabaseTimeouts

ORPHANS_EVERY_S = 60.0
"""How often a worker looks for diagnoses stored as queued that have no job."""
RESTART_BACKOFF_MAX_S = 5.0
"""The longest wait between two tries to start the worker again after it lost the database: the
outage's end is noticed within this (the running job's lease and heartbeat do not wait for it)."""
WATCHDOG_EXIT_CODE = 75
"""A worker whose job is stuck past its time limit without reporting progress exits with this
(EX_TEMPFAIL): its supervisor starts a fresh one and the job counts an attempt."""

_REQUEUE_STALLED = """
WITH stalled AS (
    SELECT job.id FROM procrastinate_jobs job
      LEFT JOIN procrastinate_workers worker ON worker.id = job.worker_id
     WHERE job.status = 'doing' AND job.queue_name = %(queue)s
       AND job.args->>'diagnosis_id' IS DISTINCT FROM %(own)s
       AND (job.worker_id IS NULL
            OR worker.id IS NULL
            OR worker.last_heartbeat < now() - make_interval(secs => %(stalled_after_s)s))
       FOR UPDATE OF job SKIP LOCKED
), requeued AS (
    UPDATE procrastinate_jobs job
       SET status = 'todo', attempts = job.attempts + 1, scheduled_at = NULL, worker_id = NULL
      FROM stalled WHERE job.id = stalled.id AND job.status = 'doing'
    RETURNING job.id, job.queue_name, job.args->>'diagnosis_id' AS diagnosis_id
)
SELECT id, diagnosis_id, pg_notify('procrastinate_queue_v1#' || queue_name,
                                   json_build_object('type', 'job_inserted', 'job_id', id)::text)::text AS notified
  FROM requeued
"""
"""Give the jobs of silent workers back to the queue, atomically: a job another worker is
requeueing right now is locked and skipped, one it already requeued is no longer 'doing',
so two sweeping workers never both take it. Idle workers hear of it as of a new job."""

log = logging.getLogger("rag_diagnose.worker")

QUEUE = "diagnoses"
MAINTENANCE = "maintenance"


def conninfo(url: str) -> str:
    """procrastinate speaks libpq, not SQLAlchemy URLs."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            return "postgresql://" + url.removeprefix(prefix)
    return url


class PostgresQueue:
    kind = "postgresql"

    def __init__(self, url: str, stalled_after_s: float = 30.0, nightly_cron: str = "",
                 max_attempts: int = MAX_ATTEMPTS, timeouts: DatabaseTimeouts | None = None) -> None:
        # procrastinate's pools check each connection before use, so a restarted
        # database costs no failed request. Its statements keep no time limit (LISTEN waits),
        # but a transaction a frozen worker left open is ended like the service's own.
        options = server_options(timeouts or DatabaseTimeouts(), statements=False)
        self.app = procrastinate.App(connector=procrastinate.PsycopgConnector(
            conninfo=conninfo(url), kwargs={"options": options} if options else {}))
        self.stalled_after_s = stalled_after_s
        self.max_attempts = max_attempts
        self._runner: DiagnosisRunner | None = None
        self._job_id: int | None = None
        """The procrastinate job this worker runs now: its lease renewals keep this worker alive."""
        self._opened = False
        self._in_worker = False
        """Inside ``run_worker`` the app is open (async) and sync calls such as ``enqueue`` go through it."""
        self._start_nightly: Callable[[], object] | None = None
        if nightly_cron:
            self._schedule_nightly(nightly_cron)

        # Interrupted (worker shutting down) and DatabaseUnavailable go back to the queue;
        # anything else was already recorded as a failed diagnosis by the runner.
        # LeaseHeld: another worker's lease on it is still live; by the retry it has expired, or
        # that worker finished it.
        @self.app.task(name="run_diagnosis", queue=QUEUE, pass_context=True,
                       retry=procrastinate.RetryStrategy(max_attempts=max_attempts, wait=5,
                                                         retry_exceptions={Interrupted, DatabaseUnavailable,
                                                                           LeaseHeld}))
        def run_diagnosis(context: procrastinate.JobContext, diagnosis_id: str) -> None:
            assert self._runner is not None, "run_diagnosis runs only inside `diagnose worker`"
            self._job_id = context.job.id
            try:
                self._runner.execute(diagnosis_id)
            finally:
                self._job_id = None

        # Both sweeps run in every worker's own loop now (see ``_sweep``): a periodic job would
        # wait for a free worker behind every job queued before it. The tasks stay registered
        # so that jobs an older version deferred still run (once) instead of failing.
        @self.app.task(name="requeue_stalled", queue=MAINTENANCE, queueing_lock="requeue_stalled")
        async def requeue_stalled(timestamp: int) -> None:
            await self.requeue_stalled()

        @self.app.task(name="requeue_orphans", queue=MAINTENANCE, queueing_lock="requeue_orphans")
        async def requeue_orphans(timestamp: int) -> None:
            await self.requeue_orphans()

        self._run_diagnosis = run_diagnosis

    def _schedule_nightly(self, cron: str) -> None:
        """``RAG_DIAGNOSE_NIGHTLY_CRON``: workers start a nightly run on this schedule; procrastinate
        defers each tick once, however many workers run, and any worker may take it."""
        if not croniter.croniter.is_valid(cron):
            raise ValueError(f"RAG_DIAGNOSE_NIGHTLY_CRON: {cron!r} is not a cron expression (e.g. '0 3 * * *')")

        @self.app.periodic(cron=cron, periodic_id="nightly")
        @self.app.task(name="start_nightly_run", queue=MAINTENANCE, queueing_lock="start_nightly_run")
        def start_nightly_run(timestamp: int) -> None:
            assert self._start_nightly is not None, "start_nightly_run runs only inside `diagnose worker`"
            log.info("scheduled nightly run (tick %s)", timestamp)
            self._start_nightly()

    def _open(self) -> None:
        if not self._opened and not self._in_worker:
            self.app.open()
            self._opened = True

    def enqueue(self, diagnosis_id: str) -> None:
        self._open()
        self._run_diagnosis.defer(diagnosis_id=diagnosis_id)

    def start(self) -> None:
        """The API process runs no worker on PostgreSQL."""

    def stop(self, timeout: float = 5.0) -> None:
        if self._opened:
            self.app.close()
            self._opened = False

    expects_workers = True
    """Diagnoses run only in ``diagnose worker`` processes: none alive means none runs."""

    def workers_alive(self) -> int:
        self._open()
        rows = self.app.connector.get_sync_connector().execute_query_all(
            "SELECT count(*) AS n FROM procrastinate_workers "
            "WHERE last_heartbeat > now() - make_interval(secs => %(s)s)",
            s=self.stalled_after_s,
        )
        return int(rows[0]["n"])

    def _keepalive(self, session: Session) -> None:
        """In each lease renewal's transaction (:class:`api.jobs.lease.LeaseKeeper`): the heartbeat of
        the worker running the job. procrastinate stops its own heartbeat when the database goes
        away and, until the running job ends, does not start again: without this the worker would
        look dead for as long as its job runs, and its job would be taken from it."""
        if self._job_id is not None:
            session.execute(text(
                "UPDATE procrastinate_workers SET last_heartbeat = now() "
                "WHERE id = (SELECT worker_id FROM procrastinate_jobs WHERE id = :job)"), {"job": self._job_id})

    def last_heartbeat_age_s(self) -> float | None:
        """Seconds since any worker last sent a heartbeat; None when no worker ever did."""
        self._open()
        rows = self.app.connector.get_sync_connector().execute_query_all(
            "SELECT extract(epoch FROM now() - max(last_heartbeat))::float AS age FROM procrastinate_workers")
        age = rows[0]["age"]
        return None if age is None else round(float(age), 1)

    async def requeue_stalled(self, own: str | None = None) -> int:
        """Put the jobs whose worker was silent for ``stalled_after_s`` back on the queue; returns
        how many. Their next delivery counts an attempt: past ``max_attempts`` it fails the
        diagnosis instead of running it (:func:`api.db.store.claim`).

        ``own`` is the diagnosis this process is running: never requeued here, even while its
        procrastinate worker is restarting (no heartbeat) after losing the database."""
        rows = await self.app.connector.execute_query_all_async(
            _REQUEUE_STALLED, queue=QUEUE, stalled_after_s=self.stalled_after_s, own=own)
        for row in rows:
            log.warning("job %s (diagnosis %s) lost its worker; it goes back on the queue",
                        row["id"], row["diagnosis_id"])
        return len(rows)

    async def _sweep(self, every_s: float, runner: DiagnosisRunner) -> None:
        """Runs beside the worker's job, whatever that job is doing: requeue stalled jobs each
        ``every_s``, orphans each :data:`ORPHANS_EVERY_S`, and exit the process when the job
        running here is stuck past its time limit without reporting progress."""
        orphans_at = 0.0
        while True:
            try:
                await self.requeue_stalled(own=runner.current)
                if time.monotonic() - orphans_at >= ORPHANS_EVERY_S:
                    orphans_at = time.monotonic()
                    await self.requeue_orphans()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the database may be restarting; sweep again later
                log.warning("stalled-job sweep failed (%s: %s)", type(exc).__name__, exc)
            overdue = runner.overdue_s()
            if overdue > self.stalled_after_s:
                # The job neither finished nor reported progress (which would have failed it
                # at the limit): the thread cannot be stopped, so the process goes, as a killed
                # worker would. Its heartbeat stops; another worker requeues the job.
                log.critical("the running diagnosis is %.0f s past its time limit of %.0f s without "
                             "reporting progress; the worker exits so that a fresh one takes over",
                             overdue, runner.time_limit_s)
                logging.shutdown()
                os._exit(WATCHDOG_EXIT_CODE)
            await asyncio.sleep(every_s)

    async def requeue_orphans(self, older_than_s: float = 60.0) -> int:
        """Queue diagnoses stored as queued that have no job: an API process that died
        between storing a diagnosis and deferring its job leaves one behind. Also a running one
        whose lease ran out long ago and that has no job: the job that delivered it ran
        another diagnosis, or was given up while that lease was still live."""
        rows = await self.app.connector.execute_query_all_async(
            "SELECT d.id FROM diagnoses d WHERE ((d.status = 'queued' "
            "AND d.created_at < now() - make_interval(secs => %(s)s)) "
            " OR (d.status = 'running' AND d.lease_expires_at < now() - make_interval(secs => %(s)s))) "
            "AND NOT EXISTS ("
            " SELECT 1 FROM procrastinate_jobs j WHERE j.task_name = 'run_diagnosis'"
            " AND j.args->>'diagnosis_id' = d.id AND j.status IN ('todo', 'doing'))",
            s=older_than_s,
        )
        for row in rows:
            log.warning("diagnosis %s was stored but never queued; queueing it now", row["id"])
            await self._run_diagnosis.defer_async(diagnosis_id=row["id"])
        return len(rows)

    def run_worker(self, runner: DiagnosisRunner, heartbeat_s: float = 5.0, name: str | None = None,
                   start_nightly: Callable[[], object] | None = None) -> None:
        """Block running jobs one at a time (a worker owns its models) until interrupted.

        ``start_nightly`` starts a nightly run; it is what the ``nightly_cron`` schedule calls.
        """
        self._runner = runner
        self._start_nightly = start_nightly
        # A worker silent for stalled_after_s is dead: its lease runs out then too.
        runner.lease_s, runner.renew_every_s, runner.keepalive = self.stalled_after_s, heartbeat_s, self._keepalive

        async def main() -> None:
            current: list[asyncio.Task] = []

            def shut_down() -> None:
                # The running diagnosis stops at its next progress report and is
                # retried (Interrupted); procrastinate then stops gracefully.
                log.info("worker stopping")
                runner.stopping.set()
                for task in current:
                    task.cancel()

            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, shut_down)
            backoff = 1.0
            while not runner.stopping.is_set():
                try:
                    async with self.app.open_async():
                        self._in_worker = True
                        await self.requeue_stalled(own=runner.current)
                        backoff = 1.0
                        sweeper = asyncio.create_task(self._sweep(heartbeat_s, runner), name="sweep")
                        current[:] = [asyncio.create_task(self.app.run_worker_async(
                            queues=[QUEUE, MAINTENANCE],
                            concurrency=1,
                            name=name,
                            update_heartbeat_interval=heartbeat_s,
                            stalled_worker_timeout=self.stalled_after_s,
                            install_signal_handlers=False,
                        ))]
                        try:
                            await current[0]
                        finally:
                            sweeper.cancel()
                            await asyncio.gather(sweeper, return_exceptions=True)
                except asyncio.CancelledError:
                    break
                except Exception as exc:  # noqa: BLE001 - e.g. the database restarted
                    log.warning("worker lost the database (%s: %s)", type(exc).__name__, exc)
                if not runner.stopping.is_set():
                    # procrastinate stops its worker when the database goes away; start
                    # it again rather than leave the machine idle until someone notices.
                    log.warning("worker restarts in %.0f s", backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, RESTART_BACKOFF_MAX_S)

        try:
            asyncio.run(main())
        finally:
            self._in_worker = False
