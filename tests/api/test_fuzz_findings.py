"""Requests that answered 5xx or broke the OpenAPI document before; each is a 4xx problem now.

Found with schemathesis and by probing what it pointed at (see test_fuzz.py);
these run on both databases, because the NUL findings were PostgreSQL-only.
"""

from __future__ import annotations

import msgspec
import pytest
from litestar.testing import TestClient

from api.app import create_app
from diagnose.case import Case
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case


@pytest.fixture
def client_and_app(database_url):
    app = create_app(service_settings(database_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        yield client, app


def assert_problem(response, status: int, field: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == field


@pytest.mark.parametrize("mode", ["run", "inputs"])
def test_nul_in_case_text_is_a_422_naming_the_field(client_and_app, mode):
    # PostgreSQL: "unsupported Unicode escape sequence" from jsonb, answered 500.
    client, app = client_and_app
    case = small_case("nul", documents=2)
    case["documents"][1]["text"] = "opened in\u00001931"
    assert_problem(client.post(f"/v1/diagnoses?mode={mode}", json=case), 422, "documents[1].text")
    assert_problem(client.post("/v1/diagnoses", json={**small_case(), "tags": ["ok", "n\u0000"]}), 422, "tags[1]")
    assert app.state.service.queue.items == []
    assert client.get("/v1/diagnoses").json() == []


def test_nul_in_library_cases_and_nightly_baseline_is_a_422(client_and_app):
    client, _ = client_and_app
    pushed = client.post("/v1/library", json={"cases": [small_case("a"), {**small_case("b"), "tags": ["n\u0000"]}]})
    assert_problem(pushed, 422, "cases[1].tags[0]")
    assert client.post("/v1/library", json={"cases": [small_case("a")]}).status_code == 200
    assert_problem(client.post("/v1/nightly-runs", json={"baseline": "x\u0000"}), 422, "baseline")


@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("GET", "/v1/diagnoses/%00x", "diagnosis_id"),
        ("GET", "/v1/diagnoses/a%00/report.json", "diagnosis_id"),
        ("DELETE", "/v1/diagnoses/%00", "diagnosis_id"),
        ("GET", "/v1/diagnoses?case_id=a%00b", "case_id"),
    ],
)
def test_nul_in_path_or_query_is_a_400_naming_the_parameter(client_and_app, method, url, field):
    # PostgreSQL: "PostgreSQL text fields cannot contain NUL (0x00) bytes", answered 500.
    client, _ = client_and_app
    assert_problem(client.request(method, url), 400, field)


@pytest.mark.parametrize("pattern", ["a{99999999999}", "(" * 1000 + ")" * 1000])
def test_regex_constraint_python_cannot_compile_is_a_422(client_and_app, pattern):
    # OverflowError / RecursionError from re.compile escaped case validation: 500.
    client, _ = client_and_app
    case = {**small_case(), "constraints": [{"type": "regex", "pattern": pattern}]}
    assert_problem(client.post("/v1/diagnoses", json=case), 422, "constraints[0].pattern")


@pytest.mark.parametrize(("path", "value"), [
    ("documents[0].score", "NaN"), ("documents[1].score", "Infinity"), ("documents[0].score", "-Infinity"),
    ("sampling.temperatures[1]", "NaN"), ("sampling.top_p", "Infinity"), ("sampling.repetition_penalty", "nan"),
])
def test_non_finite_number_is_a_422_naming_the_field(client_and_app, path, value):
    # PostgreSQL: "invalid input syntax for type json" (NaN is no JSON number), answered 500;
    # SQLite stored the non-standard JSON.
    client, app = client_and_app
    case = small_case("nan", documents=2)
    if path.startswith("documents"):
        case["documents"][int(path[10])]["score"] = value
    else:
        case["sampling"] = {"temperatures": [0.2, value]} if "temperatures" in path else {path[9:]: value}
    for mode in ("run", "inputs"):
        problem = client.post(f"/v1/diagnoses?mode={mode}", json=case)
        assert_problem(problem, 422, path)
        assert problem.json()["detail"].startswith(f"{path}: must be a finite number")
    assert_problem(client.post("/v1/library", json={"cases": [small_case("a"), case]}), 422, f"cases[1].{path}")
    assert app.state.service.queue.items == []
    assert client.get("/v1/diagnoses").json() == [] and client.get("/v1/library").json() == []
    assert client.get("/healthz").status_code == 200


@pytest.mark.parametrize("case_id", ["abc\n", "abc\r\n", "a\nb"])
def test_case_id_with_a_newline_is_a_422(client_and_app, case_id):
    # ``^...$`` with re.match took "abc\n"; the id went into the database and the pages.
    client, app = client_and_app
    assert_problem(client.post("/v1/diagnoses", json=small_case(case_id)), 422, "id")
    assert_problem(client.post("/v1/library", json={"cases": [small_case(case_id)]}), 422, "cases[0].id")
    assert app.state.service.queue.items == []
    assert client.get("/v1/diagnoses").json() == [] and client.get("/v1/library").json() == []
    assert client.get("/healthz").status_code == 200


def test_openapi_documents_the_case_body_and_problem_answers(client_and_app):
    client, _ = client_and_app
    document = client.get("/schema/openapi.json").json()
    post = document["paths"]["/v1/diagnoses"]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["properties"]) == set(Case.__struct_fields__)
    assert body["required"] == ["id", "question"] and body["additionalProperties"] is False
    assert "$ref" not in msgspec.json.encode(body).decode()  # inlined: no dangling #/$defs
    for status in ("400", "413", "422", "503"):
        assert list(post["responses"][status]["content"]) == ["application/problem+json"]
    read = document["paths"]["/v1/diagnoses/{diagnosis_id}"]["get"]["responses"]
    assert {"200", "404"} <= set(read) and "application/problem+json" in read["404"]["content"]
    assert "/metrics" not in document["paths"]  # text/plain, not JSON; still served
    assert client.get("/metrics").status_code == 200
