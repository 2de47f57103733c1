"""Which library a nightly run started through the service diagnoses: a key's own, or the shared one
that `diagnose library push` fills (made-up cases; the queue is a list, nothing runs)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.db.library import library_of
from api.services.auth import create_key
from api.services.library import LibraryService
from api.settings import AuthSettings
from diagnose.case import case_from_dict
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case
from tests.api.test_diagnoses_api import assert_problem


@pytest.fixture
def keyed_app(sqlite_url):
    settings = replace(service_settings(sqlite_url),
                       auth=AuthSettings(default_rate_limit="100000/minute", failed_auth_limit="5/minute"))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        db = app.state.service.db
        # What `diagnose library push lighthouse-cases/ --tag harbour` stores: cases that belong to no key.
        cases = [case_from_dict({**small_case(f"lighthouse-{i}"), "tags": ["harbour"]}) for i in range(3)]
        LibraryService(db).push(cases)
        keys = {name: {"authorization": f"Bearer {create_key(db, name, role=role)}"}
                for name, role in (("ops", "admin"), ("mia", "user"))}
        app.state.key_ring.invalidate()
        yield client, keys, db


def test_an_admin_key_runs_the_library_pushed_from_the_command_line(keyed_app):
    client, keys, db = keyed_app
    started = client.post("/v1/nightly-runs", json={"tags": ["harbour"]}, headers=keys["ops"])
    assert started.status_code == 202, started.text
    assert started.json()["progress"]["total"] == 3
    explicit = client.post("/v1/nightly-runs", json={"tags": ["harbour"], "library": "shared"}, headers=keys["ops"])
    assert explicit.status_code == 202, explicit.text
    with db.session() as session:
        assert len(library_of(session, None, ["harbour"])) == 3


def test_a_user_key_runs_its_own_library_and_hears_where_the_pushed_cases_are(keyed_app):
    client, keys, _ = keyed_app
    empty = assert_problem(client.post("/v1/nightly-runs", json={"tags": ["harbour"]}, headers=keys["mia"]), 422, "tags")
    assert "this key's library" in empty["detail"] and '"library": "shared"' in empty["detail"]
    refused = client.post("/v1/nightly-runs", json={"library": "shared"}, headers=keys["mia"])
    assert "admin" in assert_problem(refused, 403, "library")["detail"]
    own = assert_problem(client.post("/v1/nightly-runs", json={"library": "own"}, headers=keys["ops"]), 422, "tags")
    assert "this key's library" in own["detail"]
