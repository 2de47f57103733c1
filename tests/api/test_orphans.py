"""A diagnosis stored as queued whose job never reached the queue (the process died in
between) is found and queued again, on both transports."""

from __future__ import annotations

import asyncio
import time

import psycopg

from api.db.migrate import upgrade
from api.db.session import Database
from api.jobs.embedded import EmbeddedQueue
from api.jobs.postgres import PostgresQueue
from api.jobs.runner import DiagnosisRunner
from api.services.diagnoses import DiagnosisService
from tests.api.conftest import FakeDiagnoser, FakeInline, ListQueue, service_settings, small_case


def _stored_but_never_queued(url: str) -> tuple[Database, str]:
    upgrade(url)
    db = Database(url)
    service = DiagnosisService(db, ListQueue(), service_settings(url), FakeInline())
    return db, service.submit(small_case()).id


def test_embedded_queue_queues_orphans_at_start(sqlite_url, tmp_path):
    db, diagnosis_id = _stored_but_never_queued(sqlite_url)
    from api.app import _pending_ids

    queue = EmbeddedQueue(tmp_path / "queue", DiagnosisRunner(db, FakeDiagnoser), pending=lambda: _pending_ids(db))
    queue.start()
    try:
        deadline = time.monotonic() + 10
        while DiagnosisService(db, queue, service_settings(sqlite_url), FakeInline()).get(diagnosis_id).status != "done":
            assert time.monotonic() < deadline, "the orphan never ran"
            time.sleep(0.05)
    finally:
        queue.stop()
        db.dispose()


def test_postgres_maintenance_defers_orphans_once(postgres_url):
    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("TRUNCATE diagnoses CASCADE")
        conn.execute("DELETE FROM procrastinate_jobs")
    db, diagnosis_id = _stored_but_never_queued(postgres_url)
    queue = PostgresQueue(postgres_url)

    async def sweep() -> list[int]:
        async with queue.app.open_async():
            return [await queue.requeue_orphans(older_than_s=0), await queue.requeue_orphans(older_than_s=0)]

    try:
        assert asyncio.run(sweep()) == [1, 0]
        with psycopg.connect(postgres_url) as conn:
            jobs = conn.execute("SELECT args->>'diagnosis_id', status FROM procrastinate_jobs "
                                "WHERE task_name = 'run_diagnosis'").fetchall()
        assert jobs == [(diagnosis_id, "todo")]
    finally:
        db.dispose()


class _DeliveryLog:
    """A runner that records every delivery; with ``hold`` it keeps the job it took until the
    queue stops (a restart mid-run), then gives it back as the real runner does (Interrupted)."""

    def __init__(self, hold: bool) -> None:
        import threading

        self.hold, self.seen, self.stopping = hold, [], threading.Event()

    def execute(self, diagnosis_id: str) -> None:
        from api.jobs.runner import Interrupted

        self.seen.append(diagnosis_id)
        if self.hold:
            self.stopping.wait(10)
            raise Interrupted()


def test_restarts_leave_each_pending_diagnosis_queued_exactly_once(sqlite_url, tmp_path):
    """Each restart compares the queue with the database; a pending job the queue already
    holds must not be queued again, however often the service restarts."""
    upgrade(sqlite_url)
    db = Database(sqlite_url)
    path = tmp_path / "queue"
    from api.app import _pending_ids

    service = DiagnosisService(db, EmbeddedQueue(path, runner=None), service_settings(sqlite_url), FakeInline())
    ids = [service.submit(small_case(f"pending-{i}")).id for i in range(3)]
    restarts = 5
    try:
        for _ in range(restarts):  # each holds the first job, as a restart in the middle of a run does
            runner = _DeliveryLog(hold=True)
            queue = EmbeddedQueue(path, runner, pending=lambda: _pending_ids(db))
            queue.start()
            deadline = time.monotonic() + 10
            while not runner.seen:
                assert time.monotonic() < deadline, "the worker took nothing"
                time.sleep(0.02)
            queue.stop()
            rows = [item["data"] for item in queue._queue.queue() if int(item["status"]) < 5]  # 5: acked
            assert sorted(rows) == sorted(ids), f"the queue holds {len(rows)} jobs for {len(ids)} diagnoses"
            del queue
        runner = _DeliveryLog(hold=False)
        queue = EmbeddedQueue(path, runner, pending=lambda: _pending_ids(db))
        queue.start()
        time.sleep(1.5)  # everything it holds is delivered within this
        queue.stop()
        assert sorted(runner.seen) == sorted(ids), "each pending diagnosis runs once after the restarts"
    finally:
        db.dispose()
