"""Signing in to the pages when API keys exist: a cookie for reading, never for starting work."""

from __future__ import annotations

from dataclasses import replace

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.controllers.session import SESSION_COOKIE, local_path
from api.services.auth import create_key
from api.settings import AuthSettings
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case

HTML = {"accept": "text/html"}


@pytest.fixture
def keyed(sqlite_url):
    app = create_app(service_settings(sqlite_url), queue=ListQueue(), inline=FakeInline())
    key = create_key(app.state.service.db, "people")
    app.state.key_ring.invalidate()
    with TestClient(app) as client:
        yield client, key


def test_a_browser_without_a_key_is_sent_to_the_login_form(keyed):
    client, _ = keyed
    response = client.get("/library", headers=HTML, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login?next=%2Flibrary"
    api = client.get("/v1/diagnoses", follow_redirects=False)
    assert api.status_code == 401 and api.headers["content-type"].startswith("application/problem+json")
    form = client.get("/login?next=/library")
    assert form.status_code == 200 and 'name="key"' in form.text and 'value="/library"' in form.text
    assert "form-action 'self'" in form.headers["content-security-policy"]


def test_signing_in_sets_a_strict_cookie_and_opens_the_pages(keyed):
    client, key = keyed
    wrong = client.post("/login", data={"key": "rdk_wrong", "next": "/library"}, follow_redirects=False)
    assert wrong.status_code == 401 and "unknown or revoked API key" in wrong.text
    right = client.post("/login", data={"key": key, "next": "/library"}, follow_redirects=False)
    assert right.status_code == 303 and right.headers["location"] == "/library"
    cookie = right.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert client.get("/library", headers=HTML).status_code == 200
    assert client.get("/v1/diagnoses").status_code == 200  # reading the API from the same browser


def test_the_cookie_cannot_start_work(keyed):
    client, key = keyed
    client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False)
    response = client.post("/v1/diagnoses", json=small_case())
    assert response.status_code == 401
    assert client.post("/v1/diagnoses", json=small_case(), headers={"Authorization": f"Bearer {key}"}).status_code == 202


def test_logout_forgets_the_key(keyed):
    client, key = keyed
    client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False)
    client.post("/logout", follow_redirects=False)
    assert client.get("/", headers=HTML, follow_redirects=False).status_code == 303


@pytest.mark.parametrize(("target", "expected"), [
    ("/nightly/abc", "/nightly/abc"), ("//evil.example/x", "/"), ("https://evil.example", "/"),
    ("/\\evil.example", "/"), (None, "/"), ("", "/"),
    ("/\t/evil.example", "/"), ("/\n/evil.example", "/"), ("/\x7f/evil.example", "/"),
])
def test_login_only_returns_to_local_paths(target, expected):
    assert local_path(target) == expected


def test_wrong_keys_in_the_form_count_against_the_address(sqlite_url):
    settings = replace(service_settings(sqlite_url), auth=AuthSettings(failed_auth_limit="2/minute"))
    app = create_app(settings, queue=ListQueue(), inline=FakeInline())
    key = create_key(app.state.service.db, "people")
    app.state.key_ring.invalidate()
    with TestClient(app) as client:
        for _ in range(2):
            assert client.post("/login", data={"key": "rdk_wrong", "next": "/"}, follow_redirects=False).status_code == 401
        blocked = client.post("/login", data={"key": key, "next": "/"}, follow_redirects=False)
        assert blocked.status_code == 429 and "failed authentications" in blocked.text
        assert 1 <= int(blocked.headers["retry-after"]) <= 61 and "set-cookie" not in blocked.headers
        assert "form-action 'self'" in blocked.headers["content-security-policy"]
        assert client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"}).status_code == 429


def test_a_form_without_a_key_field_is_answered_not_a_crash(tmp_path, keyed):
    open_url = f"sqlite:///{tmp_path / 'open.db'}"
    open_app = create_app(service_settings(open_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(open_app) as client:  # no keys configured: nothing to check, back to the page
        assert client.post("/login", data={"next": "/"}, follow_redirects=False).status_code == 303
    client, _ = keyed
    assert client.post("/login", data={"next": "/"}, follow_redirects=False).status_code == 401
