"""The nightly pages' views: regressions with their evidence, compare links, progress, trend."""

from __future__ import annotations

import datetime as dt

from api.pages.nightly import case_gate, change_view, run_page, run_row, trend
from api.pages.queries import RunDetail, RunItem, RunSummary

WHEN = dt.datetime(2025, 3, 1, 3, 0)


def _run(run_id: str, summary=None, statuses=None, status: str = "done", day: int = 1) -> RunSummary:
    return RunSummary(run_id, status, ["smoke"], "fail", None, summary, WHEN.replace(day=day), None, statuses or {})


CHANGES = [
    {"kind": "center_shift", "severity": "fail", "temperature": 0.8, "baseline": {"label": "1937", "share": 1.0},
     "current": {"label": "1952", "share": 0.67}, "evidence": {"p_value": 0.01, "counts": [6, 2]},
     "message": "another center now leads"},
    {"kind": "new_finding", "severity": "warn", "temperature": None, "baseline": None,
     "current": "input.competing_centers", "evidence": {}, "message": "new finding"},
    {"kind": "not_compared", "severity": "info", "temperature": 1.0, "baseline": None, "current": 0.5,
     "evidence": {}, "message": "temperature missing in the baseline"},
]


def test_case_gate_splits_regressions_from_notes_and_links_both_diagnoses():
    entry = {"case_id": "bridge", "status": "fail", "changes": CHANGES, "diagnosis_id": "b" * 32,
             "baseline_diagnosis_id": "a" * 32}
    gate = case_gate(0, entry, RunItem("bridge", "b" * 32, "done", "fail"))
    assert [c.kind for c in gate.regressions] == ["center_shift", "new_finding"]
    assert [c.kind for c in gate.notes] == ["not_compared"]
    assert gate.compare_href == f"/compare/{'a' * 32}/{'b' * 32}" and gate.diagnosis_href == f"/diagnoses/{'b' * 32}"
    assert gate.verdict == "fail" and gate.anchor == "case-0"


def test_case_without_baseline_has_no_compare_link():
    gate = case_gate(1, {"case_id": "new", "status": "pass", "changes": [], "diagnosis_id": "b" * 32,
                         "baseline_diagnosis_id": None}, None)
    assert gate.compare_href is None and gate.verdict is None and gate.regressions == []


def test_change_values_and_evidence_read_as_text():
    view = change_view(CHANGES[0])
    assert (view.temperature, view.baseline, view.current) == (
        "0.8", '{"label": "1937", "share": 1.0}', '{"label": "1952", "share": 0.67}')
    assert [(e.key, e.block) for e in view.details] == [
        ("p_value", False), ("counts", True), ("baseline", True), ("current", True)]
    assert view.details[0].value == "0.010" and view.details[1].value == "[\n  6,\n  2\n]"
    assert change_view(CHANGES[1]).temperature == "all" and change_view(CHANGES[1]).baseline == "—"


def test_a_finding_value_reads_as_its_rule_and_long_values_are_clipped():
    finding = {"stage": "input", "rule": "input.competing_centers", "severity": "warn", "advice": "x" * 500}
    view = change_view({"kind": "new_finding", "severity": "warn", "temperature": None, "baseline": None,
                        "current": finding, "evidence": {}, "message": "new"})
    assert view.current == "input.competing_centers (warn)"
    assert [e.key for e in view.details] == ["current"] and "x" * 500 in view.details[0].value
    long = change_view({**CHANGES[0], "baseline": list(range(100))})
    assert len(long.baseline) == 60 and long.baseline.endswith("…")


def test_unfinished_run_counts_progress_from_its_diagnoses_and_refreshes():
    detail = RunDetail(_run("r1", None, {"done": 2, "running": 1, "failed": 1}, status="running"),
                       [RunItem("a", "d" * 32, "done", "ok"), RunItem("b", "e" * 32, "running", None)])
    page = run_page(detail)
    assert page.refresh_s and page.cases == [] and page.run.progress == "3/4"
    assert [c for c in page.run.counts] == [("pass", "—"), ("warn", "—"), ("fail", "—")]
    assert [(i.case_id, i.status) for i in page.items] == [("a", "done"), ("b", "running")]


def test_finished_run_lists_cases_and_the_regressed_ones():
    summary = {"counts": {"pass": 1, "warn": 0, "fail": 1}, "gate": "fail", "fail_on": "fail", "cases": [
        {"case_id": "ok-case", "status": "pass", "changes": [], "diagnosis_id": "c" * 32, "baseline_diagnosis_id": None},
        {"case_id": "bridge", "status": "fail", "changes": CHANGES, "diagnosis_id": "b" * 32,
         "baseline_diagnosis_id": "a" * 32}]}
    page = run_page(RunDetail(_run("r2", summary, {"done": 2}), []))
    assert page.refresh_s is None and page.run.gate == "fail"
    assert page.run.counts == [("pass", "1"), ("warn", "0"), ("fail", "1")]
    assert [c.case_id for c in page.cases] == ["ok-case", "bridge"] and [c.case_id for c in page.regressed] == ["bridge"]


def test_run_row_links_its_baseline():
    row = run_row(RunSummary("r" * 32, "done", [], "warn", "q" * 32, None, WHEN, None, {}))
    assert row.baseline_href == f"/nightly/{'q' * 32}" and row.tags == "all cases" and row.fail_on == "warn"


def test_trend_bars_are_the_finished_runs_oldest_left():
    runs = [_run("new", {"counts": {"pass": 3, "fail": 1}, "gate": "fail"}, day=3),
            _run("running", None, status="running", day=2),
            _run("old", {"counts": {"pass": 4}, "gate": "pass"}, day=1)]
    chart = str(trend(runs))
    assert chart.index('href="/nightly/old"') < chart.index('href="/nightly/new"')
    assert "/nightly/running" not in chart and chart.count('data-state="fail"') == 1
