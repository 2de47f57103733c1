"""Signing in with an API key in real Chromium: the form posts under the strict CSP,
the cookie opens the pages, and nothing leaves 127.0.0.1. The API docs page too:
the browser is sent to sign in, then Swagger UI renders the document under its
own CSP (a violation is a console error) from this site's scripts and stylesheet."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from api.app import create_app
from api.services.auth import create_key
from tests.api.conftest import FakeInline, ListQueue, service_settings
from tests.pages.live import served
from tests.pages.test_browser import SCREENSHOTS, VIEWPORT, browser  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser]


@contextmanager
def _watched_page(chromium):
    """A fresh page, and every request URL and console or page error it meets while in use."""
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page, requests, errors
    finally:
        context.close()


@pytest.fixture(scope="module")
def keyed_site(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('login') / 'service.db'}"
    app = create_app(service_settings(url), queue=ListQueue(), inline=FakeInline())
    key = create_key(app.state.service.db, "reader")
    with served(app) as base:
        yield base, key


def test_sign_in_with_a_key_then_read_the_pages(browser, keyed_site):  # noqa: F811
    base, key = keyed_site
    with _watched_page(browser) as (page, requests, errors):
        page.goto(base + "/library", wait_until="load")
        assert page.url == base + "/login?next=%2Flibrary"
        page.fill("#key", "rdk_not-a-key")
        page.click("button[type=submit]")
        assert "unknown or revoked API key" in page.inner_text("[role=alert]")
        assert errors == ["Failed to load resource: the server responded with a status of 401 (Unauthorized)"]
        errors.clear()
        page.fill("#key", key)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/library")
        assert page.locator("h1").first.inner_text().strip() != "Sign in"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "library-after-login.png"), full_page=True)
        assert errors == []  # a CSP violation (e.g. a blocked form post) is a console error
        assert all(url.startswith(base + "/") for url in requests), requests


def test_the_docs_page_renders_under_its_csp_after_signing_in(browser, keyed_site):  # noqa: F811
    base, key = keyed_site
    with _watched_page(browser) as (page, requests, errors):
        page.goto(base + "/schema", wait_until="load")
        assert page.url == base + "/login?next=%2Fschema"
        page.fill("#key", key)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/schema")
        page.wait_for_selector(".opblock", timeout=20_000)
        assert "rag-diagnose" in page.locator(".info .title").first.inner_text()
        assert page.locator(".opblock-summary-path", has_text="/v1/diagnoses").count() >= 1
        page.locator(".opblock").first.click()
        page.wait_for_selector(".opblock-body")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "api-docs.png"), full_page=False)
        assert errors == []
        assert all(url.startswith(base + "/") for url in requests), requests
        assert base + "/schema/openapi.json" in requests
