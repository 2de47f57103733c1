"""Schemathesis fuzzes the service from its own OpenAPI document (contract section 4).

In-process over ASGI, on a SQLite app with fake models and no worker. Every
answer must be a non-5xx whose status, content type and body are the ones the
document promises. Bounded and derandomized, so a CI run takes well under a
minute and fails the same way every time. The longer run, against a live service::

    RAG_DIAGNOSE_CAPACITY=1000000 RAG_DIAGNOSE_DEFAULT_RATE_LIMIT=1000000/minute diagnose serve --no-worker &
    schemathesis run http://127.0.0.1:8000/schema/openapi.json --max-examples 200 --seed 42 \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance

Requests that failed once are pinned in test_fuzz_findings.py.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from api.app import create_app
from api.settings import AuthSettings
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case

pytestmark = pytest.mark.fuzz

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
MAX_EXAMPLES = 60
"""Per operation and phase; the whole module stays under ~60 s on 2 cores."""


_DIRECTORY = tempfile.TemporaryDirectory(prefix="rag-diagnose-fuzz-")


def _fuzz_app():
    # Built at import: schemathesis' lazy ``from_fixture`` loader does not work on pytest 9
    # (it writes ``request.node._nodeid``), so the schema is loaded eagerly. Cheap: a SQLite
    # file in a temporary directory, migrated in ~0.1 s; the directory goes with the process.
    url = f"sqlite:///{Path(_DIRECTORY.name) / 'service.db'}"
    # Hundreds of requests from one address with no worker: lift the per-client rate limit and
    # the queue capacity (in diagnoses and in tokens), or the fuzzer ends up testing the documented
    # 429/503 (test_concurrency and test_hostile do), and its examples stop being replayable.
    settings_ = replace(service_settings(url, capacity=1_000_000, cost_capacity=10**12),
                        auth=AuthSettings(default_rate_limit="100000/minute"))
    return create_app(settings_, queue=ListQueue(), inline=FakeInline())


schema = schemathesis.openapi.from_asgi("/schema/openapi.json", _fuzz_app())


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case):
    case.call_and_validate(checks=CHECKS)


def test_links_of_an_accepted_diagnosis_answer_as_documented():
    """The fuzzer cannot guess ids; follow the links of one queued and one inline diagnosis."""
    post = schema["/v1/diagnoses"]["POST"]
    for mode in ("run", "inputs"):
        created = post.Case(body=small_case(f"linked-{mode}"), query={"mode": mode}).call_and_validate(checks=CHECKS)
        assert created.status_code == 202
        diagnosis_id = created.json()["id"]
        for path in ("/v1/diagnoses/{diagnosis_id}", "/v1/diagnoses/{diagnosis_id}/report.json",
                     "/v1/diagnoses/{diagnosis_id}/report.html"):
            schema[path]["GET"].Case(path_parameters={"diagnosis_id": diagnosis_id}).call_and_validate(checks=CHECKS)
        schema["/v1/diagnoses/{diagnosis_id}"]["DELETE"].Case(
            path_parameters={"diagnosis_id": diagnosis_id}).call_and_validate(checks=CHECKS)
