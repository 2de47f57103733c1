"""Stored, resumable library runs and their comparison with a baseline (fake diagnose, no models)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
import pytest

from diagnose.case import Case
from diagnose.errors import UsageError
from diagnose.nightly import (
    GATE_FAILED_EXIT, compare_runs, find_runs, load_run, resolve_baseline, run_library, run_nightly,
)
from diagnose.nightly.library import discover
from diagnose.nightly.runner import report_path, seed_offset_for
from diagnose.report import Report, read_report

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "fixtures" / "library"
CHANGED = ROOT / "fixtures" / "library-changed"
ENVIRONMENT = {"backend": "fake", "model_id": "fake-model", "model_hash": "abc", "dtype": "float32",
               "device": "cpu", "threads": 2, "libraries": {"torch": "2.13.0"}}


def fake_report(case: Case, seed_offset: int) -> Report:
    """A contract-shaped report that reacts to the case like the real pipeline would, roughly:
    a document saying 1901 opens a second gravity center that pulls half of the samples;
    a budget under 10 tokens truncates every sample."""
    conflicting = any("1901" in d.text for d in case.documents)
    docs = [d.id for d in case.documents]
    centers = [{"id": "c1", "documents": docs, "mass": 1.0, "label": "main"}]
    if conflicting:
        centers = [{"id": "c1", "documents": docs[:-1], "mass": 0.6, "label": "main"},
                   {"id": "c2", "documents": docs[-1:], "mass": 0.4, "label": "1901"}]
    truncated = case.sampling.max_new_tokens < 10
    runs = []
    for t in case.sampling.temperatures:
        n = case.sampling.seeds
        samples = []
        for i in range(n):
            other = conflicting and i % 2 == 1
            samples.append({
                "seed": seed_offset + i, "text": "It opened in 1901." if other else "It opened in 1889.",
                "finish_reason": "length" if truncated else "stop", "tokens": 6, "cluster": int(other),
                "center": "c2" if other else "c1", "compliant": True, "first_token": "It"})
        pull = {"c1": sum(s["center"] == "c1" for s in samples) / n, "c2": sum(s["center"] == "c2" for s in samples) / n}
        runs.append({
            "temperature": t, "n": n, "first_token_divergence": 1 / n, "mean_entropy": 0.5,
            "perplexity": 2.0, "repetition_rate": 0.0, "semantic_entropy": 0.69 if conflicting else 0.0,
            "compliance_rate": 1.0, "truncation_rate": 1.0 if truncated else 0.0,
            "center_pull": {k: v for k, v in pull.items() if v or k == "c1"}, "samples": samples})
    findings = []
    if conflicting:
        findings.append({"stage": "input", "rule": "input.value_conflict", "severity": "fail",
                         "evidence": {"pairs": [["d1", docs[-1]]]}, "advice": "Remove the stale document."})
    if truncated:
        findings.append({"stage": "length", "rule": "length.truncated", "severity": "warn",
                         "evidence": {"truncation_rate": 1.0}, "advice": "Raise max_new_tokens."})
    verdict = "fail" if conflicting else "warn" if truncated else "ok"
    return read_report({
        "case_id": case.id, "verdict": verdict,
        "input": {"gravity_centers": centers, "noise_documents": [],
                  "conflict": {"detected": conflicting, "score": 0.9 if conflicting else 0.0, "pairs": []}},
        "sampling": {"runs": runs}, "findings": findings, "environment": dict(ENVIRONMENT),
    })


class Counting:
    """A fake diagnose that counts its calls and can interrupt or fail on chosen cases."""

    def __init__(self, interrupt_at: int | None = None, fail: set[str] = frozenset()) -> None:
        self.calls: list[tuple[str, int]] = []
        self.interrupt_at = interrupt_at
        self.fail = set(fail)

    def __call__(self, case: Case, seed_offset: int) -> Report:
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        self.calls.append((case.id, seed_offset))
        if case.id in self.fail:
            raise RuntimeError(f"model exploded on {case.id}")
        return fake_report(case, seed_offset)


def fake_factory() -> Counting:
    """Picklable (top-level) factory, for the process pool."""
    return Counting()


def test_run_library_stores_manifest_and_reports(tmp_path: Path) -> None:
    cases = discover(LIBRARY)
    fake = Counting()
    seen: list[tuple[str, int, int]] = []
    run = run_library(cases, tmp_path / "r1", fake, 42, lambda rec, done, total: seen.append((rec.case_id, done, total)),
                      library=str(LIBRARY))
    assert len(fake.calls) == len(cases) and {s for _, s in fake.calls} == {42}
    assert [s[1] for s in seen] == list(range(1, len(cases) + 1)) and seen[-1][2] == len(cases)
    manifest = json.loads((tmp_path / "r1" / "manifest.json").read_text())
    assert manifest["run_id"] == "r1" and manifest["seed_offset"] == 42 and manifest["finished"]
    assert manifest["library"] == str(LIBRARY)
    assert manifest["environment"]["model"]["model_id"] == "fake-model"
    assert "python" in manifest["environment"] and "cpu_count" in manifest["environment"]
    for entry, case in zip(manifest["cases"], cases):
        assert entry["case_id"] == case.case_id and entry["content_hash"] == case.content_hash
        assert entry["status"] == "done" and entry["seconds"] is not None and entry["path"] == case.relative_path
        assert json.loads(report_path(tmp_path / "r1", case.case_id).read_text())["case_id"] == case.case_id
    assert not list((tmp_path / "r1").rglob("*.tmp"))
    loaded = load_run(tmp_path / "r1")
    assert [c.case_id for c in loaded.cases] == [c.case_id for c in run.cases]
    assert loaded.report(cases[0].case_id).verdict == "ok"


def test_interrupted_run_resumes_without_redoing_finished_cases(tmp_path: Path) -> None:
    cases = discover(LIBRARY)
    first = Counting(interrupt_at=4)
    with pytest.raises(KeyboardInterrupt):
        run_library(cases, tmp_path / "r", first, 7)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert [c["status"] for c in manifest["cases"]].count("done") == 4 and manifest["finished"] is None
    second = Counting()
    run = run_library(cases, tmp_path / "r", second, 999)  # a resumed run keeps its seed offset
    assert [c for c, _ in second.calls] == [c.case_id for c in cases[4:]]
    assert {s for _, s in second.calls} == {7} and run.seed_offset == 7
    assert [c.reused for c in run.cases] == [True] * 4 + [False] * (len(cases) - 4)
    assert all(c.status == "done" for c in run.cases) and run.finished
    third = Counting()
    run_library(cases, tmp_path / "r", third, 7)
    assert third.calls == []


def test_changed_case_is_rediagnosed_on_resume(tmp_path: Path) -> None:
    run_library(discover(LIBRARY), tmp_path / "r", Counting(), 0)
    fake = Counting()
    run_library(discover(CHANGED), tmp_path / "r", fake, 0)
    assert sorted(c for c, _ in fake.calls) == ["canberra-capital", "eiffel-tower-opening"]


def test_a_failing_case_is_recorded_and_the_run_continues(tmp_path: Path) -> None:
    cases = discover(LIBRARY)
    bad = cases[2].case_id
    run = run_library(cases, tmp_path / "r", Counting(fail={bad}), 0)
    record = run.case(bad)
    assert record.status == "error" and "model exploded" in record.error and "RuntimeError" in record.error
    assert all(c.status == "done" for c in run.cases if c.case_id != bad)
    assert not report_path(tmp_path / "r", bad).exists() and run.report(bad) is None
    comparison = next(c for c in compare_runs(None, run) if c.case_id == bad)
    assert comparison.status == "fail" and comparison.changes[0].kind == "case_error"
    retry = Counting()
    run_library(cases, tmp_path / "r", retry, 0)
    assert retry.calls == [(bad, 0)]


def test_load_run_accepts_a_run_dir_a_manifest_or_a_single_report(tmp_path: Path) -> None:
    run_library(discover(LIBRARY, ["smoke"]), tmp_path / "r", Counting(), 3)
    assert load_run(tmp_path / "r" / "manifest.json").run_id == "r"
    single = tmp_path / "copy.json"
    shutil.copy(report_path(tmp_path / "r", "canberra-capital"), single)
    one = load_run(single)
    assert [c.case_id for c in one.cases] == ["canberra-capital"] and one.run_dir is None
    assert one.report("canberra-capital").case_id == "canberra-capital"
    (tmp_path / "junk.json").write_text("[1, 2]")
    with pytest.raises(UsageError):
        load_run(tmp_path / "junk.json")
    with pytest.raises(UsageError):
        load_run(tmp_path / "missing")


def test_unchanged_library_passes_and_changed_cases_are_flagged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = run_nightly(LIBRARY, runs, None, diagnose_factory=Counting)
    assert first.baseline is None and first.exit_status() == 0
    assert {c.changes[0].kind for c in first.comparisons} == {"new_case"}
    assert first.run.seed_offset == seed_offset_for(first.run.run_id)
    second = run_nightly(LIBRARY, runs, None, diagnose_factory=Counting)  # baseline: the latest run
    assert second.baseline.run_id == first.run.run_id
    assert second.run.seed_offset != first.run.seed_offset
    assert [c.status for c in second.comparisons] == ["pass"] * len(second.comparisons)
    assert second.exit_status("warn") == 0
    changed = run_nightly(CHANGED, runs, first.run.run_id, diagnose_factory=Counting)
    status = {c.case_id: c for c in changed.comparisons}
    assert {k for k, c in status.items() if c.status != "pass"} == {"canberra-capital", "eiffel-tower-opening"}
    eiffel = {c.kind for c in status["eiffel-tower-opening"].regressions}
    assert {"new_finding", "center_shift"} & eiffel or "semantic_entropy" in eiffel
    cut = status["canberra-capital"].regressions
    truncation = [c for c in cut if c.kind == "truncation_rate"]
    # pooled over both temperatures: 8 of 8 samples truncated at each
    assert truncation and truncation[0].severity == "fail" and truncation[0].evidence["current_k"] == 16
    for case_id in ("canberra-capital", "eiffel-tower-opening"):
        assert status[case_id].changes[0].kind == "case_changed"
    assert changed.exit_status("fail") == GATE_FAILED_EXIT and changed.exit_status("never") == 0


def test_run_nightly_resumes_the_latest_unfinished_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with pytest.raises(KeyboardInterrupt):
        run_nightly(LIBRARY, runs, None, diagnose_factory=lambda: Counting(interrupt_at=3))
    (interrupted,) = find_runs(runs)
    fake = Counting()
    result = run_nightly(LIBRARY, runs, None, diagnose_factory=lambda: fake)
    assert result.run.run_id == interrupted.run_id and len(fake.calls) == len(result.run.cases) - 3
    assert result.baseline is None  # an unfinished run is never a baseline
    fresh = Counting()
    again = run_nightly(LIBRARY, runs, None, diagnose_factory=lambda: fresh, resume=False)
    assert again.run.run_id != interrupted.run_id and len(fresh.calls) == len(again.run.cases)


def test_resumed_run_loads_no_models_when_everything_is_done(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = run_nightly(LIBRARY, runs, None, tags=["smoke"], diagnose_factory=Counting, run_id="fixed")
    built: list[int] = []
    again = run_nightly(LIBRARY, runs, None, tags=["smoke"], run_id="fixed",
                        diagnose_factory=lambda: built.append(1) or Counting())
    assert built == [] and [c.case_id for c in again.run.cases] == [c.case_id for c in result.run.cases]
    assert all(c.reused for c in again.run.cases)


def test_baseline_resolution(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = run_nightly(LIBRARY, runs, None, tags=["smoke"], diagnose_factory=Counting, seed_offset=5)
    assert first.run.seed_offset == 5
    single = report_path(runs / first.run.run_id, "golden-gate-years")
    result = run_nightly(LIBRARY, runs, single, tags=["smoke"], diagnose_factory=Counting)
    kinds = {c.case_id: c.changes[0].kind if c.changes else None for c in result.comparisons}
    assert kinds["golden-gate-years"] is None and kinds["canberra-capital"] == "new_case"
    assert resolve_baseline(runs / first.run.run_id, runs, "x").run_id == first.run.run_id
    with pytest.raises(UsageError):
        resolve_baseline("no-such-run", runs, "x")
    assert resolve_baseline(None, runs, "another-library") is None


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        run_nightly(LIBRARY, tmp_path, None, tags=["no-such-tag"], diagnose_factory=Counting)
    with pytest.raises(UsageError):
        run_nightly(LIBRARY, tmp_path, None, workers=0, diagnose_factory=Counting)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for two worker processes")
def test_workers_run_cases_in_a_process_pool(tmp_path: Path) -> None:
    cases = discover(LIBRARY, ["smoke"])
    run = run_library(cases, tmp_path / "r", None, 11, workers=2, diagnose_factory=fake_factory)
    assert [c.case_id for c in run.cases] == [c.case_id for c in cases]
    assert all(c.status == "done" for c in run.cases)
    assert load_run(tmp_path / "r").report(cases[0].case_id).sampling.runs[0].samples[0].seed == 11
    with pytest.raises(UsageError):
        run_library(cases, tmp_path / "r2", None, 0, workers=2)


@pytest.mark.models
def test_real_pipeline_two_cases_twice_then_a_changed_budget(tmp_path: Path) -> None:
    """End to end on the real models: unchanged cases pass across seed offsets; a cut budget fails."""
    from diagnose.pipeline import nightly_diagnose_factory

    wanted = {"canberra-capital", "python-creator"}
    diagnose = nightly_diagnose_factory()
    first = run_library([c for c in discover(LIBRARY) if c.case_id in wanted], tmp_path / "a", diagnose, 0)
    second = run_library([c for c in discover(LIBRARY) if c.case_id in wanted], tmp_path / "b", diagnose, 1000)
    assert all(c.status == "done" for c in first.cases + second.cases)
    assert first.report("canberra-capital").sampling.runs[0].samples[0].seed == 0
    assert second.report("canberra-capital").sampling.runs[0].samples[0].seed == 1000
    unchanged = compare_runs(first, second)
    # The default gate (--fail-on fail) must not trip on unchanged cases; warn-level noise
    # at 8 seeds is measured separately (see the closing note of the nightly issue).
    assert [c.case_id for c in unchanged] == ["canberra-capital", "python-creator"]
    assert all(c.status != "fail" for c in unchanged), [c.regressions for c in unchanged]
    cut = run_library([c for c in discover(CHANGED) if c.case_id == "canberra-capital"], tmp_path / "c",
                      diagnose, 2000)
    (comparison,) = compare_runs(first, cut)
    assert comparison.status == "fail"
    assert any(c.kind == "truncation_rate" and c.severity == "fail" for c in comparison.regressions)
    assert comparison.changes[0].kind == "case_changed"


def test_a_case_is_gated_on_its_own_verdict_with_or_without_a_baseline(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    fresh = run_nightly(CHANGED, runs, None, diagnose_factory=Counting)  # no baseline: every case is new
    status = {c.case_id: c.status for c in fresh.comparisons}
    verdicts = {c.case_id: fresh.run.report(c.case_id).verdict for c in fresh.comparisons}
    assert {k for k, v in verdicts.items() if v != "ok"} == {"canberra-capital", "eiffel-tower-opening"}
    for case_id, verdict in verdicts.items():
        assert status[case_id] == {"ok": "pass", "warn": "warn", "fail": "fail"}[verdict]
    eiffel = next(c for c in fresh.comparisons if c.case_id == "eiffel-tower-opening")
    assert eiffel.regressions == [] and eiffel.failing_verdict.severity == "fail"
    assert "input.value_conflict" in eiffel.failing_verdict.message
    assert fresh.exit_status("fail") == GATE_FAILED_EXIT and fresh.exit_status("never") == 0
    assert fresh.failing_reasons("warn") == {"regressed": 0, "failing_verdict": 2}
    assert fresh.failing_reasons("fail") == {"regressed": 0, "failing_verdict": 1}
    assert "0 case(s) regressed" in fresh.gate_line("warn") and "2 case(s) have a failing verdict" in fresh.gate_line("warn")
    again = run_nightly(CHANGED, runs, fresh.run.run_id, diagnose_factory=Counting)  # nothing regressed
    assert {c.case_id for c in again.failing("warn")} == {"canberra-capital", "eiffel-tower-opening"}
    assert all(c.regressions == [] for c in again.comparisons)
