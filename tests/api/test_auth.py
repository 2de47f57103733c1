"""Who may call what once API keys exist: /metrics and /schema behind the key, /healthz open,
the docs page without remote or inline scripts under its own CSP, and wrong keys limited per
client address (429 with Retry-After, a right key included, until the window has room)."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.services.auth import FailedAuthLimiter, KeyRing, create_key
from api.services.errors import RateLimited, Unauthorized
from api.settings import AuthSettings, ServiceSettings
from tests.api.conftest import FakeInline, ListQueue, service_settings

OPEN_WHEN_NO_KEYS = ["/metrics", "/schema", "/schema/openapi.json", "/schema/openapi.yaml",
                     "/schema/assets/swagger-ui-bundle.js"]


def make_app(url: str, **auth: str):
    settings = replace(service_settings(url), auth=replace(AuthSettings(), **auth))
    return create_app(settings, queue=ListQueue(), inline=FakeInline())


def add_key(app, name: str = "ops") -> str:
    key = create_key(app.state.service.db, name)
    app.state.key_ring.invalidate()
    return key


def assert_problem(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return response.json()


def test_metrics_and_schema_need_the_key_once_keys_exist(database_url):
    app = make_app(database_url)
    with TestClient(app) as client:
        for path in OPEN_WHEN_NO_KEYS:  # no keys: open, as the API is
            assert client.get(path).status_code == 200, path
        key = add_key(app)
        bearer = {"Authorization": f"Bearer {key}"}
        for path in OPEN_WHEN_NO_KEYS:
            refused = client.get(path)
            assert_problem(refused, 401)
            assert refused.headers["www-authenticate"] == "Bearer", path
            assert client.get(path, headers=bearer).status_code == 200, path
        assert "rag_diagnose_requests_total" in client.get("/metrics", headers=bearer).text
        assert "/v1/diagnoses" in client.get("/schema/openapi.json", headers=bearer).json()["paths"]
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"


def test_a_browser_without_a_key_is_sent_from_the_docs_page_to_the_login_form(sqlite_url):
    app = make_app(sqlite_url)
    with TestClient(app) as client:
        add_key(app)
        response = client.get("/schema", headers={"accept": "text/html"}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/login?next=%2Fschema"


def test_the_docs_page_loads_no_remote_or_inline_script_and_has_a_csp(sqlite_url):
    with TestClient(make_app(sqlite_url)) as client:
        for path in ("/schema", "/schema/swagger"):
            page = client.get(path)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            html = page.text
            assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:)?//""", html), html
            scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
            assert scripts and all('src="/schema/assets/' in attrs and not body.strip() for attrs, body in scripts)
            csp = page.headers["content-security-policy"]
            directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
            assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
            assert directives["connect-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
            assert page.headers["x-content-type-options"] == "nosniff"
        for name, kind in (("swagger-ui-bundle.js", "text/javascript"), ("swagger-init.js", "text/javascript"),
                           ("swagger-ui.css", "text/css")):
            asset = client.get(f"/schema/assets/{name}")
            assert asset.status_code == 200 and asset.headers["content-type"].startswith(kind), name
        assert '"/schema/openapi.json"' in client.get("/schema/assets/swagger-init.js").text
        assert client.get("/schema/assets/swagger-editor.js").status_code == 404  # only what the page uses
        for cdn_page in ("/schema/redoc", "/schema/elements", "/schema/rapidoc"):  # Litestar's CDN-loading UIs
            gone = client.get(cdn_page)
            assert gone.status_code == 404 and "content-security-policy" in gone.headers, cdn_page


def test_wrong_keys_get_429_with_retry_after_and_then_even_the_right_key_waits(database_url):
    app = make_app(database_url, failed_auth_limit="3/minute")
    with TestClient(app) as client:
        key = add_key(app)
        for wrong in ("Bearer rdk_wrong-1", "Bearer rdk_wrong-2", "Basic dXNlcjpwdw=="):
            assert_problem(client.get("/v1/diagnoses", headers={"Authorization": wrong}), 401)
        limited = client.get("/v1/diagnoses", headers={"Authorization": "Bearer rdk_wrong-4"})
        problem = assert_problem(limited, 429)
        assert problem["field"] == "Authorization" and "failed authentications" in problem["detail"]
        assert 1 <= int(limited.headers["retry-after"]) <= 61
        right = client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"})
        assert_problem(right, 429)  # blocked for the window: a right guess must look like a wrong one
        assert "retry-after" in right.headers
        assert_problem(client.get("/metrics", headers={"Authorization": f"Bearer {key}"}), 429)
        assert client.get("/healthz").status_code == 200


def test_missing_keys_and_right_keys_are_not_counted(sqlite_url):
    app = make_app(sqlite_url, failed_auth_limit="2/minute")
    with TestClient(app) as client:
        key = add_key(app)
        for _ in range(5):
            assert_problem(client.get("/v1/diagnoses"), 401)  # nothing sent: no guess
            assert client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def test_the_block_lifts_when_the_window_has_room(sqlite_url, monkeypatch):
    import limits.storage.memory

    clock = [time.time()]  # the limiter's in-memory window reads this clock instead of waiting
    monkeypatch.setattr(limits.storage.memory, "time", SimpleNamespace(time=lambda: clock[0]))
    app = make_app(sqlite_url, failed_auth_limit="2/second")
    with TestClient(app) as client:
        key = add_key(app)
        codes = [client.get("/v1/diagnoses", headers={"Authorization": "Bearer rdk_wrong"}).status_code
                 for _ in range(3)]
        assert codes == [401, 401, 429]
        clock[0] += 0.9
        assert client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"}).status_code == 429
        clock[0] += 0.2
        assert client.get("/v1/diagnoses", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def test_an_empty_limit_turns_the_failed_auth_limit_off(sqlite_url):
    app = make_app(sqlite_url, failed_auth_limit="")
    with TestClient(app) as client:
        add_key(app)
        codes = {client.get("/v1/diagnoses", headers={"Authorization": "Bearer rdk_wrong"}).status_code
                 for _ in range(15)}
        assert codes == {401}


def test_failures_are_counted_per_client_address(sqlite_url):
    app = make_app(sqlite_url)
    key = add_key(app)
    ring = KeyRing(app.state.service.db, "120/minute", failures=FailedAuthLimiter("2/minute"))
    for _ in range(2):
        with pytest.raises(Unauthorized):
            ring.authenticate("Bearer rdk_wrong", "10.0.0.1")
    with pytest.raises(RateLimited):
        ring.authenticate(f"Bearer {key}", "10.0.0.1")
    assert ring.authenticate(f"Bearer {key}", "10.0.0.2").key_id is not None
    app.state.service.db.dispose()


def test_the_limit_is_a_setting_and_a_bad_one_fails_at_start():
    settings = ServiceSettings.from_env({"RAG_DIAGNOSE_FAILED_AUTH_LIMIT": "5/hour"})
    assert settings.auth.failed_auth_limit == "5/hour"
    assert ServiceSettings.from_env({}).auth.failed_auth_limit == "10/minute"
    with pytest.raises(ValueError):
        FailedAuthLimiter("often")
