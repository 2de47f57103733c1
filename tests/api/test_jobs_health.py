"""``/healthz`` says 503 when nothing would run the work it accepts (contract section 4:
"200 when the service can take work"): on PostgreSQL when no worker sends heartbeats, in
the embedded mode when its worker thread is not running; 200 again once one is."""

from __future__ import annotations

import psycopg
import pytest
from litestar.testing import TestClient

from api.app import create_app
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case


def _no_worker(response, pending: int) -> dict:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["title"] == "no worker" and body["workers"] == 0 and body["pending"] == pending, body
    assert f"{pending} diagnos" in body["detail"]
    assert response.headers["retry-after"]
    return body


@pytest.fixture
def pg_url(postgres_url):
    from api.db.migrate import upgrade

    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("TRUNCATE nightly_items, nightly_runs, findings, diagnoses, api_keys CASCADE")
        conn.execute("DELETE FROM procrastinate_jobs")
        conn.execute("DELETE FROM procrastinate_workers")
    yield postgres_url
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DELETE FROM procrastinate_jobs")
        conn.execute("DELETE FROM procrastinate_workers")


def test_postgres_without_a_live_worker_is_degraded(pg_url):
    app = create_app(service_settings(pg_url, stalled_after_s=5), inline=FakeInline(), migrate=False)
    with TestClient(app) as client:
        assert client.post("/v1/diagnoses", json=small_case()).status_code == 202  # accepted and stored
        degraded = client.get("/healthz")
        body = _no_worker(degraded, pending=1)
        assert degraded.headers["retry-after"] == "5"  # the stalled-after window, not RAG_DIAGNOSE_RETRY_AFTER_S
        assert body["queue"] == "postgresql" and "diagnose worker" in body["detail"]
        with psycopg.connect(pg_url, autocommit=True) as conn:
            # A worker silent for longer than stalled_after_s is dead: still degraded.
            conn.execute("INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now() - interval '1 minute')")
            _no_worker(client.get("/healthz"), pending=1)
            conn.execute("INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now())")  # one heard from now
        ok = client.get("/healthz")
        assert ok.status_code == 200 and ok.json().pop("last_heartbeat_age_s") < 5
        assert {k: v for k, v in ok.json().items() if k != "last_heartbeat_age_s"} == {
            "status": "ok", "queue": "postgresql", "capacity": 64, "pending": 1, "workers": 1}


def test_embedded_reports_whether_its_worker_thread_runs(sqlite_url):
    app = create_app(service_settings(sqlite_url), inline=FakeInline())
    with TestClient(app) as client:
        ok = client.get("/healthz")
        assert ok.status_code == 200 and ok.json()["workers"] == 1 and ok.json()["queue"] == "sqlite"
        app.state.service.queue.stop()  # the worker thread is gone
        _no_worker(client.get("/healthz"), pending=0)


def test_embedded_without_a_worker_by_choice_stays_up(sqlite_url):
    """``serve --no-worker`` stores work for a later ``serve``: it can take work, and says so."""
    app = create_app(service_settings(sqlite_url, embedded_worker=False), inline=FakeInline())
    with TestClient(app) as client:
        health = client.get("/healthz")
        assert health.status_code == 200, health.text
        assert health.json()["workers"] == 0 and health.json()["worker"] == "disabled"


def test_a_queue_without_workers_to_watch_is_judged_by_capacity_only(sqlite_url):
    app = create_app(service_settings(sqlite_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
