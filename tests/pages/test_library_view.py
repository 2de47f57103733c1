"""The library view: verdict strips over nightly runs, the latest verdict and gate."""

from __future__ import annotations

import datetime as dt

from api.pages.library import library_row, state_of, strip_points
from api.pages.queries import GatePoint, HistoryPoint, LibraryEntry

WHEN = dt.datetime(2025, 3, 1, 3, 0)


def _point(day: int, status: str, verdict: str | None) -> HistoryPoint:
    return HistoryPoint(f"run{day}", WHEN.replace(day=day), f"diag{day}", status, verdict)


def test_state_is_the_verdict_once_done_else_the_status():
    assert state_of(_point(1, "done", "warn")) == "warn"
    assert state_of(_point(1, "failed", None)) == "failed"
    assert state_of(_point(1, "running", None)) == "running"


def test_strip_points_keep_order_and_link_each_diagnosis():
    points = strip_points([_point(1, "done", "ok"), _point(2, "done", "fail"), _point(3, "queued", None)])
    assert [(p.state, p.href) for p in points] == [
        ("ok", "/diagnoses/diag1"), ("fail", "/diagnoses/diag2"), ("queued", "/diagnoses/diag3")]
    assert points[1].title == "2025-03-02 03:00 UTC · fail"


def test_row_shows_latest_verdict_gate_and_the_strip():
    entry = LibraryEntry("bridge", "0123456789abcdef", ["smoke", "dates"],
                         {"question": "When?", "documents": [{"id": "d1"}, {"id": "d2"}]}, WHEN,
                         [_point(1, "done", "ok"), _point(2, "done", "fail"), _point(3, "running", None)],
                         GatePoint("run2", "fail"))
    row = library_row(entry)
    assert (row.latest_verdict, row.latest_href, row.gate, row.gate_href) == ("fail", "/diagnoses/diag2", "fail", "/nightly/run2")
    assert (row.documents, row.version, row.runs, row.question) == (2, "01234567", 3, "When?")
    assert str(row.strip).count("<rect") == 3 and row.all_href == "/?case_id=bridge"


def test_case_never_run_has_no_strip():
    row = library_row(LibraryEntry("new", "ab" * 32, [], {"question": "Q"}, WHEN, [], None))
    assert row.runs == 0 and str(row.strip) == "" and row.latest_href is None and row.gate is None
