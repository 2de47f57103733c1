"""How a request body is read: JSON only, labelled as JSON, not nested without end.

Each refusal is a 4xx problem naming the body (or its Content-Type), on both
databases; nothing is stored or queued, and the service answers /healthz after.
"""

from __future__ import annotations

import json
import time

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.guards import json_nesting_exceeds
from api.services.auth import create_key
from diagnose.case import MAX_NESTING
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case

JSON = {"content-type": "application/json"}
#: Every route that reads a JSON body, with a body it accepts.
ROUTES = {
    "/v1/diagnoses": small_case("parsing"),
    "/v1/diagnoses?mode=inputs": small_case("parsing-inline"),
    "/v1/library": {"cases": [small_case("parsing-library")]},
    "/v1/nightly-runs": {"tags": ["parsing"]},
}


@pytest.fixture
def client_and_app(database_url):
    app = create_app(service_settings(database_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, app


def assert_problem(response, status: int, field: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == status and problem["field"] == field, problem
    return problem


def assert_nothing_stored(client, app) -> None:
    assert app.state.service.queue.items == []
    assert client.get("/v1/diagnoses").json() == []
    assert client.get("/v1/library").json() == []
    assert client.get("/v1/nightly-runs").json() == []
    assert client.get("/healthz").status_code == 200


# --- Content-Type ---------------------------------------------------------------------------


NOT_JSON = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x", "application/jsonx", "text/json", ""]


@pytest.mark.parametrize("path", list(ROUTES))
def test_a_body_not_labelled_json_is_a_415(client_and_app, path):
    # An HTML form or a no-cors fetch posts these cross-site without a CORS preflight:
    # with no keys configured, any web page could start work here.
    client, app = client_and_app
    body = json.dumps(ROUTES[path]).encode()
    for content_type in NOT_JSON:
        response = client.post(path, content=body, headers={"content-type": content_type})
        problem = assert_problem(response, 415, "Content-Type")
        assert problem["title"] == "unsupported media type"
        assert response.headers["accept-post"] == "application/json"
    unlabelled = client.post(path, content=body)
    assert "content-type" not in unlabelled.request.headers
    assert_problem(unlabelled, 415, "Content-Type")
    assert_nothing_stored(client, app)


def test_an_empty_form_post_cannot_start_a_nightly_run(client_and_app):
    client, app = client_and_app
    assert client.post("/v1/library", json=ROUTES["/v1/library"]).status_code == 200
    assert_problem(client.post("/v1/nightly-runs", content=b"", headers={"content-type": "text/plain"}),
                   415, "Content-Type")
    assert client.get("/v1/nightly-runs").json() == []


def test_json_media_types_are_accepted(client_and_app):
    client, app = client_and_app
    for i, content_type in enumerate(["application/json", "application/json; charset=utf-8",
                                      "Application/JSON ; charset=UTF-8", "application/problem+json",
                                      "application/vnd.example.case+json"]):
        response = client.post("/v1/diagnoses", content=json.dumps(small_case(f"typed-{i}")).encode(),
                               headers={"content-type": content_type})
        assert response.status_code == 202, (content_type, response.text)
    assert len(app.state.service.queue.items) == 5


def test_a_post_without_body_needs_no_content_type(client_and_app):
    # ``curl -X POST .../v1/nightly-runs`` (README): every current case, the defaults.
    client, app = client_and_app
    assert client.post("/v1/library", json=ROUTES["/v1/library"]).status_code == 200
    response = client.post("/v1/nightly-runs")
    assert response.status_code == 202, response.text


def test_the_key_is_checked_before_the_content_type(client_and_app):
    client, app = client_and_app
    key = create_key(app.state.service.db, "ci")
    app.state.key_ring.invalidate()
    body = json.dumps(small_case()).encode()
    assert_problem(client.post("/v1/diagnoses", content=body, headers={"content-type": "text/plain"}),
                   401, "Authorization")
    authorized = {"content-type": "text/plain", "authorization": f"Bearer {key}"}
    assert_problem(client.post("/v1/diagnoses", content=body, headers=authorized), 415, "Content-Type")
    assert app.state.service.queue.items == []


def test_the_login_form_still_takes_a_form(client_and_app):
    client, _ = client_and_app
    response = client.post("/login", data={"key": "k", "next": "/"}, follow_redirects=False)
    assert response.status_code != 415 and response.status_code < 500


# --- nesting --------------------------------------------------------------------------------


def deep(levels: int, kind: str = "list") -> str:
    return "[" * levels + "]" * levels if kind == "list" else '{"a":' * levels + "1" + "}" * levels


DEEP = {
    "list": deep(10_000), "object": deep(10_000, "dict"), "unclosed": "[" * 10_000,
    "in-a-field": '{"id": "deep", "question": "q?", "tags": ' + deep(10_000) + "}",
    "in-cases": '{"cases": [' + deep(10_000) + "]}",
    "one-too-many": deep(MAX_NESTING + 1),
}


@pytest.mark.parametrize("path", list(ROUTES))
def test_json_nested_too_deeply_is_a_400_naming_the_body(client_and_app, path):
    # A RecursionError in the JSON decoder, answered 500, before.
    client, app = client_and_app
    for name, body in DEEP.items():
        started = time.perf_counter()
        response = client.post(path, content=body.encode(), headers=JSON)
        assert time.perf_counter() - started < 5, name
        problem = assert_problem(response, 400, "body")
        assert problem["detail"] == f"body: nested more than {MAX_NESTING} levels deep", name
    assert_nothing_stored(client, app)


def test_brackets_inside_strings_are_not_nesting(client_and_app):
    client, app = client_and_app
    case = small_case("brackets")
    case["documents"][0]["text"] = "[[{" * 2000 + ' \\" ' + "}]]" * 2000
    case["system"] = '\\"[' * 50
    response = client.post("/v1/diagnoses", json=case)
    assert response.status_code == 202, response.text
    assert client.get(f"/v1/diagnoses/{response.json()['id']}").status_code == 200


@pytest.mark.parametrize(("value", "levels"), [
    ([], 1), ({}, 1), ([[[]]], 3), ({"a": [{"b": []}]}, 4), ("[[[[", 0), (["]]]]", ["[[[[["]], 2),
    ({"k[[[[": "\\\"[[[[", "x": [[1]]}, 3), (["\\", ["\\\\", ["\"[\""]]], 3),
])
def test_nesting_is_read_from_the_bytes(value, levels):
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        body = text.encode()
        assert json_nesting_exceeds(body, levels - 1 if levels else 0) is bool(levels), text
        assert json_nesting_exceeds(body, levels) is False, text


@pytest.mark.parametrize("body", [
    b"[" * 40 + b'"' + b'\\"' * 1_000_000,      # an unclosed string of escaped quotes
    b"[" * 40 + b'"' * 2_000_000,                # two million strings
    b"[" + b"[]," * 700_000 + b"[]]",            # wide, shallow
    b"[" + (b"[" * 31 + b"]" * 31 + b",") * 30_000 + b"0]",  # just at the limit, many times
], ids=["escaped-quotes", "quotes", "wide", "comb"])
def test_nesting_scan_is_linear_on_hostile_bodies(body):
    started = time.perf_counter()
    json_nesting_exceeds(body, MAX_NESTING)
    assert time.perf_counter() - started < 2  # ~0.05 s each here; a quadratic scan takes minutes


# --- bodies that are not JSON ---------------------------------------------------------------


NOT_JSON_BODIES = {
    "malformed": (b"{not json", "JSON is malformed"),
    "latin-1": (b'{"id": "x", "question": "caf\xe9"}', "Invalid UTF-8"),
    "nan-literal": (b'{"id": "x", "question": "q", "documents": [{"id": "d", "text": "t", "score": NaN}]}',
                    "malformed"),
    "1e999": (b'{"id": "x", "question": "q", "documents": [{"id": "d", "text": "t", "score": 1e999}]}',
              "out of range"),
    "5000-digit-int": (b'{"id": "x", "question": "q", "sampling": {"top_k": 1' + b"0" * 5000 + b"}}",
                       "out of range"),
}


@pytest.mark.parametrize("path", list(ROUTES))
def test_a_body_that_is_not_json_is_a_400_naming_the_body(client_and_app, path):
    client, app = client_and_app
    for name, (body, reason) in NOT_JSON_BODIES.items():
        problem = assert_problem(client.post(path, content=body, headers=JSON), 400, "body")
        assert problem["detail"].startswith("body: not valid JSON: ") and reason in problem["detail"], name
    assert_nothing_stored(client, app)
