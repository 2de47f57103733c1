"""The PostgreSQL transport: procrastinate jobs, run by ``diagnose worker`` processes.

Workers send heartbeats; a periodic task gives the jobs of a worker that fell
silent (killed, machine lost) back to the queue, so they run again elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import signal

import procrastinate

from api.jobs.runner import MAX_ATTEMPTS, DiagnosisRunner, Interrupted

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

    def __init__(self, url: str, stalled_after_s: float = 30.0) -> None:
        self.app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(url)))
        self.stalled_after_s = stalled_after_s
        self._runner: DiagnosisRunner | None = None
        self._opened = False

        # Interrupted (worker shutting down) goes back to the queue at once; anything
        # else was already recorded as a failed diagnosis by the runner.
        @self.app.task(name="run_diagnosis", queue=QUEUE,
                       retry=procrastinate.RetryStrategy(max_attempts=MAX_ATTEMPTS, retry_exceptions={Interrupted}))
        def run_diagnosis(diagnosis_id: str) -> None:
            assert self._runner is not None, "run_diagnosis runs only inside `diagnose worker`"
            self._runner.execute(diagnosis_id)

        @self.app.periodic(cron="* * * * * */5")
        @self.app.task(name="requeue_stalled", queue=MAINTENANCE, queueing_lock="requeue_stalled")
        async def requeue_stalled(timestamp: int) -> None:
            await self.requeue_stalled()

        self._run_diagnosis = run_diagnosis

    def _open(self) -> None:
        if not self._opened:
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

    def run_worker(self, runner: DiagnosisRunner, heartbeat_s: float = 5.0, name: str | None = None) -> None:
        """Block running jobs one at a time (a worker owns its models) until interrupted."""
        self._runner = runner

        async def main() -> None:
            async with self.app.open_async():
                await self.requeue_stalled()
                worker = asyncio.create_task(self.app.run_worker_async(
                    queues=[QUEUE, MAINTENANCE],
                    concurrency=1,
                    name=name,
                    update_heartbeat_interval=heartbeat_s,
                    stalled_worker_timeout=self.stalled_after_s,
                    install_signal_handlers=False,
                ))

                def shut_down() -> None:
                    # The running diagnosis stops at its next progress report and is
                    # retried (Interrupted); procrastinate then stops gracefully.
                    log.info("worker stopping")
                    runner.stopping.set()
                    worker.cancel()

                loop = asyncio.get_running_loop()
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(sig, shut_down)
                try:
                    await worker
                except asyncio.CancelledError:
                    pass

        asyncio.run(main())
