"""The REST surface of contract section 4 on SQLite and PostgreSQL, with fake models and no worker."""

from __future__ import annotations

import json
import math

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.services.admission import job_cost
from api.services.auth import create_key, hash_key, revoke_key
from diagnose.case import case_from_dict
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case


@pytest.fixture
def make_client(database_url):
    clients = []

    def make(**queue):
        settings = service_settings(database_url, **queue)
        app = create_app(settings, queue=ListQueue(), inline=FakeInline())
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        return client, app

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def assert_problem(response, status: int, field: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    if field is not None:
        assert body["field"] == field, body
    return body


def test_post_queues_a_run_and_get_reads_it(make_client):
    client, app = make_client()
    response = client.post("/v1/diagnoses", json=small_case())
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["links"]["self"] == f"/v1/diagnoses/{body['id']}"
    assert app.state.service.queue.items == [body["id"]]
    read = client.get(body["links"]["self"]).json()
    assert read["id"] == body["id"] and read["status"] == "queued" and "report" not in read


def test_small_inputs_case_is_answered_inline_and_findings_are_rows(make_client):
    client, app = make_client()
    body = client.post("/v1/diagnoses?mode=inputs", json=small_case(documents=3)).json()
    assert body["status"] == "done" and body["report"]["findings"][0]["rule"] == "test.inputs"
    assert app.state.service.queue.items == []
    from api.db.models import Diagnosis

    with app.state.service.db.session() as session:
        stored = session.get(Diagnosis, body["id"])
        assert [(f.rule, f.evidence) for f in stored.findings] == [("test.inputs", {"n": 3})]
        assert stored.fingerprint_id is not None


def test_large_inputs_case_is_queued(make_client):
    client, _ = make_client(inline_inputs_max_documents=2)
    assert client.post("/v1/diagnoses?mode=inputs", json=small_case(documents=3)).json()["status"] == "queued"


def test_identical_request_reuses_the_stored_diagnosis_unless_rerun(make_client):
    client, app = make_client()
    first = client.post("/v1/diagnoses", json=small_case()).json()
    again = client.post("/v1/diagnoses", json=small_case()).json()
    assert again["id"] == first["id"] and again["reused"] is True
    other_mode = client.post("/v1/diagnoses?mode=inputs", json=small_case()).json()
    assert other_mode["id"] != first["id"]
    rerun = client.post("/v1/diagnoses?rerun=true", json=small_case()).json()
    assert rerun["id"] != first["id"] and rerun["reused"] is False
    assert len(app.state.service.queue.items) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": "x", "documents": []}, "question"),
        ({**small_case(), "sampling": {"seeds": "many"}}, "sampling.seeds"),
        ({**small_case(), "sampling": {"top_p": 3}}, "sampling.top_p"),
        ({**small_case(), "colour": "red"}, "colour"),
        ({**small_case(), "model": "no-such-model"}, "model"),
        ([1, 2, 3], None),
    ],
)
def test_bad_case_is_a_422_problem_naming_the_field(make_client, body, field):
    client, app = make_client()
    response = client.post("/v1/diagnoses", json=body)
    assert response.status_code in (400, 422)
    problem = assert_problem(response, response.status_code)
    if field:
        assert problem["field"] == field
    assert app.state.service.queue.items == []


def test_body_that_is_not_json_is_a_problem(make_client):
    client, _ = make_client()
    response = client.post("/v1/diagnoses", content=b"{not json", headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"].startswith("application/problem+json")


def test_size_limits_answer_413_naming_the_field(make_client):
    client, _ = make_client()
    assert_problem(client.post("/v1/diagnoses", json=small_case(documents=21)), 413, "documents")
    assert_problem(client.post("/v1/diagnoses", json=small_case(seeds=40, temperatures=[0.2, 0.7])), 413, "sampling.seeds")
    assert_problem(client.post("/v1/diagnoses", json=small_case(max_new_tokens=2000)), 413, "sampling.max_new_tokens")
    huge = small_case()
    huge["documents"][0]["text"] = "word " * 60_000
    assert_problem(client.post("/v1/diagnoses", json=huge), 413)
    many_words = small_case()
    many_words["documents"][0]["text"] = "word " * 20_000  # under the character bound, over the token limit
    assert "RAG_DIAGNOSE_MAX_PROMPT_TOKENS" in assert_problem(
        client.post("/v1/diagnoses", json=many_words), 413, "documents")["detail"]
    amplified = {**small_case(), "template": "{question}" + "{documents}" * 5000}  # 3 KB of body
    assert_problem(client.post("/v1/diagnoses", json=amplified), 413, "template")


def test_full_queue_answers_503_with_retry_after(make_client):
    client, app = make_client(capacity=2, retry_after_s=7, tokens_per_s=1000.0)
    for i in range(2):
        assert client.post("/v1/diagnoses", json=small_case(f"c{i}")).status_code == 202
    response = client.post("/v1/diagnoses", json=small_case("c3"))
    assert assert_problem(response, 503)["limit"] == "RAG_DIAGNOSE_CAPACITY"
    # One diagnosis ahead must finish first, at 1,000 tokens/s: not the fixed setting.
    cost = job_cost(case_from_dict(small_case()), "run")
    assert response.headers["retry-after"] == str(math.ceil(cost / 1000))
    assert len(app.state.service.queue.items) == 2
    health = client.get("/healthz")
    assert health.status_code == 503 and health.json()["pending"] == 2


def test_cancel_a_queued_diagnosis(make_client):
    client, _ = make_client()
    created = client.post("/v1/diagnoses", json=small_case()).json()
    assert client.delete(created["links"]["self"]).json()["status"] == "cancelled"
    assert_problem(client.delete(created["links"]["self"]), 409)


def test_unknown_diagnosis_is_404_problem(make_client):
    client, _ = make_client()
    assert_problem(client.get("/v1/diagnoses/nope"), 404, "id")
    assert_problem(client.get("/v1/diagnoses/nope/report.html"), 404)


def test_report_html_and_json_once_done(make_client):
    client, _ = make_client()
    created = client.post("/v1/diagnoses?mode=inputs", json=small_case()).json()
    report = client.get(created["links"]["report"])
    assert report.status_code == 200 and report.json()["case_id"] == "small"
    queued = client.post("/v1/diagnoses", json=small_case()).json()
    assert_problem(client.get(queued["links"]["report_html"]), 409)


def test_api_keys_401_then_accepted_then_revoked(make_client):
    client, app = make_client()
    db = app.state.service.db
    key = create_key(db, "ci")
    app.state.key_ring.invalidate()
    response = client.post("/v1/diagnoses", json=small_case())
    assert_problem(response, 401, "Authorization")
    assert response.headers["www-authenticate"] == "Bearer"
    assert_problem(client.get("/v1/diagnoses", headers={"Authorization": "Bearer wrong"}), 401)
    ok = client.post("/v1/diagnoses", json=small_case(), headers={"Authorization": f"Bearer {key}"})
    assert ok.status_code == 202
    assert client.get("/healthz").status_code == 200  # operations stay open
    revoke_key(db, "ci")
    app.state.key_ring.invalidate()
    assert_problem(client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"}), 401)


def test_keys_are_stored_hashed(make_client):
    _, app = make_client()
    db = app.state.service.db
    key = create_key(db, "hashed")
    from api.db.models import ApiKey

    with db.session() as session:
        stored = session.query(ApiKey).one()
        assert stored.key_hash == hash_key(key) and key not in json.dumps(stored.key_hash)


def test_per_key_rate_limit_answers_429_with_retry_after(make_client):
    client, app = make_client()
    key = create_key(app.state.service.db, "slow", rate_limit="3/minute")
    app.state.key_ring.invalidate()
    headers = {"Authorization": f"Bearer {key}"}
    codes = [client.get("/v1/diagnoses", headers=headers).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = client.get("/v1/diagnoses", headers=headers)
    assert_problem(limited, 429)
    assert 1 <= int(limited.headers["retry-after"]) <= 61


def test_openapi_health_and_metrics(make_client):
    client, _ = make_client()
    schema = client.get("/schema/openapi.json").json()
    assert "/v1/diagnoses" in schema["paths"] and "/v1/diagnoses/{diagnosis_id}" in schema["paths"]
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    client.post("/v1/diagnoses", json=small_case())
    metrics = client.get("/metrics").text
    assert "rag_diagnose_pending_diagnoses 1.0" in metrics
    assert "rag_diagnose_requests_total" in metrics


def test_a_model_path_outside_the_allowed_list_is_refused(make_client, tmp_path):
    client, app = make_client()
    response = client.post("/v1/diagnoses", json={**small_case(), "model": str(tmp_path)})
    problem = assert_problem(response, 422, "model")
    assert "RAG_DIAGNOSE_ALLOWED_MODELS" in problem["detail"]
    assert app.state.service.queue.items == []


def test_queue_refusal_is_a_503_and_the_diagnosis_is_marked_failed(make_client):
    client, app = make_client()

    def refuse(diagnosis_id: str) -> None:
        raise ConnectionError("database gone")

    app.state.service.queue.enqueue = refuse
    response = client.post("/v1/diagnoses", json=small_case())
    assert_problem(response, 503)
    assert response.headers["retry-after"]
    [stored] = client.get("/v1/diagnoses").json()
    assert stored["status"] == "failed" and stored["error"]["title"] == "not queued"


def test_an_unreachable_database_is_a_503_not_a_500(make_client, monkeypatch):
    from sqlalchemy.exc import OperationalError

    client, app = make_client()

    def down(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("the database system is shutting down"))

    monkeypatch.setattr(app.state.service, "get", down)
    response = client.get("/v1/diagnoses/anything")
    assert_problem(response, 503)
    assert response.headers["retry-after"] == "5"


def test_answers_keep_their_members_null_or_absent_as_documented(make_client):
    """Typed answers (api.responses) leave out what a diagnosis does not have yet and keep
    ``null`` where it is documented: the bodies are what they were as plain mappings."""
    client, _ = make_client()
    created = client.post("/v1/diagnoses", json=small_case()).json()
    always = {"id", "status", "mode", "case_id", "verdict", "attempts", "created_at", "started_at",
              "finished_at", "links"}
    assert set(created) == always | {"reused"} and created["reused"] is False
    assert created["verdict"] is None and created["started_at"] is None and created["finished_at"] is None
    assert set(created["links"]) == {"self", "report", "report_html", "page"}
    read = client.get(created["links"]["self"]).json()
    assert set(read) == always
    done = client.post("/v1/diagnoses?mode=inputs", json=small_case("done")).json()
    assert set(done) == always | {"reused", "report"} and done["verdict"] == "warn"
    listed = client.get("/v1/diagnoses").json()
    assert [d["id"] for d in listed] == [done["id"], created["id"]]
    assert all(set(d) == always for d in listed)  # lists leave the report out
    assert client.get("/v1/diagnoses", params={"case_id": "done"}).json()[0]["id"] == done["id"]
    assert [d["id"] for d in client.get("/v1/diagnoses", params={"status": "queued"}).json()] == [created["id"]]
    cancelled = client.delete(created["links"]["self"]).json()
    assert set(cancelled) == always and cancelled["status"] == "cancelled"


def test_a_failure_is_a_500_problem_that_tells_nothing_of_it(make_client, monkeypatch):
    client, app = make_client()

    def broken(*args, **kwargs):
        raise RuntimeError("secret at /srv/internal/path")

    monkeypatch.setattr(app.state.service, "get", broken)
    response = client.get("/v1/diagnoses/anything")
    body = assert_problem(response, 500)
    assert body == {"type": "about:blank", "title": "internal error", "status": 500,
                    "detail": "the service failed; see its log"}
    assert "secret" not in response.text and "RuntimeError" not in response.text


def test_repair_is_a_run_with_repairs_and_needs_mode_run(make_client):
    client, app = make_client()
    case = small_case("to-repair", seeds=4)  # 12 samples and a repair budget of 48: 60 of max_samples 64
    queued = client.post("/v1/diagnoses?repair=true", json=case)
    assert queued.status_code == 202, queued.text
    assert client.get(queued.json()["links"]["self"]).json()["mode"] == "repair"
    plain = client.post("/v1/diagnoses", json=case)
    assert plain.json()["id"] != queued.json()["id"]  # a repair and a plain run are different requests
    refused = client.post("/v1/diagnoses?repair=true&mode=inputs", json=case)
    assert_problem(refused, 400, "repair")
    assert app.state.service.queue.items == [queued.json()["id"], plain.json()["id"]]


def test_a_reader_url_in_a_request_is_refused_and_never_called(make_client):
    client, app = make_client()
    response = client.post("/v1/diagnoses", json={**small_case(), "reader": "http://169.254.169.254/v1"})
    problem = assert_problem(response, 422, "reader")
    assert "RAG_DIAGNOSE_READER" in problem["detail"]
    assert app.state.service.queue.items == []
    assert client.post("/v1/diagnoses", json={**small_case(), "reader": "static"}).status_code == 202
