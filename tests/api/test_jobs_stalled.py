"""Stalled jobs on PostgreSQL, with real ``run_worker`` processes and fake models.

A worker that freezes (SIGSTOP: no heartbeat, no exit) loses its job to the other
workers' sweeps within ``stalled_after_s``, even while every live worker is busy and
jobs are queued before the sweep; a case that freezes every worker that takes it is
failed after ``max_attempts``; a job stuck past its time limit without reporting
progress makes its worker exit.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.exc import DBAPIError

from api.db.migrate import upgrade
from api.db.session import Database
from api.db.store import claim
from api.jobs.postgres import WATCHDOG_EXIT_CODE, PostgresQueue
from api.jobs.runner import DiagnosisRunner
from api.services.diagnoses import DiagnosisService
from api.settings import DatabaseTimeouts
from tests.api.conftest import FakeDiagnoser, FakeInline, service_settings, small_case

ROOT = Path(__file__).resolve().parents[2]
STALLED_AFTER_S = 2.0
HEARTBEAT_S = 0.5
MAX_ATTEMPTS = 2
SLOW_LIMIT_S = 300.0
"""The busy workers' jobs run until the test releases them (``TEST_RELEASE``, a file), so what
happens while they are busy does not depend on how loaded the machine is; this bounds them."""


class ScriptedDiagnoser(FakeDiagnoser):
    """What a case id asks for: ``freeze*`` stops the whole process (as a hung native call or a
    stuck machine would), ``slow*`` reports progress until the file ``TEST_RELEASE`` exists,
    ``hang*`` sleeps without reporting, anything else returns at once."""

    def run(self, case, seed_offset: int = 0):
        self.calls.append(("run", case.id))
        self.progress.phase("sampling", total=100)
        if case.id.startswith("freeze"):
            os.kill(os.getpid(), signal.SIGSTOP)
        elif case.id.startswith("slow"):
            started, release = time.monotonic(), Path(os.environ["TEST_RELEASE"])
            while not release.exists() and time.monotonic() - started < SLOW_LIMIT_S:
                self.progress.update(int(time.monotonic() - started))
                time.sleep(0.1)
        elif case.id.startswith("hang"):
            time.sleep(3600)
        return super().run(case, seed_offset)


def worker_main() -> None:
    """A ``diagnose worker`` with :class:`ScriptedDiagnoser`; ``python -c`` runs it below."""
    import logging

    logging.basicConfig(level="INFO", format=f"%(asctime)s {os.environ['TEST_WORKER']} %(name)s: %(message)s")
    url = os.environ["TEST_DATABASE_URL"]
    runner = DiagnosisRunner(Database(url), ScriptedDiagnoser, max_attempts=MAX_ATTEMPTS,
                             time_limit_s=float(os.environ.get("TEST_TIME_LIMIT_S", "600")))
    queue = PostgresQueue(url, stalled_after_s=STALLED_AFTER_S, max_attempts=MAX_ATTEMPTS)
    queue.run_worker(runner, heartbeat_s=HEARTBEAT_S, name=os.environ["TEST_WORKER"])


def _start_worker(url: str, name: str, log: Path, **env: str) -> subprocess.Popen:
    environment = {**os.environ, "TEST_DATABASE_URL": url, "TEST_WORKER": name, "HF_HUB_OFFLINE": "1",
                   "TEST_RELEASE": str(log.parent / "release-slow-jobs"), **env}
    return subprocess.Popen([sys.executable, "-c", "from tests.api.test_jobs_stalled import worker_main; worker_main()"],
                            cwd=ROOT, env=environment, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)  # also ends a stopped (frozen) one
        process.wait(10)


def _wait(predicate, timeout: float, what: str, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}"
                         + (f"\n{log.read_text()[-4000:]}" if log else ""))


def _job_status(url: str, diagnosis_id: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status FROM procrastinate_jobs WHERE task_name = 'run_diagnosis' "
                           "AND args->>'diagnosis_id' = %s ORDER BY id DESC LIMIT 1", (diagnosis_id,)).fetchone()
    return row[0] if row else ""


def _process_state(process: subprocess.Popen) -> str:
    """``T`` for a stopped (frozen) process, from /proc."""
    return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def pg(postgres_url):
    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("TRUNCATE nightly_items, nightly_runs, findings, diagnoses CASCADE")
        conn.execute("DELETE FROM procrastinate_jobs")
        conn.execute("DELETE FROM procrastinate_workers")
    db = Database(postgres_url)
    queue = PostgresQueue(postgres_url, stalled_after_s=STALLED_AFTER_S)
    service = DiagnosisService(db, queue, service_settings(postgres_url), FakeInline())
    yield postgres_url, service
    queue.stop()
    db.dispose()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DELETE FROM procrastinate_jobs")
        conn.execute("DELETE FROM procrastinate_workers")


def test_a_frozen_workers_job_is_requeued_while_every_live_worker_is_busy(pg, tmp_path):
    url, service = pg
    log = tmp_path / "workers.log"
    submit = lambda case_id: service.submit(small_case(case_id)).id  # noqa: E731
    status = lambda diagnosis_id: service.get(diagnosis_id).status  # noqa: E731
    workers: list[subprocess.Popen] = []
    try:
        slow = [submit("slow-1"), submit("slow-2")]
        workers += [_start_worker(url, "busy-1", log), _start_worker(url, "busy-2", log)]
        _wait(lambda: all(status(d) == "running" for d in slow), 60, "both busy workers to start", log)
        # Queued after the slow jobs: the poison, then work that must still get done.
        poison = submit("freeze-me")
        quick = [submit(f"quick-{i}") for i in range(3)]
        workers.append(_start_worker(url, "victim", log))
        _wait(lambda: status(poison) == "running", 60, "the third worker to take the poison", log)
        frozen_at = time.monotonic()
        _wait(lambda: _process_state(workers[2]) == "T", 10, "the third worker to freeze", log)

        # Every live worker is busy with a slow job and three jobs wait: the sweep still runs.
        _wait(lambda: _job_status(url, poison) == "todo", 60,  # about STALLED_AFTER_S + a heartbeat when idle
              "the frozen worker's job to go back on the queue", log)
        requeued_after = time.monotonic() - frozen_at
        assert all(status(d) == "running" for d in slow), "the requeue waited for a busy worker to finish"
        print(f"requeued {requeued_after:.1f} s after the freeze (stalled_after_s={STALLED_AFTER_S})")
        (log.parent / "release-slow-jobs").touch()

        # The next busy worker to finish takes it (attempt 2) and freezes too; the last live one
        # requeues it again, and its third delivery fails it instead of freezing a third worker.
        everything = [*slow, poison, *quick]
        _wait(lambda: all(status(d) in ("done", "failed") for d in everything), 120,
              "every diagnosis to finish", log)
        failed = service.get(poison)
        assert failed.status == "failed" and failed.error["title"] == "worker lost", failed
        assert f"{MAX_ATTEMPTS} attempts" in failed.error["detail"] and failed.attempts == MAX_ATTEMPTS
        assert [status(d) for d in [*slow, *quick]] == ["done"] * 5
        states = sorted(_process_state(w) for w in workers)
        assert states.count("T") == MAX_ATTEMPTS, states  # frozen: the victim and one busy worker
        assert all(w.poll() is None for w in workers)  # none crashed; the last one is still serving
        print(f"poison failed {time.monotonic() - frozen_at:.1f} s after the first freeze")
    finally:
        for worker in workers:
            _end(worker)


def test_two_workers_sweeping_at_once_requeue_a_stalled_job_once(pg):
    url, service = pg
    diagnosis_id = service.submit(small_case("stalled")).id
    with psycopg.connect(url, autocommit=True) as conn:  # its worker's last heartbeat was a minute ago
        worker_id = conn.execute("INSERT INTO procrastinate_workers (last_heartbeat) "
                                 "VALUES (now() - interval '1 minute') RETURNING id").fetchone()[0]
        conn.execute("UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s "
                     "WHERE args->>'diagnosis_id' = %s", (worker_id, diagnosis_id))
    sweepers = [PostgresQueue(url, stalled_after_s=STALLED_AFTER_S) for _ in range(2)]

    async def sweep_together() -> list[int]:
        async with sweepers[0].app.open_async(), sweepers[1].app.open_async():
            counts = []
            for _ in range(5):
                counts += await asyncio.gather(*(s.requeue_stalled() for s in sweepers))
            return counts

    counts = asyncio.run(sweep_together())
    assert sum(counts) == 1, counts
    with psycopg.connect(url) as conn:
        jobs = conn.execute("SELECT status, attempts, worker_id FROM procrastinate_jobs "
                            "WHERE args->>'diagnosis_id' = %s", (diagnosis_id,)).fetchall()
    assert jobs == [("todo", 1, None)]


def test_a_job_stuck_past_its_time_limit_without_progress_ends_its_worker(pg, tmp_path):
    url, service = pg
    log = tmp_path / "worker.log"
    diagnosis_id = service.submit(small_case("hang-forever")).id
    worker = _start_worker(url, "stuck", log, TEST_TIME_LIMIT_S="1")
    try:
        _wait(lambda: service.get(diagnosis_id).status == "running", 60, "the worker to take the job", log)
        started = time.monotonic()
        code = worker.wait(1 + STALLED_AFTER_S + 4 * HEARTBEAT_S + 10)
        exited_after = time.monotonic() - started
        assert code == WATCHDOG_EXIT_CODE, log.read_text()[-3000:]
        assert "past its time limit" in log.read_text()
        print(f"the stuck worker exited {exited_after:.1f} s after taking the job (limit 1 s)")
        # Its heartbeat stopped with it: a sweep gives the job back, and the attempt counted.
        sweeper = PostgresQueue(url, stalled_after_s=STALLED_AFTER_S)

        async def sweep() -> int:
            async with sweeper.app.open_async():
                return await sweeper.requeue_stalled()

        # Polled: the job counts as stalled once its last heartbeat is STALLED_AFTER_S old.
        assert _wait(lambda: asyncio.run(sweep()), 60, "a sweep to requeue the stuck job", log) == 1
        assert _job_status(url, diagnosis_id) == "todo"
        assert service.get(diagnosis_id).attempts == 1
    finally:
        _end(worker)


def test_a_transaction_a_frozen_worker_left_open_does_not_block_the_next_claim(pg):
    """A worker frozen between two statements holds its row locks until the server ends its
    transaction (``db_idle_transaction_timeout_s``); without that, every later claim of the
    diagnosis waited out ``statement_timeout`` again and again while the worker stayed frozen."""
    url, service = pg
    diagnosis_id = service.submit(small_case("locked")).id
    frozen = Database(url, DatabaseTimeouts(db_idle_transaction_timeout_s=1.0))
    open_transaction = frozen.session(immediate=True)
    claim(open_transaction.__enter__(), diagnosis_id, MAX_ATTEMPTS)  # row locked, never committed
    runner = DiagnosisRunner(Database(url), FakeDiagnoser, max_attempts=MAX_ATTEMPTS)
    started = time.monotonic()
    runner.execute(diagnosis_id)
    waited = time.monotonic() - started
    assert service.get(diagnosis_id).status == "done"
    assert service.get(diagnosis_id).attempts == 1  # the frozen claim was rolled back
    assert waited < DatabaseTimeouts().db_statement_timeout_s, waited
    with pytest.raises(DBAPIError, match="idle-in-transaction timeout"):  # the server ended it
        open_transaction.__exit__(None, None, None)
    frozen.dispose()


def test_the_queue_library_connections_end_transactions_left_open_too(pg):
    url, _ = pg
    queue = PostgresQueue(url, timeouts=DatabaseTimeouts(db_idle_transaction_timeout_s=7.0))
    queue._open()
    try:
        row = queue.app.connector.get_sync_connector().execute_query_one(
            "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, "
            "current_setting('statement_timeout') AS statement")
    finally:
        queue.stop()
    assert row == {"idle": "7s", "statement": "0"}
