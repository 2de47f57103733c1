"""Faults with real parts: a worker killed mid-diagnosis (PostgreSQL and the embedded
SQLite queue), a database restarted during a run (a private cluster: the machine's
PostgreSQL is shared and never stopped). The diagnosis must finish after the restart,
exactly once, with nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import msgspec
import psycopg
import pytest

from tests.api.conftest import small_case
from tests.api.private_postgres import private_cluster
from tests.pages.live import free_port

pytestmark = pytest.mark.models

ROOT = Path(__file__).resolve().parents[2]
# Long enough that the kill lands mid-sampling, short enough for CI.
SAMPLING = {"seeds": 6, "temperatures": [0.7, 1.1], "max_new_tokens": 48}
FINISH_S = 600
"""How long a whole run of such a case may take: about a minute on 2 idle cores (the read tier,
the sampling, the determinism check and the control), several when the cores are shared."""


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "HF_HUB_OFFLINE": "1",
           "RAG_DIAGNOSE_HEARTBEAT_S": "1", "RAG_DIAGNOSE_STALLED_AFTER_S": "3"}
    env.update(extra)
    return env


def _diagnose(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "diagnose.cli", *args], cwd=ROOT, env=env,
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)



def _wait(predicate, timeout: float, what: str, every: float = 1.0):
    # Once a second: a run reads its documents before sampling, so a job takes a while,
    # and a faster poll would meet the service's own rate limit (429) before it ends.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def _sampling_started(get) -> bool:
    data = get()
    progress = data.get("progress") or {}
    return data["status"] == "running" and progress.get("phase", "").startswith("sampling") and progress.get("completed", 0) > 0


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            _kill(process)


def _service(url: str):
    """The API's service on the PostgreSQL at ``url``; workers are started by each test as processes."""
    from api.db.migrate import upgrade
    from api.db.session import Database
    from api.jobs.postgres import PostgresQueue
    from api.services.diagnoses import DiagnosisService
    from api.services.inline import InlineEngine
    from tests.api.conftest import service_settings

    upgrade(url)
    settings = service_settings(url)
    return DiagnosisService(Database(url), PostgresQueue(url, stalled_after_s=3), settings,
                            InlineEngine(settings.engine))


@pytest.fixture
def pg_service(postgres_url):
    service = _service(postgres_url)
    yield service
    service.queue.stop()


def test_killed_postgres_worker_job_runs_again_exactly_once(pg_service, postgres_url, tmp_path):
    service = pg_service
    log = tmp_path / "workers.log"
    first = _diagnose("worker", "--name", "first", env=_env(postgres_url), log=log)
    second = None
    try:
        diagnosis_id = service.submit(small_case("killed-worker", documents=3, **SAMPLING)).id
        _wait(lambda: _sampling_started(lambda: msgspec.to_builtins(service.get(diagnosis_id))), 240, "the first worker to sample")
        _kill(first)
        assert service.get(diagnosis_id).status == "running"  # the dead worker's claim is still there
        second = _diagnose("worker", "--name", "second", env=_env(postgres_url), log=log)
        done = _wait(lambda: (d := service.get(diagnosis_id)).status in ("done", "failed") and d, FINISH_S,
                     "the second worker to finish")
        assert done.status == "done", (done.error, log.read_text()[-3000:])
        assert done.attempts == 2
        with psycopg.connect(postgres_url) as conn:
            findings = conn.execute("SELECT count(*) FROM findings WHERE diagnosis_id = %s", (diagnosis_id,)).fetchone()[0]
            jobs = conn.execute("SELECT status FROM procrastinate_jobs WHERE args->>'diagnosis_id' = %s",
                                (diagnosis_id,)).fetchall()
        assert findings == len(done.report["findings"]) > 0
        # Exactly once: one start per worker. A second delivery (an orphan sweep racing the
        # requeue) may leave a second job row; it finds the diagnosis taken and runs nothing.
        assert log.read_text().count(f"diagnosis {diagnosis_id} started") == 2, log.read_text()[-3000:]
        assert jobs and set(jobs) == {("succeeded",)}
    finally:
        _stop(first)
        if second is not None:
            _stop(second)


def test_killed_embedded_service_resumes_the_job_after_restart(tmp_path):
    url = f"sqlite:///{tmp_path / 'svc.db'}"
    port = free_port()
    env = _env(url)
    log = tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"

    def start() -> subprocess.Popen:
        process = _diagnose("serve", "--port", str(port), "--log-level", "warning", env=env, log=log)
        _wait(lambda: _up(base), 180, "the service to answer /healthz", every=0.5)
        return process

    serve = start()
    try:
        created = httpx.post(f"{base}/v1/diagnoses", json=small_case("killed-service", documents=3, **SAMPLING)).json()
        get = lambda: httpx.get(f"{base}/v1/diagnoses/{created['id']}").json()  # noqa: E731
        _wait(lambda: _sampling_started(get), 240, "the embedded worker to sample")
        _kill(serve)
        serve = start()
        done = _wait(lambda: (d := get())["status"] in ("done", "failed") and d, FINISH_S, "the resumed job to finish")
        assert done["status"] == "done", (done.get("error"), log.read_text()[-3000:])
        assert done["attempts"] == 2
        listed = httpx.get(f"{base}/v1/diagnoses").json()
        assert [d["id"] for d in listed] == [created["id"]]
    finally:
        _stop(serve)


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def private_postgres():
    """A PostgreSQL cluster of this test's own: the machine's one is shared and never stopped."""
    with private_cluster() as cluster:
        yield cluster


def test_database_restart_during_a_run_needs_no_manual_step(private_postgres, tmp_path):
    url = private_postgres.url
    service = _service(url)
    log = tmp_path / "worker.log"
    worker = _diagnose("worker", env=_env(url), log=log)
    try:
        first = service.submit(small_case("during-restart", documents=3, **SAMPLING)).id
        _wait(lambda: _sampling_started(lambda: msgspec.to_builtins(service.get(first))), 240, "the worker to sample")
        private_postgres.stop()
        time.sleep(3)  # down for a few seconds, so the worker's progress saves certainly meet a dead database
        private_postgres.start()
        finished = lambda d: (v := service.get(d)).status in ("done", "failed") and v  # noqa: E731
        done = _wait(lambda: finished(first), FINISH_S, "the diagnosis that ran through the restart", every=1)
        assert done.status == "done", (done.error, log.read_text()[-3000:])
        # The service and the worker both carry on without being restarted.
        second = service.submit(small_case("after-restart", documents=2, seeds=2, temperatures=[0.7],
                                           max_new_tokens=8)).id
        assert _wait(lambda: finished(second), 120, "a diagnosis submitted after the restart").status == "done"
        assert worker.poll() is None
    finally:
        _stop(worker)
        service.queue.stop()
