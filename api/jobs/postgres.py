"""The PostgreSQL transport: procrastinate jobs, run by ``diagnose worker`` processes.

Workers send heartbeats; a periodic task gives the jobs of a worker that fell
silent (killed, machine lost) back to the queue, so they run again elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Callable

import croniter
import procrastinate

from api.jobs.runner import MAX_ATTEMPTS, DatabaseUnavailable, DiagnosisRunner, Interrupted

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

    def __init__(self, url: str, stalled_after_s: float = 30.0, nightly_cron: str = "") -> None:
        # procrastinate's pools check each connection before use, so a restarted
        # database costs no failed request.
        self.app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(url)))
        self.stalled_after_s = stalled_after_s
        self._runner: DiagnosisRunner | None = None
        self._opened = False
        self._in_worker = False
        """Inside ``run_worker`` the app is open (async) and sync calls such as ``enqueue`` go through it."""
        self._start_nightly: Callable[[], object] | None = None
        if nightly_cron:
            self._schedule_nightly(nightly_cron)

        # Interrupted (worker shutting down) and DatabaseUnavailable go back to the queue;
        # anything else was already recorded as a failed diagnosis by the runner.
        @self.app.task(name="run_diagnosis", queue=QUEUE,
                       retry=procrastinate.RetryStrategy(max_attempts=MAX_ATTEMPTS, wait=5,
                                                         retry_exceptions={Interrupted, DatabaseUnavailable}))
        def run_diagnosis(diagnosis_id: str) -> None:
            assert self._runner is not None, "run_diagnosis runs only inside `diagnose worker`"
            self._runner.execute(diagnosis_id)

        @self.app.periodic(cron="* * * * * */5")
        @self.app.task(name="requeue_stalled", queue=MAINTENANCE, queueing_lock="requeue_stalled")
        async def requeue_stalled(timestamp: int) -> None:
            await self.requeue_stalled()

        @self.app.periodic(cron="* * * * *")
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

    def workers_alive(self) -> int:
        self._open()
        rows = self.app.connector.get_sync_connector().execute_query_all(
            "SELECT count(*) AS n FROM procrastinate_workers "
            "WHERE last_heartbeat > now() - make_interval(secs => %(s)s)",
            s=self.stalled_after_s,
        )
        return int(rows[0]["n"])

    async def requeue_stalled(self) -> int:
        stalled = list(await self.app.job_manager.get_stalled_jobs(
            queue=QUEUE, seconds_since_heartbeat=self.stalled_after_s))
        for job in stalled:
            log.warning("job %s (diagnosis %s) lost its worker; it runs again", job.id, job.task_kwargs)
            await self.app.job_manager.retry_job(job)
        return len(stalled)

    async def requeue_orphans(self, older_than_s: float = 60.0) -> int:
        """Queue diagnoses stored as queued that have no job: an API process that died
        between storing a diagnosis and deferring its job leaves one behind."""
        rows = await self.app.connector.execute_query_all_async(
            "SELECT d.id FROM diagnoses d WHERE d.status = 'queued' "
            "AND d.created_at < now() - make_interval(secs => %(s)s) AND NOT EXISTS ("
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
                        await self.requeue_stalled()
                        backoff = 1.0
                        current[:] = [asyncio.create_task(self.app.run_worker_async(
                            queues=[QUEUE, MAINTENANCE],
                            concurrency=1,
                            name=name,
                            update_heartbeat_interval=heartbeat_s,
                            stalled_worker_timeout=self.stalled_after_s,
                            install_signal_handlers=False,
                        ))]
                        await current[0]
                except asyncio.CancelledError:
                    break
                except Exception as exc:  # noqa: BLE001 - e.g. the database restarted
                    log.warning("worker lost the database (%s: %s)", type(exc).__name__, exc)
                if not runner.stopping.is_set():
                    # procrastinate stops its worker when the database goes away; start
                    # it again rather than leave the machine idle until someone notices.
                    log.warning("worker restarts in %.0f s", backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 30.0)

        try:
            asyncio.run(main())
        finally:
            self._in_worker = False
