"""Every attack of the hostile-client review, replayed against the real app (SQLite and PostgreSQL).

Each request must be answered with its documented 4xx (never a 5xx), within a time
bound, with nothing stored when it is refused, and the service must still answer
``/healthz`` afterwards. The focused tests of each fix live beside this file
(test_limits_attacks, test_request_parsing, test_auth, test_jobs_health,
test_jobs_stalled, test_orphans, sampling/test_constraint_timeout); this file is
the replay of the attack list as a client sends it. The regex attack needs a real
sampled text, so it runs against a live ``diagnose serve`` with the embedded model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.services.auth import create_key
from api.settings import AuthSettings
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case
from tests.api.db_proxy import DatabaseProxy
from tests.api.test_limits_attacks import amplifying, counts
from tests.pages.live import free_port

ROOT = Path(__file__).resolve().parents[2]
ANSWER_WITHIN_S = 2.0
"""What any refused request may take on this 2-core machine, loaded by the rest of the suite."""


def _deep(depth: int) -> str:
    return '{"id": "deep", "question": "q", "documents": ' + "[" * depth + "]" * depth + "}"


Attack = Callable[[TestClient], httpx.Response]

ATTACKS: dict[str, tuple[Attack, int, str | None]] = {
    # 2. a template that multiplies the prompt, on both paths that store a case
    "template x1000 on /v1/diagnoses": (
        lambda c: c.post("/v1/diagnoses", json=amplifying(1000)), 413, "template"),
    "document_format x1000 on /v1/diagnoses": (
        lambda c: c.post("/v1/diagnoses", json=amplifying(1000, "document_format")), 413, "document_format"),
    "template x1000 on /v1/library": (
        lambda c: c.post("/v1/library", json={"cases": [amplifying(1000)]}), 413, "cases[0].template"),
    # 4. non-finite numbers
    "score NaN": (
        lambda c: c.post("/v1/diagnoses", json={**small_case(), "documents": [
            {"id": "d0", "text": "x", "score": "NaN"}]}), 422, "documents[0].score"),
    "score Infinity": (
        lambda c: c.post("/v1/diagnoses", json={**small_case(), "documents": [
            {"id": "d0", "text": "x", "score": "Infinity"}]}), 422, "documents[0].score"),
    # 5. a body nested 10,000 deep
    "JSON nested 10,000 deep": (
        lambda c: c.post("/v1/diagnoses", content=_deep(10_000), headers={"content-type": "application/json"}),
        400, "body"),
    "library body nested 10,000 deep": (
        lambda c: c.post("/v1/library", content='{"cases": ' + "[" * 10_000 + "]" * 10_000 + "}",
                         headers={"content-type": "application/json"}), 400, "body"),
    # 7. an id with a trailing newline
    "id 'abc\\n'": (lambda c: c.post("/v1/diagnoses", json=small_case("abc\n")), 422, "id"),
    # 9. JSON sent as text/plain (what a cross-site form can send)
    "JSON as text/plain": (
        lambda c: c.post("/v1/diagnoses", content=json.dumps(small_case()), headers={"content-type": "text/plain"}),
        415, "Content-Type"),
    "nightly run as a form": (
        lambda c: c.post("/v1/nightly-runs", content="tags=x",
                         headers={"content-type": "application/x-www-form-urlencoded"}), 415, "Content-Type"),
}


@pytest.fixture
def hostile_app(database_url):
    settings = replace(service_settings(database_url, capacity=5),
                       auth=AuthSettings(default_rate_limit="100000/minute", failed_auth_limit="5/minute"))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        app.state.client = client
        yield app


def _refused_quickly(app, attack: Attack, status: int, field: str | None) -> None:
    before = counts(app)
    started = time.perf_counter()
    response = attack(app.state.client)
    elapsed = time.perf_counter() - started
    assert response.status_code < 500, response.text
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    if field is not None:
        assert response.json()["field"] == field, response.json()
    assert elapsed < ANSWER_WITHIN_S, f"answered in {elapsed:.2f}s"
    assert counts(app) == before, "a refused request stored something"
    assert app.state.client.get("/healthz").status_code == 200


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_attack_is_refused_quickly_and_stores_nothing(hostile_app, name):
    _refused_quickly(hostile_app, *ATTACKS[name])


def test_a_nightly_run_over_capacity_is_refused_and_single_diagnoses_still_fit(hostile_app):
    # 3. capacity 5: a library of 4 cases fits once; with 3 diagnoses queued it no longer does
    client = hostile_app.state.client
    cases = [small_case(f"lib-{i}") for i in range(4)]
    assert client.post("/v1/library", json={"cases": cases}).status_code == 200
    for i in range(3):
        assert client.post("/v1/diagnoses", json=small_case(f"single-{i}")).status_code == 202
    before = counts(hostile_app)
    response = client.post("/v1/nightly-runs", json={})
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"]
    assert counts(hostile_app) == before
    assert client.post("/v1/diagnoses", json=small_case("single-after")).status_code == 202


def test_wrong_keys_are_rate_limited_and_closed_endpoints_need_a_key(hostile_app):
    # 9. /metrics and /schema behind the key; failed authentications limited per address
    key = create_key(hostile_app.state.service.db, "ci")
    hostile_app.state.key_ring.invalidate()
    client = hostile_app.state.client
    for path in ("/metrics", "/schema/openapi.json", "/schema"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers={"authorization": f"Bearer {key}"}).status_code == 200, path
    statuses = [client.get("/v1/diagnoses", headers={"authorization": "Bearer wrong"}).status_code for _ in range(6)]
    assert statuses[:5] == [401] * 5 and statuses[5] == 429
    limited = client.get("/v1/diagnoses", headers={"authorization": f"Bearer {key}"})
    assert limited.status_code == 429 and limited.headers["retry-after"]
    assert client.get("/healthz").status_code == 200


def test_the_docs_page_loads_no_remote_script(hostile_app):
    page = hostile_app.state.client.get("/schema")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "http://" not in page.text and "https://" not in page.text


# --- 1. a regex constraint that backtracks forever, on the live embedded service ----------------

HOSTILE_PATTERN = r"^(.|.)+(?!)"
"""Never matches, and every way of splitting the text is tried first: exponential in its length."""


@pytest.mark.models
def test_a_catastrophic_regex_neither_freezes_the_service_nor_passes_silently(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'service.db'}"}
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "diagnose.cli", "serve", "--port", str(port)], cwd=ROOT,
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        case = {**small_case("regex-attack"), "constraints": [{"type": "regex", "pattern": HOSTILE_PATTERN}],
                "sampling": {"seeds": 2, "temperatures": [0.7], "max_new_tokens": 24}}
        created = httpx.post(base + "/v1/diagnoses?mode=run", json=case, timeout=10)
        assert created.status_code == 202, created.text
        link = base + created.json()["links"]["self"]
        slowest, status, deadline = 0.0, "queued", time.monotonic() + 600
        while status not in ("done", "failed") and time.monotonic() < deadline:
            started = time.perf_counter()
            health = httpx.get(base + "/healthz", timeout=10)
            slowest = max(slowest, time.perf_counter() - started)
            assert health.status_code == 200
            status = httpx.get(link, timeout=10).json()["status"]
            time.sleep(1)
        report = httpx.get(link, timeout=10).json()
        assert status == "done", report
        assert slowest < 5.0, f"/healthz took {slowest:.1f}s while the pattern ran"
        rules = {f["rule"] for f in report["report"]["findings"]}
        assert "sampling.constraint_timeout" in rules
        run = report["report"]["sampling"]["runs"][0]
        assert "constraints[0]" in run["unavailable"]
    finally:
        server.terminate()
        server.wait(20)


# --- owners: one key's work is not another's (issue 25, item 1) ------------------------------------

def _keys(app, **roles: str) -> dict[str, dict[str, str]]:
    """``name=role`` keys on the app's database, as ``{name: authorization headers}``."""
    db = app.state.service.db
    headers = {name: {"authorization": f"Bearer {create_key(db, name, role=role)}"} for name, role in roles.items()}
    app.state.key_ring.invalidate()
    return headers


def test_a_user_key_neither_reads_lists_cancels_nor_reuses_another_keys_diagnosis(hostile_app):
    client = hostile_app.state.client
    keys = _keys(hostile_app, alice="user", bob="user", root="admin")
    queued = client.post("/v1/diagnoses", json=small_case("alice-run"), headers=keys["alice"]).json()
    inline = client.post("/v1/diagnoses?mode=inputs", json=small_case("alice-inputs"), headers=keys["alice"]).json()
    assert inline["status"] == "done"
    for diagnosis in (queued, inline):
        base = f"/v1/diagnoses/{diagnosis['id']}"
        for path in (base, f"{base}/report.json", f"{base}/report.html", f"/diagnoses/{diagnosis['id']}",
                     f"/compare/{diagnosis['id']}/{diagnosis['id']}"):
            answer = client.get(path, headers=keys["bob"])
            assert answer.status_code == 404, (path, answer.status_code)
            assert "bridge" not in answer.text and "test.inputs" not in answer.text  # neither case nor report
        assert client.delete(base, headers=keys["bob"]).status_code == 404
    assert client.get(f"/v1/diagnoses/{queued['id']}", headers=keys["alice"]).json()["status"] == "queued"
    assert client.get("/v1/diagnoses", headers=keys["bob"]).json() == []
    assert queued["id"] not in client.get("/", headers=keys["bob"]).text
    # the same case from bob is his own diagnosis, not alice's reused
    again = client.post("/v1/diagnoses", json=small_case("alice-run"), headers=keys["bob"]).json()
    assert again["id"] != queued["id"] and again["reused"] is False
    # alice sees hers only; the admin sees and may reuse everyone's
    assert {d["id"] for d in client.get("/v1/diagnoses", headers=keys["alice"]).json()} == {queued["id"], inline["id"]}
    assert len(client.get("/v1/diagnoses", headers=keys["root"]).json()) == 3
    assert client.get(f"/v1/diagnoses/{queued['id']}/report.json", headers=keys["root"]).status_code == 409
    reused = client.post("/v1/diagnoses", json=small_case("alice-run"), headers=keys["root"]).json()
    assert reused["reused"] is True and reused["id"] in (queued["id"], again["id"])
    assert client.delete(f"/v1/diagnoses/{queued['id']}", headers=keys["alice"]).json()["status"] == "cancelled"


def test_a_user_key_sees_neither_another_keys_library_nor_its_nightly_runs(hostile_app):
    client = hostile_app.state.client
    keys = _keys(hostile_app, alice="user", bob="user", root="admin")
    pushed = client.post("/v1/library", json={"cases": [small_case("faq-1")]}, headers=keys["alice"])
    assert pushed.status_code == 200, pushed.text
    assert client.get("/v1/library", headers=keys["bob"]).json() == []
    assert "faq-1" not in client.get("/library", headers=keys["bob"]).text
    refused = client.post("/v1/nightly-runs", json={}, headers=keys["bob"])
    assert refused.status_code == 422 and refused.json()["field"] == "tags"
    # bob's own case of the same id is his own library entry, alice's stays as it was
    own = client.post("/v1/library", json={"cases": [small_case("faq-1", documents=3)]}, headers=keys["bob"])
    assert own.json()["cases"][0]["status"] == "added"
    assert client.get("/v1/library", headers=keys["alice"]).json()[0]["versions"] == 1
    run = client.post("/v1/nightly-runs", json={}, headers=keys["alice"]).json()
    for path in (f"/v1/nightly-runs/{run['id']}", f"/v1/nightly-runs/{run['id']}/junit.xml",
                 f"/v1/nightly-runs/{run['id']}/summary.md", f"/nightly/{run['id']}"):
        assert client.get(path, headers=keys["bob"]).status_code == 404, path
    assert client.get("/v1/nightly-runs", headers=keys["bob"]).json() == []
    assert run["id"] not in client.get("/nightly", headers=keys["bob"]).text
    mine = client.get("/v1/diagnoses", headers=keys["alice"]).json()
    assert [d["case_id"] for d in mine] == ["faq-1"]  # the run's diagnosis is alice's
    assert client.get("/v1/diagnoses", headers=keys["bob"]).json() == []
    assert client.get(f"/v1/nightly-runs/{run['id']}", headers=keys["root"]).status_code == 200
    assert len(client.get("/v1/library", headers=keys["root"]).json()) == 2


# --- cancel always wins (issue 25, item 2) ---------------------------------------------------------

def test_a_cancel_racing_the_workers_claim_is_never_lost(hostile_app):
    """100 races of ``DELETE`` against a worker claiming and finishing the same diagnosis: whenever
    the cancel was answered (202), the diagnosis ends cancelled, never done."""
    import threading

    from api.jobs.runner import DiagnosisRunner
    from api.services.errors import Conflict
    from tests.api.conftest import FakeDiagnoser

    service = hostile_app.state.service
    runner = DiagnosisRunner(service.db, lambda: FakeDiagnoser(steps=3))
    outcomes: dict[tuple[str, str], int] = {}
    for i in range(100):
        diagnosis_id = service.submit(small_case(f"race-{i}")).id
        barrier, answer = threading.Barrier(2), {}

        def work() -> None:
            barrier.wait()
            runner.execute(diagnosis_id)

        def cancel() -> None:
            barrier.wait()
            try:
                answer["view"] = service.cancel(diagnosis_id)
            except Conflict:
                answer["view"] = None

        threads = [threading.Thread(target=work), threading.Thread(target=cancel)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        final = service.get(diagnosis_id).status
        accepted = answer["view"] is not None
        assert final == ("cancelled" if accepted else "done"), (i, answer, final)
        key = ("accepted" if accepted else "refused", final)
        outcomes[key] = outcomes.get(key, 0) + 1
    assert sum(outcomes.values()) == 100, outcomes


# --- fields that are stored or executed are bounded (issue 25, item 5) ------------------------------

def _with(**fields: Any) -> dict[str, Any]:
    return {**small_case("bounded"), **fields}


FIELD_ATTACKS: dict[str, tuple[Attack, int, str]] = {
    "5,000 regex constraints": (
        lambda c: c.post("/v1/diagnoses", json=_with(constraints=[{"type": "regex", "pattern": "a+b"}] * 5000)),
        413, "constraints"),
    "regex patterns of 40,000 characters": (
        lambda c: c.post("/v1/diagnoses", json=_with(constraints=[{"type": "regex", "pattern": "a" * 10_000}] * 4)),
        413, "constraints"),
    "150 KB tags": (lambda c: c.post("/v1/diagnoses", json=_with(tags=["t" * 150_000])), 413, "tags[0]"),
    "1,000 tags": (lambda c: c.post("/v1/diagnoses", json=_with(tags=[f"t{i}" for i in range(1000)])), 413, "tags"),
    "150 KB source": (
        lambda c: c.post("/v1/diagnoses", json=_with(documents=[{"id": "d", "text": "x", "source": "s" * 150_000}])),
        413, "documents[0].source"),
    "150 KB must_include": (
        lambda c: c.post("/v1/diagnoses", json=_with(constraints=[{"type": "must_include", "text": "m" * 150_000}])),
        413, "constraints[0].text"),
    "150 KB json.keys": (
        lambda c: c.post("/v1/diagnoses", json=_with(constraints=[{"type": "json", "keys": ["k" * 150_000]}])),
        413, "constraints[0].keys[0]"),
    "10,000 json.keys": (
        lambda c: c.post("/v1/diagnoses", json=_with(constraints=[{"type": "json", "keys": [f"k{i}" for i in range(10_000)]}])),
        413, "constraints[0].keys"),
    "150 KB tags in a library push": (
        lambda c: c.post("/v1/library", json={"cases": [_with(tags=["t" * 150_000])]}), 413, "cases[0].tags[0]"),
    "5,000 regex constraints in a library push": (
        lambda c: c.post("/v1/library", json={"cases": [_with(constraints=[{"type": "regex", "pattern": "a"}] * 5000)]}),
        413, "cases[0].constraints"),
    "repair past max_samples": (
        lambda c: c.post("/v1/diagnoses?repair=true", json=small_case("repair", seeds=8)), 413, "sampling.seeds"),
}


@pytest.mark.parametrize("name", list(FIELD_ATTACKS))
def test_each_stored_or_executed_field_is_bounded(hostile_app, name):
    _refused_quickly(hostile_app, *FIELD_ATTACKS[name])


def test_re_pushing_new_content_keeps_a_bounded_number_of_versions(hostile_app):
    client = hostile_app.state.client
    keep = hostile_app.state.service.settings.limits.max_library_versions
    for round_ in range(keep + 5):
        cases = [small_case(f"lib-{i}", documents=1 + round_ % 2) | {"question": f"round {round_}?"} for i in range(3)]
        assert client.post("/v1/library", json={"cases": cases}).status_code == 200
    assert [entry["versions"] for entry in client.get("/v1/library").json()] == [keep] * 3


# --- fair shares and cost-based admission (issue 25, item 3) ----------------------------------------

FLOOD_CASE = {"seeds": 32, "temperatures": [0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5], "max_new_tokens": 1024}
"""The flood of the review: 256 rows x 1,024 tokens, about 1,876 s of sampling at its rate."""


@pytest.fixture
def shared_app(database_url):
    """The service's default capacities and limits, keys for two people and an admin."""
    from api.settings import Limits

    # A rate as fast as the review's workers measured, assumed before any is measured here.
    settings = replace(service_settings(database_url, tokens_per_s=200.0), limits=Limits(),
                       auth=AuthSettings(default_rate_limit="100000/minute", failed_auth_limit="5/minute"))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        app.state.client = client
        yield app


def test_one_keys_flood_leaves_another_keys_diagnosis_admitted_and_done(shared_app):
    from api.jobs.runner import DiagnosisRunner
    from tests.api.conftest import FakeDiagnoser

    client = shared_app.state.client
    keys = _keys(shared_app, alice="user", bob="user")
    started = time.perf_counter()
    answers = [client.post("/v1/diagnoses", json=small_case(f"flood-{i}", **FLOOD_CASE), headers=keys["alice"])
               for i in range(64)]
    flood_s = time.perf_counter() - started
    statuses = [a.status_code for a in answers]
    assert statuses[0] == 202 and set(statuses[1:]) == {429}, statuses
    refused = answers[1].json()
    assert answers[1].headers["retry-after"] and "RAG_DIAGNOSE_KEY_SHARE" in refused["detail"], refused
    bob = client.post("/v1/diagnoses", json=small_case("bob"), headers=keys["bob"])
    assert bob.status_code == 202, bob.text
    assert client.get("/healthz").status_code == 200
    DiagnosisRunner(shared_app.state.service.db, lambda: FakeDiagnoser()).execute(bob.json()["id"])
    assert client.get(bob.json()["links"]["self"], headers=keys["bob"]).json()["status"] == "done"
    assert flood_s < 64 * ANSWER_WITHIN_S


def test_a_diagnosis_that_cannot_finish_within_the_job_time_limit_is_refused(shared_app):
    """At the rate the workers measured (140 tokens/s), the flood's case needs about 1,880 s: past
    the 1,800 s limit, it would only fail there."""
    import datetime as dt

    from api.db.models import Diagnosis

    with shared_app.state.service.db.session() as session:
        now = dt.datetime.now(dt.timezone.utc)
        session.add(Diagnosis(status="done", mode="run", case_id="measured", case={}, request_key="measured",
                              cost=140_000, started_at=now - dt.timedelta(seconds=1000), finished_at=now))
    client = shared_app.state.client
    refused = client.post("/v1/diagnoses", json=small_case("too-long", **FLOOD_CASE))
    assert refused.status_code == 413, refused.text
    assert refused.json()["field"] == "sampling.max_new_tokens"
    assert "RAG_DIAGNOSE_JOB_TIMEOUT_S" in refused.json()["detail"]
    assert client.post("/v1/diagnoses", json=small_case("fits")).status_code == 202


# --- inline work is bounded (issue 25, item 4) ------------------------------------------------------

class _SlowInline(FakeInline):
    """An inline engine whose diagnoses take 0.5 s each, one at a time (as the embedder's lock makes them)."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self._lock = threading.Lock()

    def inputs(self, case) -> dict:
        with self._lock:
            time.sleep(0.5)
            return super().inputs(case)


def test_48_inline_posts_leave_healthz_and_another_keys_read_fast(database_url):
    from concurrent.futures import ThreadPoolExecutor

    settings = replace(service_settings(database_url),
                       auth=AuthSettings(default_rate_limit="100000/minute", failed_auth_limit="5/minute"))
    app = create_app(settings, queue=ListQueue(), inline=_SlowInline())
    with TestClient(app) as client:
        app.state.client = client
        keys = _keys(app, alice="user", bob="user")
        mine = client.post("/v1/diagnoses", json=small_case("bob-run"), headers=keys["bob"]).json()
        post = lambda i: client.post("/v1/diagnoses?mode=inputs", json=small_case(f"inline-{i}", documents=20),
                                     headers=keys["alice"])
        with ThreadPoolExecutor(48) as pool:
            flood = [pool.submit(post, i) for i in range(48)]
            time.sleep(0.2)  # the flood is in flight
            started = time.perf_counter()
            health = client.get("/healthz")
            health_s = time.perf_counter() - started
            started = time.perf_counter()
            read = client.get(f"/v1/diagnoses/{mine['id']}", headers=keys["bob"])
            read_s = time.perf_counter() - started
            answers = [f.result() for f in flood]
    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) == {202, 503}, statuses
    busy = next(a for a in answers if a.status_code == 503)
    assert busy.headers["retry-after"] and "RAG_DIAGNOSE_INLINE_CONCURRENCY" in busy.json()["detail"]
    assert health.status_code == 200 and health_s < 1.0, health_s
    assert read.status_code == 200 and read_s < 2.0, read_s


# --- database faults (issue 25, item 6) --------------------------------------------------------------

@pytest.fixture
def silent_database():
    """A PostgreSQL address that accepts connections and never answers; yields its URL."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"postgresql://rag:s3cret-pw@127.0.0.1:{listener.getsockname()[1]}/rag"
    stop.set()
    thread.join(2)
    for connection in held:
        connection.close()
    listener.close()


def test_a_database_that_never_answers_gives_fast_503s(silent_database):
    app = create_app(service_settings(silent_database), queue=ListQueue(), inline=FakeInline(), migrate=False)
    with TestClient(app) as client:
        for path in ("/healthz", "/v1/diagnoses", "/"):
            started = time.perf_counter()
            response = client.get(path)
            elapsed = time.perf_counter() - started
            assert response.status_code == 503, (path, response.status_code, response.text)
            assert elapsed < 5.0, f"{path} answered in {elapsed:.1f}s"
            assert "s3cret-pw" not in response.text


def test_serve_on_an_unreachable_database_says_so_in_one_line_without_the_password(silent_database, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DATABASE_URL": silent_database}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "diagnose.cli", "serve", "--port", str(free_port())], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "unreachable" in lines[0], done.stderr
    assert "s3cret-pw" not in done.stderr + done.stdout and "***" in lines[0]
    assert time.perf_counter() - started < 60


# --- headers and sessions (issue 25, item 7) ----------------------------------------------------------

def test_forwarded_headers_are_believed_from_configured_proxies_only():
    import uvicorn

    from api.app import server_options
    from api.settings import ServiceSettings

    default = uvicorn.Config(lambda: None, **server_options(ServiceSettings()))
    assert default.proxy_headers is False  # uvicorn alone believes X-Forwarded-For from 127.0.0.1
    proxied = uvicorn.Config(lambda: None, **server_options(
        ServiceSettings(auth=AuthSettings(forwarded_allow_ips="10.0.0.5"))))
    assert proxied.proxy_headers is True and proxied.forwarded_allow_ips == "10.0.0.5"


def test_slowloris_connections_are_closed_at_the_header_timeout(tmp_path):
    """200 connections sending their headers a byte at a time are closed after 2 s; a normal
    request is still answered meanwhile."""
    import socket
    import threading

    import uvicorn

    from api.app import server_options

    settings = replace(service_settings(f"sqlite:///{tmp_path / 'service.db'}"),
                       auth=AuthSettings(header_timeout_s=2.0))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, queue=ListQueue(), inline=FakeInline()),
                                           host="127.0.0.1", port=port, log_level="warning",
                                           **server_options(settings)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.1)
        slow = []
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        started = time.monotonic()
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
        closed = 0
        for s in slow:
            try:
                while time.monotonic() - started < 15:
                    s.sendall(b"X")  # a byte of a header line, now and then
                    s.settimeout(1.0)
                    try:
                        if s.recv(1) == b"":
                            closed += 1
                            break
                    except socket.timeout:
                        continue
            except OSError:  # reset by the server: closed as well
                closed += 1
            finally:
                s.close()
        assert closed == 200 and time.monotonic() - started < 15
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_sign_in_cookie_is_a_session_and_a_stale_one_locks_nobody_out(hostile_app):
    from api.security import SESSION_COOKIE
    from api.services.auth import revoke_key

    client = hostile_app.state.client
    keys = _keys(hostile_app, alice="user", bob="user")
    alice = keys["alice"]["authorization"].removeprefix("Bearer ")
    signed_in = client.post("/login", data={"key": alice, "next": "/"}, follow_redirects=False)
    assert signed_in.status_code == 303
    assert alice not in signed_in.headers["set-cookie"] and client.cookies.get(SESSION_COOKIE)
    page = client.get("/", headers={"accept": "text/html"})
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    assert client.get("/v1/diagnoses", headers=keys["bob"]).headers["cache-control"] == "no-store"
    revoke_key(hostile_app.state.service.db, "alice")
    hostile_app.state.key_ring.invalidate()
    stale = [client.get("/v1/diagnoses") for _ in range(8)]  # the cookie is cleared by the first answer
    assert {r.status_code for r in stale} == {401}, [r.status_code for r in stale]
    assert SESSION_COOKIE in stale[0].headers["set-cookie"]
    client.cookies.set(SESSION_COOKIE, "a-session-that-ended")  # a browser that keeps sending it
    assert {client.get("/v1/diagnoses").status_code for _ in range(8)} == {401}
    assert client.get("/v1/diagnoses", headers=keys["bob"]).status_code == 200  # the address is not locked out


def test_a_cross_site_sign_in_is_refused(hostile_app):
    from api.security import SESSION_COOKIE

    client = hostile_app.state.client
    key = _keys(hostile_app, alice="user")["alice"]["authorization"].removeprefix("Bearer ")
    for headers in ({"origin": "https://evil.example"}, {"sec-fetch-site": "cross-site"},
                    {"origin": "null", "sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"},
                    {"origin": "null", "sec-fetch-site": "same-origin"}, {"origin": "null"}):
        refused = client.post("/login", data={"key": key, "next": "/"}, headers=headers, follow_redirects=False)
        assert refused.status_code == 403, (headers, refused.status_code)
        assert SESSION_COOKIE not in refused.headers.get("set-cookie", "")
    for headers in ({"origin": "http://testserver.local", "sec-fetch-site": "same-origin"},
                    {"sec-fetch-site": "same-origin"}, {}):  # the pages' same-origin policy keeps the origin
        same = client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False, headers=headers)
        assert same.status_code == 303, headers


def test_a_frozen_database_gives_fast_503s_and_recovery_is_immediate(postgres_url):
    """The server stops answering mid-session (connections stay open): each request is a 503
    within 5 s, and the first request after it answers again is served at once."""

    from api.db.migrate import upgrade
    from api.settings import DatabaseTimeouts

    import psycopg

    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # no keys left by other tests
        conn.execute("TRUNCATE sessions, api_keys CASCADE")
    proxy = DatabaseProxy(postgres_url)
    url = proxy.url
    settings = replace(service_settings(url), database=DatabaseTimeouts(db_connect_timeout_s=2))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline(), migrate=False)
    with TestClient(app) as client:
        assert client.get("/v1/diagnoses").status_code == 200
        proxy.frozen.set()
        for path in ("/v1/diagnoses", "/healthz", "/v1/diagnoses"):
            started = time.perf_counter()
            response = client.get(path)
            elapsed = time.perf_counter() - started
            assert response.status_code == 503 and elapsed < 5.0, (path, response.status_code, elapsed)
        proxy.frozen.clear()
        started = time.perf_counter()
        assert client.get("/v1/diagnoses").status_code == 200
        assert time.perf_counter() - started < 2.0
