"""The pages over HTTP (no browser): every page answers HTML with the strict headers, escapes
untrusted text, names no off-site URL, and sits behind the API-key guard."""

from __future__ import annotations

import re

import pytest
from litestar.testing import TestClient

from api.app import create_app
from api.services.auth import create_key
from tests.api.conftest import FakeInline, ListQueue, service_settings
from tests.pages.reports import case, report, run
from tests.pages.seed import MARKUP, at, gate_summary, store_diagnosis, store_library_case, store_run

ESCAPED = "&lt;script&gt;window.__pwned=1&lt;/script&gt;"


@pytest.fixture
def site(database_url):
    app = create_app(service_settings(database_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        yield client, app.state.service.db


def _seed(db) -> dict[str, str]:
    texts = [f"The bridge opened in 1937. {MARKUP}", "The bridge opened in 1952."]
    hostile = case(f"bridge {MARKUP}", texts, system=f"Answer briefly. {MARKUP}")
    before = report(case_id=hostile["id"], runs=[run(0.2, text=MARKUP)], text=MARKUP,
                    findings=[("input", "input.competing_centers", "warn")], documents=[("d1", "c0"), ("d2", "c0")])
    after = report(case_id=hostile["id"], centers={"c0": "1937", "c1": MARKUP}, documents=[("d1", "c0"), ("d2", "c1")],
                   runs=[run(0.2, semantic_entropy=0.7, pull={"c0": 0.5, "c1": 0.5}, text=MARKUP)], text=MARKUP,
                   findings=[("input", "input.competing_centers", "warn"), ("sampling", "sampling.split_center_pull", "fail")])
    ids = {"before": store_diagnosis(db, hostile, before, created_at=at(0)),
           "after": store_diagnosis(db, hostile, after, created_at=at(10)),
           "queued": store_diagnosis(db, case("later"), None, status="queued", created_at=at(20))}
    lib = store_library_case(db, hostile, [MARKUP, "dates"])
    ids["baseline_run"] = store_run(db, [(lib, ids["before"])], created_at=at(0), summary=gate_summary(
        [{"baseline": before, "current": before, "diagnosis_id": ids["before"], "baseline_diagnosis_id": None}]))
    ids["run"] = store_run(db, [(lib, ids["after"])], created_at=at(10), baseline_id=ids["baseline_run"],
                           summary=gate_summary([{"baseline": before, "current": after, "diagnosis_id": ids["after"],
                                                  "baseline_diagnosis_id": ids["before"]}]))
    return ids


def _paths(ids: dict[str, str]) -> list[str]:
    return ["/", "/?case_id=bridge", f"/diagnoses/{ids['before']}", f"/diagnoses/{ids['after']}",
            f"/diagnoses/{ids['queued']}", f"/compare/{ids['before']}/{ids['after']}", "/library", "/nightly",
            f"/nightly/{ids['run']}"]


def assert_safe_page(html: str) -> None:
    """No markup from the data, and no link off the service (``data:,`` is the empty favicon)."""
    assert MARKUP not in html and "<script" not in html.lower() and "<img" not in html.lower()
    for attribute, url in re.findall(r'\b(href|src|action)="([^"]*)"', html):
        assert attribute == "href" and (url.startswith(("/", "#")) or url == "data:,"), (attribute, url)
    assert not re.search(r"\burl\(", html), "CSS must not load anything"


def test_every_page_is_html_with_strict_headers_and_escapes_markup(site):
    client, db = site
    ids = _seed(db)
    for path in _paths(ids):
        response = client.get(path)
        assert response.status_code == 200, (path, response.text[:300])
        assert response.headers["content-type"].startswith("text/html")
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp, csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert_safe_page(response.text)
    assert ESCAPED in client.get(f"/diagnoses/{ids['after']}").text  # document text, shown as text
    assert ESCAPED in client.get("/library").text  # a tag
    assert ESCAPED in client.get(f"/nightly/{ids['run']}").text  # the case id


def test_pages_show_the_key_facts(site):
    client, db = site
    ids = _seed(db)
    compare = client.get(f"/compare/{ids['before']}/{ids['after']}").text
    assert compare.count('class="mark new"') == 1 and "+0.700" in compare
    run_page = client.get(f"/nightly/{ids['run']}").text
    assert f'href="/compare/{ids["before"]}/{ids["after"]}"' in run_page and 'id="gate"' in run_page
    queued = client.get(f"/diagnoses/{ids['queued']}").text
    assert '<meta http-equiv="refresh"' in queued and "<progress" in queued
    done = client.get(f"/diagnoses/{ids['after']}").text
    assert '<meta http-equiv="refresh"' not in done and f'href="/compare/{ids["before"]}/{ids["after"]}"' in done


def test_missing_things_are_html_404_and_an_unfinished_compare_is_409(site):
    client, db = site
    ids = _seed(db)
    for path in ("/diagnoses/nope", "/nightly/nope", f"/compare/nope/{ids['after']}"):
        response = client.get(path)
        assert response.status_code == 404 and response.headers["content-type"].startswith("text/html")
        assert "nope" in response.text and "content-security-policy" in response.headers
    pending = client.get(f"/compare/{ids['after']}/{ids['queued']}")
    assert pending.status_code == 409 and "queued" in pending.text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_pages_need_an_api_key_once_keys_exist(site):
    client, db = site
    key = create_key(db, "reader")
    client.app.state.key_ring.invalidate()
    assert client.get("/library").status_code == 401
    assert client.get("/library", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert client.get("/schema").status_code == 401  # the API docs page too
    assert client.get("/schema", headers={"Authorization": f"Bearer {key}"}).status_code == 200
