"""Issue #36, item 1: worker liveness through database outages, and the lease that fences a job
(docs/service.md, guarantee 1).

Real ``run_worker`` processes with fake models on the test PostgreSQL; the outage is made by a
proxy of the test's own between a worker and the database (:mod:`tests.api.db_proxy`), never
by stopping the machine's PostgreSQL. ``slow*`` cases report progress (and write it to a trace
file, worker name and time) until the test releases them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from api.db.leases import LeaseHeld
from api.db.session import Database
from api.db.store import claim, finish_running
from api.jobs.postgres import PostgresQueue
from api.jobs.runner import DiagnosisRunner
from tests.api.conftest import FakeDiagnoser, small_case
from tests.api.db_proxy import DatabaseProxy
from tests.api.test_jobs_stalled import _end, _wait, pg  # noqa: F401 - pg is a fixture

ROOT = Path(__file__).resolve().parents[2]
STALLED_AFTER_S = 2.0
"""Also the lease: a worker silent this long may lose its job."""
HEARTBEAT_S = 0.5
OUTAGE_S = 3 * STALLED_AFTER_S


class TracingDiagnoser(FakeDiagnoser):
    """``slow*``: report progress every 0.1 s until ``TEST_RELEASE`` exists, writing
    ``<worker> <time>`` to ``TEST_TRACE`` after each report that returned (the engine computes)."""

    def run(self, case, seed_offset: int = 0, repair: bool = False):
        self.calls.append(("run", case.id))
        self.progress.phase("sampling", total=100)
        release, trace = Path(os.environ["TEST_RELEASE"]), Path(os.environ["TEST_TRACE"])
        started = time.monotonic()
        while case.id.startswith("slow") and not release.exists() and time.monotonic() - started < 120:
            self.progress.update(int(time.monotonic() - started))
            with trace.open("a") as out:
                out.write(f"{os.environ['TEST_WORKER']} {time.time():.3f}\n")
            time.sleep(0.1)
        return super().run(case, seed_offset)


def worker_main() -> None:
    import logging

    logging.basicConfig(level="INFO", format=f"%(asctime)s {os.environ['TEST_WORKER']} %(name)s: %(message)s")
    url = os.environ["TEST_DATABASE_URL"]
    runner = DiagnosisRunner(Database(url), TracingDiagnoser, max_attempts=3)
    PostgresQueue(url, stalled_after_s=STALLED_AFTER_S).run_worker(runner, heartbeat_s=HEARTBEAT_S,
                                                                  name=os.environ["TEST_WORKER"])


def _start(url: str, name: str, tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "TEST_DATABASE_URL": url, "TEST_WORKER": name, "HF_HUB_OFFLINE": "1",
           "TEST_RELEASE": str(tmp / "release"), "TEST_TRACE": str(tmp / "trace")}
    return subprocess.Popen([sys.executable, "-c", "from tests.api.test_worker_lease import worker_main; worker_main()"],
                            cwd=ROOT, env=env, stdout=(tmp / "workers.log").open("ab"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _trace(tmp: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for line in (tmp / "trace").read_text().splitlines():
        name, at = line.split()
        times.setdefault(name, []).append(float(at))
    return times


def _alive(url: str) -> int:
    queue = PostgresQueue(url, stalled_after_s=STALLED_AFTER_S)
    try:
        return queue.workers_alive()
    finally:
        queue.stop()


def test_a_worker_rides_out_a_database_outage_keeps_its_job_and_heartbeats_again(pg, tmp_path):
    url, service = pg
    proxy = DatabaseProxy(url)
    log = tmp_path / "workers.log"
    worker = _start(proxy.url, "only", tmp_path)
    try:
        diagnosis_id = service.submit(small_case("slow-outage")).id
        _wait(lambda: service.get(diagnosis_id).status == "running" and (tmp_path / "trace").exists(), 60,
              "the worker to run the job", log)
        proxy.cut()
        time.sleep(OUTAGE_S)
        assert _alive(url) == 0  # silent while the database is gone
        proxy.restore()
        back = time.monotonic()
        _wait(lambda: _alive(url) >= 1, 15, "the worker's heartbeat after the outage", log)
        print(f"heartbeat again {time.monotonic() - back:.1f} s after the outage of {OUTAGE_S:g} s")
        (tmp_path / "release").touch()
        _wait(lambda: service.get(diagnosis_id).status == "done", 30, "the job to finish", log)
        assert service.get(diagnosis_id).attempts == 1  # nobody took it; it was not run again
        _wait(lambda: _alive(url) >= 1, 15, "the worker to keep heartbeating after its job", log)
        assert worker.poll() is None
    finally:
        _end(worker)
        proxy.close()


def test_a_worker_that_lost_its_lease_stops_and_never_runs_beside_the_new_holder(pg, tmp_path):
    url, service = pg
    proxy = DatabaseProxy(url)
    log = tmp_path / "workers.log"
    workers = [_start(proxy.url, "first", tmp_path)]
    try:
        diagnosis_id = service.submit(small_case("slow-takeover")).id
        _wait(lambda: service.get(diagnosis_id).status == "running" and (tmp_path / "trace").exists(), 60,
              "the first worker to run the job", log)
        workers.append(_start(url, "second", tmp_path))  # reaches the database directly
        proxy.cut()
        _wait(lambda: "second" in _trace(tmp_path), 60, "the second worker to take the job over", log)
        proxy.restore()
        _wait(lambda: "lease lost" in log.read_text(), 30, "the first worker to learn it lost the lease", log)
        (tmp_path / "release").touch()
        _wait(lambda: service.get(diagnosis_id).status == "done", 30, "the job to finish", log)
        trace = _trace(tmp_path)
        assert max(trace["first"]) < min(trace["second"]), "both workers computed the job at once"
        assert service.get(diagnosis_id).attempts == 2
        assert all(w.poll() is None for w in workers)
    finally:
        for worker in workers:
            _end(worker)
        proxy.close()


def test_a_redelivered_job_whose_lease_is_live_is_not_run_by_the_second_worker(pg, tmp_path):
    """A sweep that misjudged (or a duplicate delivery) hands the job to a second worker while
    the first still holds the lease: the second sees it live and leaves it."""
    url, service = pg
    diagnosis_id = service.submit(small_case("leased")).id
    db = Database(url)
    with db.session(immediate=True) as session:
        first = claim(session, diagnosis_id, max_attempts=3, token="first", lease_s=60)
        assert first is not None
    second = DiagnosisRunner(db, FakeDiagnoser)
    with pytest.raises(LeaseHeld):
        second.execute(diagnosis_id)
    with db.session(immediate=True) as session:
        assert finish_running(session, diagnosis_id, token="other") is None  # only the holder records
        assert finish_running(session, diagnosis_id, token="first") is not None
    assert service.get(diagnosis_id).attempts == 1
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT lease_owner FROM diagnoses WHERE id = %s", (diagnosis_id,)).fetchone() == ("first",)
    db.dispose()


def test_an_expired_lease_passes_to_the_next_claim_and_fences_the_old_holder(sqlite_url):
    from litestar.testing import TestClient

    from api.app import create_app
    from api.db.leases import renew
    from tests.api.conftest import FakeInline, ListQueue, service_settings

    app = create_app(service_settings(sqlite_url), queue=ListQueue(), inline=FakeInline())
    db = app.state.service.db
    with TestClient(app) as client:
        diagnosis_id = client.post("/v1/diagnoses", json=small_case()).json()["id"]
    with db.session(immediate=True) as session:
        assert claim(session, diagnosis_id, 3, token="old", lease_s=0.5) is not None
    with pytest.raises(LeaseHeld), db.session(immediate=True) as session:
        claim(session, diagnosis_id, 3, token="new", lease_s=30)
    time.sleep(0.6)  # the old holder fell silent past its lease
    with db.session(immediate=True) as session:
        assert claim(session, diagnosis_id, 3, token="new", lease_s=30).attempts == 2
    with db.session(immediate=True) as session:
        assert not renew(session, diagnosis_id, "old", 30)  # the old holder learns it lost the lease
        assert finish_running(session, diagnosis_id, token="old") is None
        assert renew(session, diagnosis_id, "new", 30)


def test_the_embedded_worker_after_a_kill_runs_what_its_predecessor_held(sqlite_url, tmp_path):
    """The embedded service is the file's only worker: a lease its killed predecessor left is void."""
    from api.app import _pending_ids
    from api.db.migrate import upgrade
    from api.jobs.embedded import EmbeddedQueue
    from api.services.diagnoses import DiagnosisService
    from tests.api.conftest import FakeInline, service_settings

    upgrade(sqlite_url)
    db = Database(sqlite_url)
    service = DiagnosisService(db, EmbeddedQueue(tmp_path / "queue", None), service_settings(sqlite_url), FakeInline())
    diagnosis_id = service.submit(small_case("held")).id
    with db.session(immediate=True) as session:  # the killed process's claim, its lease far from over
        assert claim(session, diagnosis_id, 3, token="killed", lease_s=600) is not None
    runner = DiagnosisRunner(db, FakeDiagnoser)
    queue = EmbeddedQueue(tmp_path / "queue", runner, pending=lambda: _pending_ids(db),
                          release_leases=runner.forget_leases)
    queue.start()
    try:
        _wait(lambda: service.get(diagnosis_id).status == "done", 20, "the restarted worker to run it")
    finally:
        queue.stop()
    assert service.get(diagnosis_id).attempts == 2
    db.dispose()
