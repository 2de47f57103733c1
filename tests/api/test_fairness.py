"""Issue #36, items 2 and 3: keys take turns, ``Retry-After`` is computed, and admission never
trusts an unmeasured rate (docs/service.md, guarantees 2 and 3). On SQLite and PostgreSQL."""

from __future__ import annotations

import math

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.db.models import Diagnosis
from api.jobs.runner import DiagnosisRunner
from api.services.admission import job_cost
from api.services.auth import create_key
from diagnose.case import case_from_dict
from tests.api.conftest import FakeDiagnoser, FakeInline, ListQueue, measured, service_settings, small_case


@pytest.fixture
def make_app(database_url):
    def make(**queue):
        app = create_app(service_settings(database_url, **queue), queue=ListQueue(), inline=FakeInline())
        client = TestClient(app).__enter__()
        app.state.client = client
        made.append(client)
        return app

    made: list[TestClient] = []
    yield make
    for client in made:
        client.__exit__(None, None, None)


def _bearer(app, name: str) -> dict[str, str]:
    return {"authorization": f"Bearer {create_key(app.state.service.db, name)}"}


def _run_all(app) -> list[str]:
    """Deliver every queued job, in the order they were queued, to one worker; the case ids in
    the order the worker ran them."""
    diagnoser = FakeDiagnoser()
    runner = DiagnosisRunner(app.state.service.db, lambda: diagnoser)
    for job in app.state.service.queue.items:
        runner.execute(job)
    return [case_id for _, case_id in diagnoser.calls]


# 2. fair order -------------------------------------------------------------------------------------

def test_another_keys_job_runs_next_not_after_the_whole_flood(make_app):
    app = make_app()
    alice, bob = _bearer(app, "alice"), _bearer(app, "bob")
    client = app.state.client
    for i in range(5):
        assert client.post("/v1/diagnoses", json=small_case(f"alice-{i}"), headers=alice).status_code == 202
    assert client.post("/v1/diagnoses", json=small_case("bob-0"), headers=bob).status_code == 202
    assert _run_all(app) == ["alice-0", "bob-0", "alice-1", "alice-2", "alice-3", "alice-4"]


def test_keys_take_turns_round_robin(make_app):
    app = make_app()
    keys = {name: _bearer(app, name) for name in ("alice", "bob", "carol")}
    client = app.state.client
    for name, key in keys.items():
        for i in range(2):
            assert client.post("/v1/diagnoses", json=small_case(f"{name}-{i}"), headers=key).status_code == 202
    assert _run_all(app) == ["alice-0", "bob-0", "carol-0", "alice-1", "bob-1", "carol-1"]


# 2. Retry-After from the work ahead and the rate ---------------------------------------------------

def test_a_full_queue_says_retry_after_from_the_work_ahead_and_the_measured_rate(make_app):
    cost = job_cost(case_from_dict(small_case()), "run")
    answers = {}
    for rate in (100.0, 1000.0):
        app = make_app(capacity=2, retry_after_s=30)
        measured(app, rate)
        client = app.state.client
        for i in range(2):
            assert client.post("/v1/diagnoses", json=small_case(f"c{i}")).status_code == 202
        refused = client.post("/v1/diagnoses", json=small_case("c2"))
        assert refused.status_code == 503 and refused.json()["limit"] == "RAG_DIAGNOSE_CAPACITY"
        answers[rate] = refused.headers["retry-after"]
        with app.state.service.db.session() as session:  # the next test app starts empty
            session.query(Diagnosis).delete()
    assert answers == {100.0: str(math.ceil(cost / 100)), 1000.0: str(math.ceil(cost / 1000))}


def test_a_key_over_its_share_waits_for_its_own_work_at_its_turns_share_of_the_rate(make_app):
    app = make_app(capacity=4, key_share=0.5)
    measured(app, 100.0)
    alice, bob = _bearer(app, "alice"), _bearer(app, "bob")
    client = app.state.client
    assert client.post("/v1/diagnoses", json=small_case("bob"), headers=bob).status_code == 202
    for i in range(2):
        assert client.post("/v1/diagnoses", json=small_case(f"a{i}"), headers=alice).status_code == 202
    refused = client.post("/v1/diagnoses", json=small_case("a2"), headers=alice)
    assert refused.status_code == 429 and refused.json()["limit"] == "RAG_DIAGNOSE_KEY_SHARE"
    cost = job_cost(case_from_dict(small_case()), "run")
    assert refused.headers["retry-after"] == str(math.ceil(cost * 2 / 100))  # one of hers, two keys taking turns


# 3. admission with no measured rate ----------------------------------------------------------------

def test_a_fresh_service_refuses_up_front_what_the_assumed_rate_cannot_finish_in_time(make_app):
    app = make_app(job_timeout_s=60.0)
    client = app.state.client
    big = small_case("big", seeds=16, temperatures=[0.2, 0.7, 1.2], max_new_tokens=128)
    refused = client.post("/v1/diagnoses", json=big)
    assert refused.status_code == 413, refused.text
    problem = refused.json()
    assert problem["field"] == "sampling.max_new_tokens" and problem["limit"] == "RAG_DIAGNOSE_JOB_TIMEOUT_S"
    assert problem["limit_s"] == 60.0 and problem["rate"] == "assumed" and problem["estimated_s"] > 60
    small = small_case("small", seeds=1, temperatures=[0.2], max_new_tokens=16)
    assert client.post("/v1/diagnoses", json=small).status_code == 202
    measured(app, 1000.0)  # once the workers measured a fast rate, the big one fits
    assert client.post("/v1/diagnoses", json=big).status_code == 202


def test_the_assumed_rate_must_be_above_zero():
    from api.services.admission import Admission
    from api.settings import QueueSettings

    with pytest.raises(ValueError, match="RAG_DIAGNOSE_TOKENS_PER_S"):
        Admission(QueueSettings(tokens_per_s=0.0))
