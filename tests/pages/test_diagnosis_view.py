"""The index rows and the diagnosis page's view: report body, progress, case text with centers."""

from __future__ import annotations

import datetime as dt

import msgspec

from api.pages.diagnoses import case_view, diagnosis_page, diagnosis_rows
from api.pages.queries import DiagnosisDetail, DiagnosisSummary
from api.pages.report_body import report_body
from diagnose.report import InputReport
from tests.pages.reports import case, report, run
from tests.pages.seed import MARKUP

WHEN = dt.datetime(2025, 3, 1, 8, 0, tzinfo=dt.timezone.utc)


def _summary(status: str = "done", progress=None, verdict: str | None = "warn", case_id: str = "bridge"):
    return DiagnosisSummary("f" * 32, case_id, "run", status, verdict, progress, WHEN, None)


def test_report_body_is_the_engine_page_inside_main_only():
    body = report_body(report(runs=[run(0.2)], findings=[("input", "input.competing_centers", "warn")], text=MARKUP))
    assert 'id="findings"' in body and 'id="sampling"' in body and 'id="environment"' in body
    assert "<main" not in body and "<html" not in body and "<style" not in body
    assert MARKUP not in body and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body


def test_documents_show_their_center_and_noise():
    data = report(centers={"c0": "1937", "c1": "1952"}, documents=[("d1", "c0"), ("d2", "c1"), ("d3", None)])
    view = case_view(case(texts=["a", "b", MARKUP]), msgspec.convert(data["input"], InputReport))
    assert [(d.id, d.center, d.relevance) for d in view.documents] == [
        ("d1", "c0: 1937", "0.75"), ("d2", "c1: 1952", "0.75"), ("d3", "noise", "0.75")]
    assert view.documents[0].color != view.documents[1].color
    assert view.documents[2].text == MARKUP  # raw here; the template escapes it


def test_documents_before_analysis_have_no_center():
    view = case_view(case(texts=["a"]), None)
    assert [(d.id, d.center, d.relevance, d.color) for d in view.documents] == [("d1", "—", "—", None)]


def test_long_center_labels_are_clipped_next_to_documents():
    data = report(centers={"c0": "x" * 100}, documents=[("d1", "c0")])
    view = case_view(case(texts=["a"]), msgspec.convert(data["input"], InputReport))
    assert view.documents[0].center == "c0: " + "x" * 39 + "…"


def test_running_diagnosis_refreshes_and_shows_progress():
    detail = DiagnosisDetail(_summary("running", {"phase": "sampling 12 rows", "completed": 7, "total": 40}, None),
                             case(), None, None)
    page = diagnosis_page(detail, previous_id=None)
    assert page.refresh_s and page.body is None and page.previous_href is None
    assert (page.progress.text, page.progress.completed, page.progress.total) == ("sampling 12 rows · 7/40", 7, 40)


def test_queued_diagnosis_without_progress_waits_for_a_worker():
    page = diagnosis_page(DiagnosisDetail(_summary("queued", None, None), case(), None, None), None)
    assert page.progress.text == "waiting for a worker" and page.progress.total is None


def test_done_diagnosis_has_the_report_and_links_to_the_previous_one():
    detail = DiagnosisDetail(_summary(), case(), report(runs=[run(0.2)]), None)
    page = diagnosis_page(detail, previous_id="e" * 32)
    assert page.refresh_s is None and page.progress is None and 'id="findings"' in page.body
    assert page.previous_href == f"/compare/{'e' * 32}/{'f' * 32}"
    assert page.links.report == f"/v1/diagnoses/{'f' * 32}/report.json"


def test_failed_diagnosis_shows_its_error():
    detail = DiagnosisDetail(_summary("failed", None, None), case(), None, {"title": "model error", "detail": "oom"})
    page = diagnosis_page(detail, None)
    assert page.refresh_s is None and [(e.key, e.value) for e in page.error] == [("title", "model error"), ("detail", "oom")]


def test_index_rows_link_pages_and_filter_by_case_with_an_encoded_query():
    rows = diagnosis_rows([_summary("running", {"phase": "sampling", "completed": 1, "total": 4}, None,
                                    case_id="a&b <c>"), _summary()])
    assert rows[0].href == f"/diagnoses/{'f' * 32}" and rows[0].short_id == "ffffffff"
    assert rows[0].case_href == "/?case_id=a%26b+%3Cc%3E"
    assert rows[0].progress == "sampling · 1/4" and rows[1].progress == ""
    assert rows[0].created == "2025-03-01 08:00 UTC"
