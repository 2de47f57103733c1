"""The side-by-side view: metric deltas from the two reports, findings new/resolved, environment."""

from __future__ import annotations

import datetime as dt

from api.pages.compare import compare_page, metric_table
from api.pages.queries import DiagnosisDetail, DiagnosisSummary
from tests.pages.reports import case, report, run


def _detail(diagnosis_id: str, data: dict) -> DiagnosisDetail:
    summary = DiagnosisSummary(diagnosis_id, data["case_id"], "run", "done", data["verdict"], None,
                               dt.datetime(2025, 3, 1, 8, 0), None)
    return DiagnosisDetail(summary, case(), data, None)


def _by_metric(table, temperature: str) -> dict[str, tuple[str, str, str, str]]:
    column = table.temperatures.index(temperature)
    return {r.metric: (c.baseline, c.current, c.delta, c.trend) for r in table.rows for c in [r.cells[column]]}


def test_deltas_are_current_minus_baseline_and_marked_by_direction():
    before = report(runs=[run(0.2, semantic_entropy=0.1, divergence=0.3, truncation=0.2, compliance=1.0)])
    after = report(runs=[run(0.2, semantic_entropy=0.6, divergence=0.3, truncation=0.0, compliance=0.5)])
    rows = _by_metric(metric_table(before, after), "0.2")
    assert rows["semantic entropy"] == ("0.100", "0.600", "+0.500", "worse")
    assert rows["first-token divergence"] == ("0.300", "0.300", "±0", "same")
    assert rows["truncation rate"] == ("0.200", "0.000", "−0.200", "better")
    assert rows["compliance rate"] == ("1.000", "0.500", "−0.500", "worse")


def test_center_pull_is_matched_by_label_across_center_ids():
    before = report(centers={"c0": "1937"}, runs=[run(0.8, pull={"c0": 1.0})])
    after = report(centers={"c1": "1952", "c2": "1937"}, documents=[("d1", "c2"), ("d2", "c1")],
                   runs=[run(0.8, pull={"c1": 0.75, "c2": 0.25})])
    rows = _by_metric(metric_table(before, after), "0.8")
    assert rows["pull · 1937"] == ("1.000", "0.250", "−0.750", "")
    assert rows["pull · 1952"] == ("—", "0.750", "—", "")
    pulls = [r.metric for r in metric_table(before, after).rows if r.metric.startswith("pull")]
    assert pulls == ["pull · 1937", "pull · 1952"]  # strongest pull (on either side) first


def test_a_temperature_sampled_on_one_side_only_has_no_delta():
    table = metric_table(report(runs=[run(0.2)]), report(runs=[run(0.2), run(1.0, semantic_entropy=0.4)]))
    assert table.temperatures == ["0.2", "1"] and all(len(r.cells) == 2 for r in table.rows)
    only_current = _by_metric(table, "1")
    assert only_current["semantic entropy"] == ("—", "0.400", "—", "")


def test_findings_are_marked_new_resolved_or_changed():
    before = report(findings=[("input", "input.competing_centers", "warn"), ("sampling", "sampling.truncated", "warn")])
    after = report(findings=[("input", "input.competing_centers", "fail"), ("sampling", "sampling.split_center_pull", "fail")])
    page = compare_page(_detail("a" * 32, before), _detail("b" * 32, after))
    assert [(f.rule, f.mark) for f in page.baseline.findings] == [
        ("input.competing_centers", "changed"), ("sampling.truncated", "resolved")]
    assert [(f.rule, f.mark) for f in page.current.findings] == [
        ("input.competing_centers", "changed"), ("sampling.split_center_pull", "new")]
    assert page.baseline.href == f"/diagnoses/{'a' * 32}" and page.current.short_id == "bbbbbbbb"
    assert (page.baseline.verdict, page.current.verdict) == ("warn", "fail")


def test_environment_rows_are_the_fingerprint_diff():
    env = {"model_id": "tiny", "dtype": "float32", "libraries": {"torch": "2.13.0", "numpy": "2.1"}}
    changed = {"model_id": "tiny", "dtype": "bfloat16", "libraries": {"torch": "2.14.0", "numpy": "2.1"}}
    page = compare_page(_detail("a" * 32, report(environment=env)), _detail("b" * 32, report(environment=changed)))
    assert [(e.key, e.baseline, e.current) for e in page.environment] == [
        ("dtype", "float32", "bfloat16"), ("libraries.torch", "2.13.0", "2.14.0")]
    same = compare_page(_detail("a" * 32, report(environment=env)), _detail("b" * 32, report(environment=env)))
    assert same.environment == []


def test_inputs_only_reports_have_no_metric_table():
    page = compare_page(_detail("a" * 32, report()), _detail("b" * 32, report()))
    assert page.metrics.rows == [] and page.metrics.temperatures == [] and page.sampled is False
