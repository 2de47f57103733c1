"""What the OpenAPI document promises: typed answers, links between operations, the problems
each route answers; and what constructing the app does (nothing but build objects)."""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from api.app import create_app
from tests.api.conftest import FakeInline, ListQueue, service_settings

JSON_ROUTES = {
    ("post", "/v1/diagnoses", "202"): "SubmittedDiagnosis",
    ("get", "/v1/diagnoses/{diagnosis_id}", "200"): "DiagnosisView",
    ("delete", "/v1/diagnoses/{diagnosis_id}", "202"): "DiagnosisView",
    ("post", "/v1/library", "200"): "LibraryPushResult",
    ("post", "/v1/nightly-runs", "202"): "NightlyRunView",
    ("get", "/v1/nightly-runs/{run_id}", "200"): "NightlyRunView",
    ("get", "/healthz", "200"): "Health",
}
LISTS = {
    "/v1/diagnoses": "DiagnosisView",
    "/v1/library": "LibraryEntry",
    "/v1/nightly-runs": "NightlyRunView",
}


@pytest.fixture(scope="module")
def document(tmp_path_factory) -> dict:
    url = f"sqlite:///{tmp_path_factory.mktemp('openapi') / 'service.db'}"
    with TestClient(create_app(service_settings(url), queue=ListQueue(), inline=FakeInline())) as client:
        return client.get("/schema/openapi.json").json()


def _json_schema(document: dict, method: str, path: str, status: str) -> dict:
    return document["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]


@pytest.mark.parametrize(("method", "path", "status"), list(JSON_ROUTES))
def test_each_json_answer_is_a_named_schema(document, method, path, status):
    name = JSON_ROUTES[method, path, status]
    assert _json_schema(document, method, path, status) == {"$ref": f"#/components/schemas/{name}"}


@pytest.mark.parametrize("path", list(LISTS))
def test_each_list_is_an_array_of_a_named_schema(document, path):
    schema = _json_schema(document, "get", path, "200")
    assert schema == {"type": "array", "items": {"$ref": f"#/components/schemas/{LISTS[path]}"}}


def test_a_diagnosis_documents_what_may_be_absent(document):
    view = document["components"]["schemas"]["DiagnosisView"]
    assert {"report", "error", "progress", "cancel_requested"}.isdisjoint(view["required"])
    assert {"id", "status", "links", "verdict"} <= set(view["required"])
    assert view["properties"]["status"]["enum"] == ["queued", "running", "done", "failed", "cancelled"]


def _resolve(document: dict, ref: str) -> tuple[str, str]:
    """``#/paths/~1v1~1x/get`` → ``("/v1/x", "get")``, checking the operation exists."""
    pointer = ref.removeprefix("#/paths/")
    path, method = pointer.rsplit("/", 1)
    path = path.replace("~1", "/").replace("~0", "~")
    assert method in document["paths"][path], ref
    return path, method


@pytest.mark.parametrize(("source", "parameter", "targets"), [
    ("/v1/diagnoses", "diagnosis_id", {
        ("/v1/diagnoses/{diagnosis_id}", "get"), ("/v1/diagnoses/{diagnosis_id}", "delete"),
        ("/v1/diagnoses/{diagnosis_id}/report.json", "get"), ("/v1/diagnoses/{diagnosis_id}/report.html", "get")}),
    ("/v1/nightly-runs", "run_id", {
        ("/v1/nightly-runs/{run_id}", "get"), ("/v1/nightly-runs/{run_id}/junit.xml", "get"),
        ("/v1/nightly-runs/{run_id}/summary.md", "get")}),
])
def test_creations_link_to_the_operations_on_what_they_created(document, source, parameter, targets):
    links = document["paths"][source]["post"]["responses"]["202"]["links"]
    assert {_resolve(document, link["operationRef"]) for link in links.values()} == targets
    for link in links.values():
        assert link["parameters"] == {parameter: "$response.body#/id"}
        path, method = _resolve(document, link["operationRef"])
        names = {p["name"] for p in document["paths"][path][method]["parameters"] if p["in"] == "path"}
        assert parameter in names


@pytest.mark.parametrize("path", ["/v1/diagnoses", "/v1/library", "/v1/nightly-runs"])
def test_json_bodies_document_415(document, path):
    response = document["paths"][path]["post"]["responses"]["415"]
    assert "application/problem+json" in response["content"] and "application/json" in response["description"]


def test_constructing_the_app_leaves_the_database_alone_until_startup(tmp_path):
    database = tmp_path / "service.db"
    app = create_app(service_settings(f"sqlite:///{database}"), queue=ListQueue(), inline=FakeInline())
    assert not database.exists()
    with TestClient(app) as client:
        assert database.exists()
        assert client.get("/v1/diagnoses").json() == []


def test_the_database_of_an_app_not_started_is_migrated_on_first_use(tmp_path):
    """A script or test may seed an app's database before starting it."""
    from sqlalchemy import text

    app = create_app(service_settings(f"sqlite:///{tmp_path / 'service.db'}"), queue=ListQueue(), inline=FakeInline())
    with app.state.service.db.session() as session:
        assert session.execute(text("SELECT count(*) FROM diagnoses")).scalar_one() == 0


def test_the_inline_engine_and_the_embedded_worker_share_their_models(tmp_path):
    app = create_app(service_settings(f"sqlite:///{tmp_path / 'service.db'}"))
    service = app.state.service
    assert service.inline._registry._registry is None  # constructing the app made no registry
    worker = service.queue._runner.diagnoser  # made without loading any model
    assert worker.registry is service.inline._get().registry
    service.queue.stop()
