"""Issue #36, item 5 and item 4: the service's smaller guarantees, each replayed as a client
would hit it (docs/service.md, "Guarantees", numbers 5.1-5.8 and 4).

The worker-lease and fair-order items are in test_worker_lease.py and test_fairness.py.
"""

from __future__ import annotations

import json
import math
import socket
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import httpx
import pytest
from litestar.testing import TestClient
from sqlalchemy.exc import OperationalError

from api.app import create_app, server_options
from api.db.models import Diagnosis
from api.db.store import claim, set_progress
from api.services.admission import Admission, job_cost
from api.services.auth import create_key, revoke_key
from api.settings import AuthSettings, QueueSettings
from diagnose.case import case_from_dict
from tests.api.conftest import FakeInline, ListQueue, measured, service_settings, small_case
from tests.pages.live import served


def _app(url: str, **queue):
    return create_app(service_settings(url, **queue), queue=ListQueue(), inline=FakeInline())


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return response.json()


# 5.1 /healthz: Retry-After and facts on every 503, within its deadline ------------------------

def test_healthz_with_the_database_gone_says_retry_after_and_the_last_facts(sqlite_url, monkeypatch):
    app = _app(sqlite_url)
    with TestClient(app) as client:
        assert client.post("/v1/diagnoses", json=small_case()).status_code == 202
        assert client.get("/healthz").status_code == 200

        def down():
            raise OperationalError("SELECT 1", {}, Exception("connection refused"))

        monkeypatch.setattr(app.state.service, "pending", down)
        response = client.get("/healthz")
        body = _problem(response, 503)
        assert response.headers["retry-after"] == "5"
        assert body["title"] == "unavailable" and body["last_known"]["pending"] == 1
        assert body["last_known"]["age_s"] >= 0


def test_healthz_answers_503_within_its_deadline_when_the_database_freezes(sqlite_url, monkeypatch):
    from api.controllers.health import HEALTH_DEADLINE_S

    app = _app(sqlite_url)
    release = threading.Event()
    with TestClient(app) as client:
        monkeypatch.setattr(app.state.service, "pending", lambda: release.wait(30) and 0)
        started = time.monotonic()
        response = client.get("/healthz")
        elapsed = time.monotonic() - started
        release.set()
    assert _problem(response, 503)["title"] == "unavailable" and response.headers["retry-after"] == "5"
    assert HEALTH_DEADLINE_S <= elapsed < HEALTH_DEADLINE_S + 2.0, elapsed  # slack for a loaded CI machine


def test_healthz_queue_full_says_retry_after_from_the_work_ahead_and_the_rate(sqlite_url):
    """The estimate a refused submission gets, not ``RAG_DIAGNOSE_RETRY_AFTER_S``: the assumed rate
    until one is measured, then the measured one."""
    cost = job_cost(case_from_dict(small_case()), "run")
    app = _app(sqlite_url, capacity=2, retry_after_s=30, tokens_per_s=100.0)
    with TestClient(app) as client:
        for i in range(2):
            assert client.post("/v1/diagnoses", json=small_case(f"c{i}")).status_code == 202
        refused = client.post("/v1/diagnoses", json=small_case("c2"))
        assumed = client.get("/healthz")
        assert _problem(assumed, 503)["title"] == "queue full"
        assert assumed.headers["retry-after"] == refused.headers["retry-after"] == str(math.ceil(cost / 100))
        measured(app, 1000.0)
        faster = client.get("/healthz")
        assert _problem(faster, 503)["title"] == "queue full"
        assert faster.headers["retry-after"] == str(math.ceil(cost / 1000))


def test_healthz_no_worker_says_retry_after_the_stalled_after_window(sqlite_url):
    app = create_app(service_settings(sqlite_url, stalled_after_s=12, retry_after_s=30, tokens_per_s=1000.0),
                     inline=FakeInline())
    with TestClient(app) as client:
        app.state.service.queue.stop()  # the embedded worker thread is gone
        assert client.post("/v1/diagnoses", json=small_case()).status_code == 202
        response = client.get("/healthz")
    assert _problem(response, 503)["title"] == "no worker" and response.headers["retry-after"] == "12"
    # Bounded like the estimate: 1 s to an hour.
    assert [Admission(QueueSettings(stalled_after_s=s)).no_worker_retry_after["Retry-After"]
            for s in (0.2, 7200.0)] == ["1", "3600"]


# 5.2 the login form refuses Origin: null; the pages keep their origin -----------------------

def test_the_pages_keep_their_origin_and_a_null_origin_cannot_sign_in(sqlite_url):
    app = _app(sqlite_url)
    key = create_key(app.state.service.db, "alice")
    with TestClient(app) as client:
        form = client.get("/login")
        assert form.headers["referrer-policy"] == "same-origin"
        assert '<meta name="referrer" content="same-origin">' in form.text
        refused = client.post("/login", data={"key": key, "next": "/"}, headers={"origin": "null"},
                              follow_redirects=False)
        assert refused.status_code == 403
        own = client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False,
                          headers={"origin": "http://testserver.local", "sec-fetch-site": "same-origin"})
        assert own.status_code == 303


# 5.5 the sign-in attempt cap is a documented number -------------------------------------------

def test_sign_in_attempts_are_capped_per_address_as_documented(sqlite_url):
    from pathlib import Path

    from api.controllers.session import LOGIN_RATE_LIMIT

    assert LOGIN_RATE_LIMIT == "10/minute"
    manual = (Path(__file__).resolve().parents[2] / "docs" / "service.md").read_text()
    assert "limited to 10 a minute per client address" in manual
    app = _app(sqlite_url)
    key = create_key(app.state.service.db, "alice")
    with TestClient(app) as client:
        answers = [client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False)
                   for _ in range(11)]
    assert [a.status_code for a in answers] == [303] * 10 + [429]
    assert int(answers[-1].headers["retry-after"]) > 0


# 5.3 a body trickled in is cut off -------------------------------------------------------------

def test_a_trickled_authenticated_body_gets_a_408_naming_the_body_and_is_closed_at_the_body_timeout(sqlite_url):
    settings = replace(service_settings(sqlite_url), auth=AuthSettings(header_timeout_s=5.0, body_timeout_s=1.0))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    key = create_key(app.state.service.db, "alice")
    with served(app, **server_options(settings)) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(f"POST /v1/diagnoses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                         "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode())
            started, closed, received = time.monotonic(), False, b""
            sock.settimeout(0.2)
            while time.monotonic() - started < 8:
                try:
                    chunk = sock.recv(4096)  # whatever the server says, before the next byte
                except socket.timeout:
                    try:
                        sock.sendall(b" ")  # one byte of the body now and then
                    except OSError:  # the server closed the connection
                        closed = True
                        break
                    continue
                except OSError:  # reset by the server
                    closed = True
                    break
                if chunk == b"":
                    closed = True
                    break
                received += chunk
            closed_after = time.monotonic() - started
        assert closed and closed_after < 4, closed_after
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
    head, _, body = received.partition(b"\r\n\r\n")
    status, *header_lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    assert status == "HTTP/1.1 408 Request Timeout", received
    assert headers["content-type"] == "application/problem+json" and headers["connection"] == "close"
    problem_body = json.loads(body)
    assert problem_body["status"] == 408 and problem_body["field"] == "body"
    assert "RAG_DIAGNOSE_BODY_TIMEOUT_S" in problem_body["detail"]


# 5.4 revoking a key stops its work ----------------------------------------------------------------

def test_revoking_a_key_cancels_its_queued_and_stops_its_running_diagnoses(database_url):
    app = _app(database_url)
    db = app.state.service.db
    key = create_key(db, "alice")
    other = create_key(db, "bob")
    with TestClient(app) as client:
        ids = [client.post("/v1/diagnoses", json=small_case(f"c{i}"),
                           headers={"authorization": f"Bearer {key}"}).json()["id"] for i in range(2)]
        kept = client.post("/v1/diagnoses", json=small_case("bob"), headers={"authorization": f"Bearer {other}"})
        with db.session(immediate=True) as session:
            assert claim(session, ids[0], max_attempts=3) is not None  # a worker runs it
        revoke_key(db, "alice")
        with db.session() as session:
            assert session.get(Diagnosis, ids[1]).status == "cancelled"
            assert session.get(Diagnosis, ids[0]).cancel_requested
            assert set_progress(session, ids[0], {"phase": "sampling"})  # its worker stops at the next report
            assert session.get(Diagnosis, kept.json()["id"]).status == "queued"


# 5.5 a repeated query parameter, 5.6 a 413 for the body ---------------------------------------

def test_a_repeated_mode_is_a_400_naming_it(sqlite_url):
    app = _app(sqlite_url)
    with TestClient(app) as client:
        body = _problem(client.post("/v1/diagnoses?mode=inputs&mode=run", json=small_case()), 400)
        assert body["field"] == "mode" and "2 times" in body["detail"]
        assert app.state.service.queue.items == []
        assert client.get("/v1/library?tag=a&tag=b").status_code == 200  # a list parameter repeats


def test_a_body_over_the_size_limit_is_a_413_naming_the_body(sqlite_url):
    app = _app(sqlite_url)
    with TestClient(app) as client:
        oversized = {**small_case(), "question": "x" * 300_000}
        body = _problem(client.post("/v1/diagnoses", json=oversized), 413)
        assert body["field"] == "body" and "RAG_DIAGNOSE_MAX_BODY_BYTES" in body["detail"]


# 4. SQLite: reads do not wait behind a writer -----------------------------------------------------

def _reads_behind_a_held_lock(sqlite_url, paths) -> dict:
    """Another writer holds the SQLite lock and 50 posts wait on it; then each of ``paths``
    (``{mine}``: a stored diagnosis's id) is read: path -> (answer, seconds)."""
    app = _app(sqlite_url)
    with served(app) as base:
        with httpx.Client(base_url=base, timeout=30) as client:
            mine = client.post("/v1/diagnoses", json=small_case("mine")).json()["id"]
        writer = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), timeout=0)
        writer.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        reads = {}
        try:
            with httpx.Client(base_url=base, timeout=60, limits=limits) as client, ThreadPoolExecutor(50) as pool:
                posts = [pool.submit(client.post, "/v1/diagnoses", json=small_case(f"p{i}")) for i in range(50)]
                time.sleep(1.0)  # the posts are in, waiting on the lock
                for path in paths:
                    started = time.monotonic()
                    read = client.get(path.format(mine=mine))
                    reads[path] = (read, time.monotonic() - started)
                writer.rollback()  # the lock is free again: the posts still waiting go through
                answers = [p.result() for p in posts]
        finally:
            writer.close()
    for path, (read, seconds) in reads.items():
        print(f"{path}: answered {read.status_code} in {seconds:.2f} s behind a held write lock and 50 waiting posts")
    assert {a.status_code for a in answers} <= {202, 503}
    assert all(a.headers.get("retry-after") for a in answers if a.status_code == 503)
    return reads


def test_sqlite_reads_answer_at_once_while_a_writer_holds_the_lock_and_posts_wait(sqlite_url):
    reads = _reads_behind_a_held_lock(sqlite_url, ["/v1/diagnoses/{mine}"])
    read, read_s = reads["/v1/diagnoses/{mine}"]
    # Well under one busy timeout (2 s), let alone the queue of posts ahead (37.7 s before).
    assert read.status_code == 200 and read_s < 1.5, (read.status_code, read_s)


def test_sqlite_library_runs_and_pages_answer_at_once_while_a_writer_holds_the_lock(sqlite_url):
    """The other read-only GETs on the database take the read threads too (they waited 5 s and
    more for a thread of the shared pool, behind the posts)."""
    paths = ["/v1/nightly-runs", "/v1/library", "/", "/diagnoses/{mine}", "/nightly", "/library"]
    reads = _reads_behind_a_held_lock(sqlite_url, paths)
    assert {path: read.status_code for path, (read, _) in reads.items()} == dict.fromkeys(paths, 200)
    slow = {path: round(seconds, 2) for path, (_, seconds) in reads.items() if seconds >= 1.5}
    assert not slow, slow


@pytest.mark.parametrize("path, read", [
    ("/v1/diagnoses/anything", "api.services.diagnoses.DiagnosisService.get"),
    ("/v1/nightly-runs", "api.services.nightly.NightlyService.list"),
    ("/v1/library", "api.services.library.LibraryService.list"),
    ("/", "api.pages.queries.PageQueries.recent"),
])
def test_a_read_the_database_does_not_answer_in_time_is_a_503_with_retry_after(sqlite_url, monkeypatch, path, read):
    from api.settings import DatabaseTimeouts

    settings = replace(service_settings(sqlite_url), database=DatabaseTimeouts(db_request_deadline_s=0.5))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    release = threading.Event()
    with TestClient(app) as client:
        monkeypatch.setattr(read, lambda *args, **kwargs: release.wait(30))
        started = time.monotonic()
        response = client.get(path)
        elapsed = time.monotonic() - started
        release.set()
    body = _problem(response, 503)
    assert response.headers["retry-after"] == "5" and "RAG_DIAGNOSE_DB_REQUEST_DEADLINE_S" in body["detail"]
    assert elapsed < 1.5, elapsed
