"""One request must never freeze, flood or crash the service: amplifying templates, library pushes
that skip the token check, nightly runs that ignore the queue's capacity (SQLite and PostgreSQL).

The inline engine here assembles the prompt before counting, as the real one does
(``chat_ids(build_messages(case))``), so a template that multiplies the prompt costs
what it costs in production unless the service refuses it before the expansion.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from dataclasses import replace
from typing import Any

import httpx
import msgspec
import pytest
from litestar.testing import TestClient
from sqlalchemy import func, select

from api.app import create_app
from api.db.models import Diagnosis, LibraryCase, NightlyItem, NightlyRun
from diagnose.prompt import flat_prompt
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case
from tests.api.test_diagnoses_api import assert_problem

DOCUMENT = "The bridge opened in 1937 and carries traffic over the river. " * 160  # ~10 KB


class ExpandingInline(FakeInline):
    """Counts a token per four characters of the assembled prompt (the real engine tokenizes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[int] = []

    def prompt_tokens(self, case) -> int:
        prompt = flat_prompt(case)
        self.counted.append(len(prompt))
        return len(prompt) // 4


def make_app(url: str, limits: dict[str, Any] | None = None, inline=None, **queue: Any):
    settings = service_settings(url, **queue)
    if limits:
        settings = replace(settings, limits=replace(settings.limits, **limits))
    return create_app(settings, queue=ListQueue(), inline=inline or ExpandingInline())


@pytest.fixture
def app(database_url):
    app = make_app(database_url)
    with TestClient(app) as client:
        app.state.client = client
        yield app


def counts(app) -> dict[str, int]:
    with app.state.service.db.session() as session:
        return {name: session.scalar(select(func.count()).select_from(table)) or 0
                for name, table in (("diagnoses", Diagnosis), ("runs", NightlyRun), ("items", NightlyItem),
                                    ("library", LibraryCase))}


def amplifying(repeats: int, slot: str = "template") -> dict[str, Any]:
    case = {"id": "amplified", "question": "When did the bridge open?",
            "documents": [{"id": "d1", "text": DOCUMENT}]}
    if slot == "template":
        case["template"] = "{question}" + "{documents}" * repeats
    else:
        case["document_format"] = "{text}" * repeats
    return case


def timed(call) -> tuple[Any, float, int]:
    """``(result, seconds, peak bytes allocated)``: ``call`` (a request that is refused, so
    it can be made twice) is timed once as it is and traced once (tracing slows it down)."""
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    try:
        call()
        return result, seconds, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- 1. templates multiply the prompt -------------------------------------------------------------

@pytest.mark.parametrize("slot", ["template", "document_format"])
def test_a_multiplying_template_is_refused_before_it_is_expanded(app, slot):
    client = app.state.client
    body = amplifying(1000, slot)  # 21 KB of body, 10 MB of prompt
    response, seconds, peak = timed(lambda: client.post("/v1/diagnoses", json=body))
    problem = assert_problem(response, 413, slot)
    assert "characters" in problem["detail"] and "RAG_DIAGNOSE_PROMPT_CHARS_PER_TOKEN" in problem["detail"]
    assert seconds < 1.0, seconds
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB allocated for a 21 KB request"
    assert app.state.service.inline.counted == []  # no prompt was assembled
    assert counts(app)["diagnoses"] == 0 and app.state.service.queue.items == []


def test_a_gigabyte_template_within_the_body_limit_costs_nothing(database_url):
    app = make_app(database_url, limits={"max_body_bytes": 2 * 1024 * 1024})
    body = amplifying(100_000)  # 1.1 MB of body, 1 GB of prompt
    with TestClient(app) as client:
        response, seconds, peak = timed(lambda: client.post("/v1/diagnoses", json=body))
        assert_problem(response, 413, "template")
        assert seconds < 2.0, seconds
        assert peak < 48 * 2**20, f"{peak / 2**20:.1f} MiB allocated for a 1.1 MB request"
        assert app.state.service.inline.counted == []


def test_a_template_within_the_limit_is_counted_and_accepted(app):
    client = app.state.client
    body = {**small_case("twice"), "template": "{documents}\n\nAgain:\n{documents}\n\nQ: {question}"}
    response = client.post("/v1/diagnoses", json=body)
    assert response.status_code == 202, response.text
    assert app.state.service.inline.counted and app.state.service.inline.counted[0] < 1000


def test_placeholders_inside_the_documents_are_not_expanded(app):
    """A document quoting ``{question}`` stays as written; it once pasted the question in, each time."""
    client = app.state.client
    case = {"id": "quoted", "question": "Q" * 5000 + "?",
            "documents": [{"id": "d1", "text": "{question} " * 2000}]}  # 22 KB; was 10 MB of prompt
    response = client.post("/v1/diagnoses", json=case)
    assert response.status_code == 202, response.text
    assert app.state.service.inline.counted == [len("{question} " * 2000) - 1 + len("Document [1] (id: d1)\n")
                                                 + len("\n\nQuestion: ") + 5001]


# -- 2. every stored case passes the same checks ---------------------------------------------------

def test_a_library_push_with_a_too_long_prompt_stores_nothing(app):
    client = app.state.client
    long_prompt = small_case("long")
    long_prompt["documents"][0]["text"] = "word " * 20_000  # 100 KB, 25,000 tokens: under the character bound
    for cases, field in (([small_case("ok"), long_prompt], "cases[1].documents"),
                         ([small_case("ok"), amplifying(1000)], "cases[1].template"),
                         ([amplifying(1000, "document_format")], "cases[0].document_format")):
        response, seconds, _ = timed(lambda: client.post("/v1/library", json={"cases": cases}))
        assert_problem(response, 413, field)
        assert seconds < 1.0
    assert client.get("/v1/library").json() == [] and counts(app)["library"] == 0


def test_library_pushes_are_limited_per_push_and_in_total(database_url):
    app = make_app(database_url, limits={"max_library_push_cases": 3, "max_library_cases": 5})
    with TestClient(app) as client:
        problem = assert_problem(
            client.post("/v1/library", json={"cases": [small_case(f"c{i}") for i in range(4)]}), 413, "cases")
        assert "RAG_DIAGNOSE_MAX_LIBRARY_PUSH_CASES" in problem["detail"]
        assert counts(app)["library"] == 0
        for first in (0, 3):
            pushed = client.post("/v1/library", json={"cases": [small_case(f"c{i}") for i in range(first, first + 3)]})
            assert pushed.status_code == (200 if first == 0 else 413), pushed.text
        assert "RAG_DIAGNOSE_MAX_LIBRARY_CASES" in pushed.json()["detail"] and pushed.json()["field"] == "cases"
        assert [c["case_id"] for c in client.get("/v1/library").json()] == ["c0", "c1", "c2"]
        # New versions of stored cases and two more cases still fit.
        changed = [small_case("c0", documents=3), small_case("c3"), small_case("c4")]
        assert client.post("/v1/library", json={"cases": changed}).json()["counts"] == {"updated": 1, "added": 2}
        assert_problem(client.post("/v1/library", json={"cases": [small_case("c5")]}), 413, "cases")


def test_a_library_push_is_limited_in_prompt_characters(database_url):
    app = make_app(database_url, limits={"max_library_push_prompt_chars": 50_000})
    with TestClient(app) as client:
        template = "{question}" + "{documents}" * 10  # 100 KB each: under the per-case bound
        cases = [{**amplifying(0), "id": f"c{i}", "template": template} for i in range(3)]
        problem = assert_problem(client.post("/v1/library", json={"cases": cases}), 413, "cases")
        assert "RAG_DIAGNOSE_MAX_LIBRARY_PUSH_PROMPT_CHARS" in problem["detail"]
        assert app.state.service.inline.counted == [] and counts(app)["library"] == 0


def test_library_bodies_still_name_the_field(app):
    client = app.state.client
    assert_problem(client.post("/v1/library", json={"cases": [{**small_case("x"), "tempalte": "?"}]}),
                   422, "cases[0].tempalte")
    assert_problem(client.post("/v1/library", json={"cases": "all of them"}), 422, "cases")
    assert_problem(client.post("/v1/library", json={"cases": [small_case("a")], "extra": 1}), 422, "extra")
    assert_problem(client.post("/v1/library", json=[small_case("a")]), 400)  # not an object: Litestar's own


# -- 3. nightly runs are admitted like diagnoses ---------------------------------------------------

def library(n: int) -> list[dict[str, Any]]:
    return [{**small_case(f"lib-{i:02d}"), "tags": ["smoke"]} for i in range(n)]


def test_a_nightly_run_over_the_free_capacity_is_refused_and_stores_nothing(database_url):
    app = make_app(database_url, capacity=12, tokens_per_s=1000.0)
    with TestClient(app) as client:
        assert client.post("/v1/library", json={"cases": library(10)}).status_code == 200
        for i in range(3):
            assert client.post("/v1/diagnoses", json=small_case(f"single-{i}")).status_code == 202
        before, queued = counts(app), list(app.state.service.queue.items)

        refused = client.post("/v1/nightly-runs", json={"tags": ["smoke"]})
        problem = assert_problem(refused, 503)
        assert 1 <= int(refused.headers["retry-after"]) <= 10  # one single must finish, at 1,000 tokens/s
        assert "10 cases" in problem["detail"] and "capacity 12" in problem["detail"]
        assert counts(app) == before and app.state.service.queue.items == queued
        assert client.get("/v1/nightly-runs").json() == []

        assert client.post("/v1/diagnoses", json=small_case("still-admitted")).status_code == 202
        assert client.get("/healthz").json()["pending"] == 4


def test_a_nightly_run_that_fits_is_admitted_and_then_fills_the_queue(database_url):
    app = make_app(database_url, capacity=13)
    with TestClient(app) as client:
        client.post("/v1/library", json={"cases": library(10)})
        for i in range(3):
            client.post("/v1/diagnoses", json=small_case(f"single-{i}"))
        started = client.post("/v1/nightly-runs", json={})
        assert started.status_code == 202, started.text
        assert started.json()["progress"] == {"finished": 0, "total": 10}
        assert len(app.state.service.queue.items) == 13
        assert_problem(client.post("/v1/diagnoses", json=small_case("full")), 503)


def test_a_nightly_run_larger_than_the_whole_queue_is_a_422_naming_tags(database_url):
    app = make_app(database_url, capacity=5)
    with TestClient(app) as client:
        client.post("/v1/library", json={"cases": library(10)})
        problem = assert_problem(client.post("/v1/nightly-runs", json={}), 422, "tags")
        assert "RAG_DIAGNOSE_CAPACITY" in problem["detail"]
        assert counts(app)["runs"] == 0 and counts(app)["diagnoses"] == 0


def test_concurrent_runs_and_diagnoses_never_exceed_the_capacity(database_url):
    capacity = 20
    app = make_app(database_url, capacity=capacity)
    with TestClient(app) as client:
        client.post("/v1/library", json={"cases": library(8)})

    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
            start = asyncio.Event()

            async def send(i: int) -> httpx.Response:
                await start.wait()
                if i % 5 == 0:
                    return await c.post("/v1/nightly-runs", json={})
                return await c.post("/v1/diagnoses", json=small_case(f"burst-{i}"))

            tasks = [asyncio.create_task(send(i)) for i in range(25)]
            await asyncio.sleep(0)
            start.set()
            return await asyncio.gather(*tasks)

    with TestClient(app):
        responses = asyncio.run(burst())
    assert {r.status_code for r in responses} <= {202, 503}, [r.text for r in responses if r.status_code >= 500]
    with app.state.service.db.session() as session:
        pending = session.scalar(select(func.count()).select_from(Diagnosis).where(Diagnosis.status == "queued"))
        runs = session.scalar(select(func.count()).select_from(NightlyRun))
    accepted_runs = sum(1 for i, r in enumerate(responses) if i % 5 == 0 and r.status_code == 202)
    assert runs == accepted_runs and pending == len(app.state.service.queue.items) <= capacity


def test_a_stored_case_over_the_limits_is_not_handed_to_a_worker(database_url):
    """A case stored before these checks (or under larger limits) fails in the run instead."""
    from diagnose.case import case_from_dict
    from diagnose.nightly.library import content_hash

    app = make_app(database_url)
    with TestClient(app) as client:
        client.post("/v1/library", json={"cases": library(2)})
        stale = case_from_dict(amplifying(1000))
        with app.state.service.db.session() as session:
            session.add(LibraryCase(case_id=stale.id, content_hash=content_hash(stale), tags=[],
                                    case=msgspec.to_builtins(stale), current=True))
        started = client.post("/v1/nightly-runs", json={})
        assert started.status_code == 202, started.text
        assert started.json()["progress"] == {"finished": 1, "total": 3}
        queued = app.state.service.queue.items
        with app.state.service.db.session() as session:
            refused = session.scalars(select(Diagnosis).where(Diagnosis.case_id == "amplified")).one()
            assert refused.status == "failed" and refused.id not in queued and len(queued) == 2
            assert refused.error["field"] == "template" and refused.error["title"] == "request too large"


# -- 4. typed request bodies -----------------------------------------------------------------------

def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    for variant in node.get("oneOf", node.get("anyOf", [])):
        if variant.get("type") != "null":
            node = variant
    if "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_openapi_documents_the_library_and_nightly_bodies(app):
    schema = app.state.client.get("/schema/openapi.json").json()
    push = _resolve(schema, schema["paths"]["/v1/library"]["post"]["requestBody"]["content"]["application/json"]["schema"])
    assert push["required"] == ["cases"] and push["additionalProperties"] is False
    items = push["properties"]["cases"]["items"]
    assert {"id", "question", "documents", "template", "document_format", "sampling"} <= set(items["properties"])
    assert push["properties"]["cases"]["minItems"] == 1
    run = _resolve(schema, schema["paths"]["/v1/nightly-runs"]["post"]["requestBody"]["content"]["application/json"]["schema"])
    assert {"tags", "baseline", "fail_on", "seed_offset"} <= set(run["properties"])
