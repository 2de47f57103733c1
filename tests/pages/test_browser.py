"""The pages in a real browser: Debian's Chromium, driven by Playwright, against the running service.

The service runs with uvicorn on a free 127.0.0.1 port (SQLite, no worker). Its
rows hold reports the engine produced here with the embedded models: a full
``run`` of ``fixtures/cases/contradicting-years.yaml``, a ``run`` of its
one-document version (the nightly baseline; the engine's gate compares the two)
and an inputs-only diagnosis of a case whose question, system prompt, document
ids, texts and tags carry markup and script.

Every page is checked for its key elements, for requests that leave
127.0.0.1, for console errors (a CSP violation is one), for dialogs and for
``window.__pwned`` (set only if injected markup ran). Full-page screenshots at
1366×768 go to ``test-artifacts/screenshots/<page>.png``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
import pytest

from api.app import create_app
from diagnose.case import case_from_dict
from diagnose.case_file import load_case
from diagnose.pipeline import Diagnoser
from diagnose.settings import Settings
from tests.api.conftest import FakeInline, ListQueue, service_settings
from tests.pages.live import served
from tests.pages.seed import MARKUP, at, gate_summary, store_diagnosis, store_library_case, store_run

pytestmark = [pytest.mark.browser, pytest.mark.models]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
FIXTURE = ROOT / "fixtures" / "cases" / "contradicting-years.yaml"
VIEWPORT = {"width": 1366, "height": 768}
DAY = 24 * 60


def chromium_path() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        pytest.fail("Debian's chromium is not installed (scripts/ensure-services installs it: "
                    "apt-get install -y chromium); the browser tests need it")
    return found


# -- data: real reports, stored like the service stores them ----------------------------------
@pytest.fixture(scope="module")
def reports() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """``name -> (case as stored, report)``, produced by the engine on the embedded models."""
    diagnoser = Diagnoser.from_settings(Settings.from_env())
    current = load_case(FIXTURE)
    baseline = msgspec.structs.replace(current, documents=current.documents[:1])
    hostile = case_from_dict({
        "id": "markup-in-documents",
        "question": "What does the <b>page</b> say?",
        "system": f"Answer from the documents. {MARKUP}",
        "documents": [
            {"id": "d1", "text": f"The page says hello. {MARKUP}"},
            {"id": "d2<i>", "text": "The page says goodbye. <a href=\"https://example.com/x\">more</a>"},
            {"id": "d3", "text": "<style>body { display: none }</style>The weather is sunny."},
        ],
    })
    return {name: (msgspec.to_builtins(case), report.to_dict()) for name, case, report in (
        ("current", current, diagnoser.run(current)),
        ("baseline", baseline, diagnoser.run(baseline)),
        ("markup", hostile, diagnoser.inputs(hostile)),
    )}


@dataclass
class Site:
    base: str
    ids: dict[str, str]
    reports: dict[str, tuple[dict[str, Any], dict[str, Any]]]
    summary: dict[str, Any] = field(default_factory=dict)


def _seed(db, reports) -> tuple[dict[str, str], dict[str, Any]]:
    (current_case, current), (baseline_case, baseline) = reports["current"], reports["baseline"]
    markup_case, markup = reports["markup"]
    ids = {
        "baseline": store_diagnosis(db, baseline_case, baseline, created_at=at(0)),
        "markup": store_diagnosis(db, markup_case, markup, mode="inputs", created_at=at(1)),
        "current": store_diagnosis(db, current_case, current, created_at=at(DAY)),
        "failed": store_diagnosis(db, markup_case, None, status="failed", created_at=at(DAY + 1),
                                  error={"title": "model error", "detail": f"the generator stopped: {MARKUP}"}),
        "running": store_diagnosis(db, current_case, None, status="running", created_at=at(2 * DAY),
                                   progress={"phase": "sampling 12 rows on transformers", "completed": 17, "total": 40}),
    }
    v1 = store_library_case(db, baseline_case, ["dates", "smoke"], current=False, created_at=at(0))
    v2 = store_library_case(db, current_case, ["dates", "smoke"], created_at=at(DAY - 60))
    hostile = store_library_case(db, markup_case, ["<b>hostile</b>", MARKUP], created_at=at(0))
    store_library_case(db, {**baseline_case, "id": "never-run"}, ["new"], created_at=at(DAY))
    first_summary = gate_summary([
        {"baseline": baseline, "current": baseline, "diagnosis_id": ids["baseline"], "baseline_diagnosis_id": None},
        {"baseline": markup, "current": markup, "diagnosis_id": ids["markup"], "baseline_diagnosis_id": None}])
    summary = gate_summary([
        {"baseline": baseline, "current": current, "diagnosis_id": ids["current"],
         "baseline_diagnosis_id": ids["baseline"]},
        {"baseline": markup, "current": markup, "diagnosis_id": ids["markup"], "baseline_diagnosis_id": ids["markup"]}])
    ids["first_run"] = store_run(db, [(v1, ids["baseline"]), (hostile, ids["markup"])], summary=first_summary,
                                 created_at=at(0), tags=["smoke"])
    ids["run"] = store_run(db, [(v2, ids["current"]), (hostile, ids["markup"])], summary=summary,
                           baseline_id=ids["first_run"], created_at=at(DAY), tags=["smoke"])
    ids["running_run"] = store_run(db, [(v2, ids["running"]), (hostile, ids["failed"])],
                                   baseline_id=ids["run"], created_at=at(2 * DAY), tags=["smoke"])
    return ids, summary


@pytest.fixture(scope="module")
def site(reports, tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('pages') / 'service.db'}"
    app = create_app(service_settings(url), queue=ListQueue(), inline=FakeInline())
    ids, summary = _seed(app.state.service.db, reports)
    with served(app) as base:
        yield Site(base, ids, reports, summary)


# -- the browser --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@dataclass
class Visit:
    page: Any
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def visit(browser, site):
    """``visit(name, path)``: open a page, record what it does, screenshot it when the test is done."""
    contexts = []

    def open_page(name: str, path: str) -> Visit:
        context = browser.new_context(viewport=VIEWPORT, java_script_enabled=True)
        contexts.append(context)
        page = context.new_page()
        seen = Visit(page)
        host = urlsplit(site.base).netloc

        def guard(route) -> None:
            if urlsplit(route.request.url).netloc == host:
                route.continue_()
            else:
                seen.blocked.append(route.request.url)
                route.abort()

        context.route("**/*", guard)
        page.on("request", lambda request: seen.requests.append(request.url))
        page.on("console", lambda message: seen.console_errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
        page.on("dialog", lambda dialog: (seen.dialogs.append(dialog.message), dialog.dismiss()))
        response = page.goto(site.base + path, wait_until="load")
        assert response is not None and response.status == 200, (path, response and response.status)
        _check_clean(seen, site.base)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        return seen

    yield open_page
    for context in contexts:
        context.close()


def _check_clean(seen: Visit, base: str) -> None:
    """Only 127.0.0.1 was asked for anything, nothing errored, no injected markup ran."""
    assert seen.requests and all(url.startswith(base + "/") for url in seen.requests), seen.requests
    assert seen.blocked == []
    assert seen.console_errors == [] and seen.page_errors == []
    assert seen.dialogs == []
    assert seen.page.evaluate("() => typeof window.__pwned") == "undefined"


def _texts(page, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


# -- the pages ----------------------------------------------------------------------------------
def test_index_lists_recent_diagnoses_newest_first(visit, site):
    page = visit("index", "/").page
    assert page.locator("header.site nav a").all_inner_texts() == ["Diagnoses", "Library", "Nightly runs"]
    rows = page.locator("tr.diagnosis-row")
    assert rows.count() == 5
    assert _texts(page, "tr.diagnosis-row td:nth-child(2) > a:first-child") == [
        "contradicting-years", "markup-in-documents", "contradicting-years", "markup-in-documents",
        "contradicting-years"]
    assert page.locator("tr.diagnosis-row .badge.running").count() == 1
    assert page.locator("tr.diagnosis-row .badge.failed").count() == 1


def test_real_run_diagnosis_page_shows_the_report(visit, site):
    case, report = site.reports["current"]
    page = visit("diagnosis", f"/diagnoses/{site.ids['current']}").page
    assert page.locator("#verdict").inner_text().strip().lower() == report["verdict"]
    assert _texts(page, "#findings li.finding code") == [f["rule"] for f in report["findings"]]
    assert page.locator("#findings li.finding p").first.inner_text().strip() == report["findings"][0]["advice"]
    assert page.locator("#document-map circle.doc-point").count() == len(report["input"]["documents"])
    placed = sum(len(s.get("position") or []) == 2 for r in report["sampling"]["runs"] for s in r["samples"])
    assert page.locator("#document-map polygon.sample-point").count() == placed
    assert page.locator("#mass-vs-pull tr").count() == 1 + len(report["input"]["gravity_centers"]) + 1
    runs = report["sampling"]["runs"]
    assert page.locator("#sampling div.run").count() == len(runs)
    for i, run in enumerate(runs):
        section = page.locator(f"#run-{i}")
        assert section.locator("h3").text_content().strip() == f"Temperature {run['temperature']:g}"
        assert section.locator("svg").count() >= 3  # pull, first tokens, entropy
        assert section.locator(".sample").count() == len(run["samples"])
    assert page.locator("#environment").inner_text().count(str(report["environment"]["model_id"])) >= 1
    assert _texts(page, "#documents tr.document td:first-child") == [d["id"] for d in case["documents"]]
    page.click("#compare-previous")
    page.wait_for_url(f"**/compare/{site.ids['baseline']}/{site.ids['current']}")


def test_markup_in_documents_is_shown_as_text_and_never_runs(visit, site):
    case, _ = site.reports["markup"]
    seen = visit("diagnosis-markup", f"/diagnoses/{site.ids['markup']}")
    page = seen.page
    cells = _texts(page, "#documents pre.doc-text")
    assert cells == [d["text"] for d in case["documents"]]
    assert _texts(page, "#documents tr.document td:first-child") == ["d1", "d2<i>", "d3"]
    assert MARKUP in page.locator("#case").inner_text()
    assert page.locator("img").count() == 0 and page.locator("body script").count() == 0
    assert page.locator("main a[href^='https:']").count() == 0
    assert page.locator("main").is_visible()  # the document's <style> did not hide the page
    failed = visit("diagnosis-failed", f"/diagnoses/{site.ids['failed']}").page
    assert MARKUP in failed.locator("#error").inner_text()


def test_running_diagnosis_shows_progress_and_refreshes(visit, site):
    page = visit("diagnosis-running", f"/diagnoses/{site.ids['running']}").page
    assert page.locator("#status").inner_text().strip().lower() == "running"
    assert page.locator("#progress progress").get_attribute("value") == "17"
    assert page.locator("#progress").inner_text().count("sampling 12 rows on transformers · 17/40") == 1
    assert page.locator("meta[http-equiv='refresh']").get_attribute("content") == "5"


def test_compare_page_puts_two_diagnoses_side_by_side(visit, site):
    (_, baseline), (_, current) = site.reports["baseline"], site.reports["current"]
    page = visit("compare", f"/compare/{site.ids['baseline']}/{site.ids['current']}").page
    assert page.locator(".sides > section.side").count() == 2
    left, right = page.locator("#baseline"), page.locator("#current")
    assert left.locator(".side-head .badge").inner_text().strip().lower() == baseline["verdict"]
    assert right.locator(".side-head .badge").inner_text().strip().lower() == current["verdict"]
    before = {(f["stage"], f["rule"]) for f in baseline["findings"]}
    after = {(f["stage"], f["rule"]) for f in current["findings"]}
    assert right.locator(".mark.new").count() == len(after - before)
    assert left.locator(".mark.resolved").count() == len(before - after)
    temperatures = {r["temperature"] for r in current["sampling"]["runs"]} | {
        r["temperature"] for r in baseline["sampling"]["runs"]}
    assert _texts(page, "#metrics-diff th.group") == [f"T = {t:g}" for t in sorted(temperatures)]
    entropy = page.locator("#metrics-diff tr.metric", has_text="semantic entropy")
    assert entropy.count() == 1 and entropy.locator("td.delta").count() == len(temperatures)
    first = current["sampling"]["runs"][0]["semantic_entropy"] - baseline["sampling"]["runs"][0]["semantic_entropy"]
    shown = entropy.locator("td.delta").first.inner_text().strip()
    assert shown == ("±0" if abs(first) < 5e-4 else f"{first:+.3f}".replace("-", "−"))
    assert page.locator("#environment-diff").is_visible()


def test_library_shows_cases_with_their_verdicts_over_runs(visit, site):
    page = visit("library", "/library").page
    rows = page.locator("tr.library-case")
    assert _texts(page, "tr.library-case td:first-child b") == [
        "contradicting-years", "markup-in-documents", "never-run"]
    bridge = rows.nth(0)
    assert bridge.locator("svg.strip rect").count() == 3  # both versions' nightly diagnoses
    states = [bridge.locator("svg.strip rect").nth(i).get_attribute("data-state") for i in range(3)]
    assert states == [site.reports["baseline"][1]["verdict"], site.reports["current"][1]["verdict"], "running"]
    assert bridge.locator(".tags .tag").all_inner_texts() == ["dates", "smoke"]
    assert rows.nth(1).locator(".tags .tag").all_inner_texts() == ["<b>hostile</b>", MARKUP]
    assert rows.nth(2).locator(".empty").inner_text().strip() == "not run yet"
    gate = next(c["status"] for c in site.summary["cases"] if c["case_id"] == "contradicting-years")
    assert bridge.locator("td.gate .badge").inner_text().strip().lower() == gate
    assert bridge.locator("td.latest .badge").inner_text().strip().lower() == site.reports["current"][1]["verdict"]
    bridge.locator("td.latest a").click()
    page.wait_for_url(f"**/diagnoses/{site.ids['current']}")


def test_nightly_pages_show_the_trend_regressions_and_the_comparison(visit, site):
    runs = visit("nightly", "/nightly").page
    assert runs.locator("tr.run-row").count() == 3
    assert runs.locator("#trend svg.trend a").count() == 2  # finished runs only
    page = visit("nightly-run", f"/nightly/{site.ids['run']}").page
    assert page.locator("#gate").inner_text().strip().lower() == site.summary["gate"]
    assert _texts(page, "tr.case-row td:first-child") == [c["case_id"] for c in site.summary["cases"]]
    bridge = next(c for c in site.summary["cases"] if c["case_id"] == "contradicting-years")
    regressions = [c for c in bridge["changes"] if c["severity"] in ("warn", "fail")]
    assert regressions, "the one-document baseline and the two-document case must differ"
    block = page.locator("#regressions .regression").first
    assert block.locator("h3 span").first.inner_text() == "contradicting-years"
    kinds = block.locator(":scope > table.changes tr.change > td:nth-child(2)").all_inner_texts()
    assert kinds == [c["kind"] for c in regressions]
    block.locator("a.compare-link").click()
    page.wait_for_url(f"**/compare/{site.ids['baseline']}/{site.ids['current']}")
    running = visit("nightly-running", f"/nightly/{site.ids['running_run']}").page
    assert "1/2 diagnoses finished" in running.locator("#progress").inner_text()
    assert running.locator("tr.item-row").count() == 2
    assert running.locator("meta[http-equiv='refresh']").count() == 1
