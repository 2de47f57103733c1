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
from tests.api.test_limits_attacks import amplifying, counts

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


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.models
def test_a_catastrophic_regex_neither_freezes_the_service_nor_passes_silently(tmp_path):
    port = _free_port()
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
        diagnosis_id = service.submit(small_case(f"race-{i}")).view["id"]
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
        final = service.get(diagnosis_id)["status"]
        accepted = answer["view"] is not None
        assert final == ("cancelled" if accepted else "done"), (i, answer, final)
        key = ("accepted" if accepted else "refused", final)
        outcomes[key] = outcomes.get(key, 0) + 1
    assert sum(outcomes.values()) == 100, outcomes
