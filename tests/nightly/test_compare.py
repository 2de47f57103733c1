"""The regression gate on small hand-built reports (written as contract-shaped JSON, read back)."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from typing import Any

import msgspec
import pytest

from diagnose.nightly.compare import TESTS_PER_CASE, CaseComparison, compare_reports, environment_diff
from diagnose.nightly.settings import GateSettings
from diagnose.report import (
    Conflict,
    Finding,
    GravityCenter,
    InputReport,
    Report,
    Sample,
    SamplingReport,
    TemperatureRun,
    read_report,
)

POPULATION = {"id": "c1", "documents": ["d1", "d2"], "mass": 1.0, "label": "3,559"}
ENVIRONMENT = {
    "backend": "transformers", "model_id": "tiny-gpt", "model_hash": "abc123", "quantization": None,
    "dtype": "float32", "device": "cpu", "threads": 2, "cuda": None,
    "libraries": {"torch": "2.12.0", "transformers": "5.24.0", "numpy": "2.4.6"},
}


def make_run(
    clusters: list[int], centers: list[str], *, temperature: float = 0.7, truncated: int = 0,
    noncompliant: int = 0, first_tokens: list[str] | None = None, seed_offset: int = 0,
) -> dict[str, Any]:
    """One temperature run: sample i has ``clusters[i]``, follows ``centers[i]``; the first
    ``truncated`` samples hit the length limit and the first ``noncompliant`` fail a constraint."""
    n = len(clusters)
    tokens = first_tokens or [f"tok{c}" for c in clusters]
    samples = [
        {"seed": seed_offset + i, "text": f"The answer is {c} (draw {seed_offset + i})",
         "finish_reason": "length" if i < truncated else "stop", "tokens": 12, "cluster": c,
         "center": centers[i], "compliant": i >= noncompliant, "first_token": tokens[i]}
        for i, c in enumerate(clusters)
    ]
    by_cluster = Counter(clusters).values()
    return {
        "temperature": temperature, "n": n,
        "first_token_divergence": len(set(tokens)) / n, "mean_entropy": 0.8, "perplexity": 2.1,
        "repetition_rate": 0.0,
        "semantic_entropy": -sum(k / n * math.log(k / n) for k in by_cluster) + 0.0,
        "compliance_rate": (n - noncompliant) / n, "truncation_rate": truncated / n,
        "center_pull": {k: v / n for k, v in Counter(centers).items()} | {"none": centers.count("none") / n},
        "samples": samples,
    }


def make_report(
    runs: list[dict[str, Any]] | None, *, centers: list[dict[str, Any]] | None = None,
    findings: list[dict[str, Any]] | None = None, environment: dict[str, Any] | None = None,
) -> Report:
    """A report from the JSON form of contract section 3 (``runs=None``: an inputs-only run)."""
    report = {
        "case_id": "broken-bow-population", "verdict": "ok",
        "input": {"gravity_centers": centers or [POPULATION], "noise_documents": [],
                  "conflict": {"detected": False, "score": 0.0, "pairs": []}},
        "findings": findings or [],
        "environment": copy.deepcopy(environment or ENVIRONMENT),
    }
    if runs is not None:
        report["sampling"] = {"runs": runs, "backend": "transformers"}
    return read_report(report)


def stable_report() -> Report:
    """Sixteen samples: one meaning, all following c1, all complete."""
    return make_report([make_run([0] * 16, ["c1"] * 16)])


def kinds(comparison: CaseComparison) -> dict[str, str]:
    return {c.kind: c.severity for c in comparison.changes}


def test_identical_reports_have_no_changes() -> None:
    baseline = make_report([make_run([0] * 12 + [1] * 4, ["c1"] * 16), make_run([0, 1] * 8, ["c1"] * 16,
                                                                                temperature=1.2)])
    comparison = compare_reports(baseline, copy.deepcopy(baseline))
    assert comparison.changes == [] and comparison.regressions == []
    assert comparison.status == "pass" and comparison.case_id == "broken-bow-population"


def test_samples_redrawn_from_the_same_distribution_are_not_a_regression() -> None:
    clusters = [0] * 10 + [1] * 4 + [2] * 2
    centers = ["c1"] * 12 + ["none"] * 4
    baseline = make_report([make_run(clusters, centers, truncated=2)])
    redrawn = make_report([make_run(clusters[::-1], centers[::-1], truncated=2, seed_offset=100)])
    comparison = compare_reports(baseline, redrawn)
    assert comparison.regressions == [] and comparison.status == "pass"


def test_a_small_shift_inside_the_noise_band_is_not_a_regression() -> None:
    two = {"id": "c2", "documents": ["d3"], "mass": 0.5, "label": "4,000"}
    baseline = make_report([make_run([0] * 12 + [1] * 4, ["c1"] * 9 + ["c2"] * 7, truncated=1)],
                           centers=[POPULATION, two])
    current = make_report([make_run([0] * 10 + [1] * 6, ["c1"] * 7 + ["c2"] * 9, truncated=3)],
                          centers=[POPULATION, two])
    comparison = compare_reports(baseline, current)
    assert comparison.regressions == []
    (shift,) = [c for c in comparison.changes if c.kind == "center_shift"]
    assert shift.severity == "info" and "noise band" in shift.message
    assert shift.evidence["p_value_old_winner_loss"] >= 0.05


def test_an_added_conflicting_document_raises_entropy_and_shifts_the_center() -> None:
    baseline = stable_report()
    # centers are renumbered: the new conflicting passage is now c1, the old center c2
    renumbered = [{"id": "c1", "documents": ["d9"], "mass": 0.4, "label": "4,120"},
                  {"id": "c2", "documents": ["d1", "d2"], "mass": 0.6, "label": "3,559"}]
    current = make_report([make_run([0] * 6 + [1] * 7 + [2] * 3, ["c2"] * 6 + ["c1"] * 7 + ["none"] * 3)],
                          centers=renumbered)
    comparison = compare_reports(baseline, current)
    assert comparison.status == "fail"
    entropy = next(c for c in comparison.changes if c.kind == "semantic_entropy")
    assert entropy.severity == "warn" and entropy.baseline == 0.0
    assert entropy.current == pytest.approx(-(6 / 16 * math.log(6 / 16) + 7 / 16 * math.log(7 / 16)
                                              + 3 / 16 * math.log(3 / 16)))
    assert entropy.evidence["ci_low"] > 0 and entropy.evidence["min_change"] == 0.3
    assert {"ci_high", "confidence", "resamples", "diff"} <= set(entropy.evidence)
    shift = next(c for c in comparison.changes if c.kind == "center_shift")
    assert shift.severity == "fail"
    assert shift.evidence["center_map"] == {"c1": "new:c1", "c2": "c1"}
    assert (shift.baseline, shift.current) == ("c1", "new:c1")
    assert shift.evidence["current_pull"]["c1"] == pytest.approx(6 / 16)
    assert shift.evidence["p_value_new_winner_gain"] < 0.05
    assert "4,120" in shift.message and "new" in shift.message


def test_centers_renumbered_and_relabelled_are_matched_by_documents() -> None:
    two = {"id": "c2", "documents": ["d3"], "mass": 0.3, "label": "4,000"}
    baseline = make_report([make_run([0] * 16, ["c1"] * 12 + ["c2"] * 4)], centers=[POPULATION, two])
    swapped = [{"id": "c1", "documents": ["d3"], "mass": 0.3, "label": "about four thousand"},
               {"id": "c2", "documents": ["d2", "d1"], "mass": 0.7, "label": "3559 people"}]
    current = make_report([make_run([0] * 16, ["c2"] * 12 + ["c1"] * 4)], centers=swapped)
    assert compare_reports(baseline, current).changes == []


def test_max_tokens_cut_fails_on_truncation() -> None:
    current = make_report([make_run([0] * 16, ["c1"] * 16, truncated=12)])
    comparison = compare_reports(stable_report(), current)
    assert kinds(comparison) == {"truncation_rate": "fail"}
    (cut,) = comparison.regressions
    assert (cut.baseline, cut.current) == (0.0, 0.75)
    assert cut.evidence["p_value"] == pytest.approx(2 * math.comb(16, 12) / math.comb(32, 12))
    assert cut.evidence | {"p_value": 0} == {
        "baseline_k": 0, "baseline_n": 16, "current_k": 12, "current_n": 16, "change": 0.75,
        "p_value": 0, "alpha": 0.05 / TESTS_PER_CASE, "min_change": 0.2, "test": "fisher_exact",
        "per_temperature": {"0.7": ["0/16", "12/16"]}}


def test_rates_pool_temperatures_and_correct_for_the_tests_of_a_case() -> None:
    """3/16 more truncations at each of two temperatures: not significant alone at
    alpha/5, but pooled (0/32 -> 6/32) the change is judged once for the case."""
    two = lambda k: make_report([make_run([0] * 16, ["c1"] * 16, truncated=k),  # noqa: E731
                                 make_run([0] * 16, ["c1"] * 16, truncated=k, temperature=1.2)])
    comparison = compare_reports(two(0), two(6))
    (cut,) = comparison.regressions
    assert (cut.kind, cut.evidence["baseline_k"], cut.evidence["current_k"], cut.evidence["current_n"]) == (
        "truncation_rate", 0, 12, 32)
    assert cut.evidence["p_value"] < 0.05 / TESTS_PER_CASE


def test_compliance_drop_fails_and_recovery_is_an_improvement() -> None:
    broken = make_report([make_run([0] * 16, ["c1"] * 16, noncompliant=12)])
    assert kinds(compare_reports(stable_report(), broken)) == {"compliance_rate": "fail"}
    assert kinds(compare_reports(broken, stable_report())) == {"compliance_rate": "info"}


def test_entropy_drop_is_an_improvement_not_a_regression() -> None:
    spread = make_report([make_run([0] * 6 + [1] * 5 + [2] * 5, ["c1"] * 16)])
    comparison = compare_reports(spread, stable_report())
    assert comparison.regressions == []
    # first tokens go 3/16 → 1/16: a drop below the 0.2 minimum, so not even mentioned
    assert kinds(comparison) == {"semantic_entropy": "info"}
    assert "improvement" in comparison.changes[0].message


def test_first_token_divergence_rise_warns() -> None:
    tokens = [f"w{i % 8}" for i in range(16)]
    current = make_report([make_run([0] * 16, ["c1"] * 16, first_tokens=tokens)])
    (change,) = compare_reports(stable_report(), current).changes
    assert (change.kind, change.severity) == ("first_token_divergence", "warn")
    assert change.current == 0.5 and change.evidence["ci_low"] > 0


def test_a_changed_torch_version_warns_and_is_the_likely_cause() -> None:
    upgraded = copy.deepcopy(ENVIRONMENT)
    upgraded["libraries"]["torch"] = "2.13.0"
    current = make_report([make_run([0] * 16, ["c1"] * 16, truncated=12)], environment=upgraded)
    comparison = compare_reports(stable_report(), current)
    env = next(c for c in comparison.changes if c.kind == "environment")
    assert env.severity == "warn" and (env.baseline, env.current) == ("2.12.0", "2.13.0")
    assert env.message.startswith("torch 2.12.0 → 2.13.0 changed")
    assert "library, not the prompt" in env.message
    cut = next(c for c in comparison.changes if c.kind == "truncation_rate")
    assert cut.evidence["likely_cause"] == {"libraries.torch": {"baseline": "2.12.0", "current": "2.13.0"}}
    assert "torch 2.12.0 → 2.13.0" in cut.message
    assert comparison.status == "fail"


def test_a_thread_count_change_alone_passes_the_gate() -> None:
    fewer = copy.deepcopy(ENVIRONMENT) | {"threads": 1}
    comparison = compare_reports(make_report(None, environment=ENVIRONMENT | {"threads": 2}),
                                 make_report(None, environment=fewer))
    env = next(c for c in comparison.changes if c.kind == "environment")
    assert env.severity == "info" and "floating-point sums" in env.message
    assert comparison.status == "pass"


def test_environment_diff_covers_fingerprint_keys_and_libraries() -> None:
    now = copy.deepcopy(ENVIRONMENT) | {"dtype": "bfloat16", "quantization": "q4_k_m", "python": "3.13"}
    now["libraries"] = {"torch": "2.12.0", "transformers": "5.24.0", "faiss-cpu": "1.9.0"}
    assert environment_diff(ENVIRONMENT, now) == {
        "quantization": {"baseline": None, "current": "q4_k_m"},
        "dtype": {"baseline": "float32", "current": "bfloat16"},
        "libraries.faiss-cpu": {"baseline": None, "current": "1.9.0"},
        "libraries.numpy": {"baseline": "2.4.6", "current": None},
    }
    messages = [c.message for c in compare_reports(make_report(None), make_report(None, environment=now)).changes
                if c.kind == "environment"]
    assert any(m.startswith("dtype float32 → bfloat16 changed: differences may come from the dtype") for m in messages)


def test_new_and_resolved_findings() -> None:
    old = {"stage": "input", "rule": "noise_documents", "severity": "info", "evidence": {}, "advice": "Drop them."}
    new = {"stage": "input", "rule": "competing_centers", "severity": "fail",
           "evidence": {"temperature": 0.7}, "advice": "Resolve the conflict."}
    comparison = compare_reports(make_report([make_run([0] * 16, ["c1"] * 16)], findings=[old]),
                                 make_report([make_run([0] * 16, ["c1"] * 16)], findings=[new]))
    added, resolved = comparison.changes
    assert (added.kind, added.severity, added.temperature) == ("new_finding", "fail", 0.7)
    assert added.evidence["rule"] == "competing_centers" and "competing_centers" in added.message
    assert (resolved.kind, resolved.severity) == ("resolved_finding", "info")
    assert comparison.status == "fail"


def test_findings_that_follow_the_samples_are_information_only() -> None:
    """A sampling-stage finding flips with sampling noise; its metrics are gated statistically."""
    new = {"stage": "sampling", "rule": "center_split", "severity": "fail", "evidence": {}, "advice": "x"}
    comparison = compare_reports(make_report([make_run([0] * 16, ["c1"] * 16)]),
                                 make_report([make_run([0] * 16, ["c1"] * 16)], findings=[new]))
    (added,) = comparison.changes
    assert (added.kind, added.severity) == ("new_finding", "info") and comparison.status == "pass"


def test_missing_sampling_or_temperature_is_reported_not_a_crash() -> None:
    (change,) = compare_reports(make_report(None), stable_report()).changes
    assert (change.kind, change.severity) == ("not_compared", "info") and "baseline" in change.message
    extra = make_report([make_run([0] * 16, ["c1"] * 16), make_run([0] * 16, ["c1"] * 16, temperature=1.2)])
    (change,) = compare_reports(stable_report(), extra).changes
    assert (change.kind, change.severity, change.temperature) == ("not_compared", "info", 1.2)
    assert "T=1.2" in change.message


def test_a_report_without_samples_degrades_to_info() -> None:
    old = stable_report()
    old.sampling.runs[0].samples = []
    current = make_report([make_run([0] * 8 + [1] * 8, ["c1"] * 16)])
    comparison = compare_reports(old, current)
    assert comparison.regressions == []
    entropy = next(c for c in comparison.changes if c.kind == "semantic_entropy")
    assert entropy.severity == "info" and "per-sample" in entropy.message


def test_an_older_report_without_newer_fields_compares() -> None:
    """Fields added after a report was stored take their defaults when it is read back."""
    old = msgspec.to_builtins(stable_report())
    del old["input"]["tier"], old["input"]["conflict"]["probability"], old["sampling"]["runs"][0]["answer_kinds"]
    for sample in old["sampling"]["runs"][0]["samples"]:
        del sample["answer"], sample["answer_kind"], sample["position"]
    baseline = read_report(old)
    assert (baseline.input.tier, baseline.sampling.runs[0].samples[0].answer_kind) == ("static", "none")
    assert compare_reports(baseline, stable_report()).changes == []


def test_stricter_settings_change_the_verdict() -> None:
    current = make_report([make_run([0] * 16, ["c1"] * 16, truncated=12)])
    assert compare_reports(stable_report(), current, GateSettings(min_rate_change=0.8)).changes == []


def test_json_round_trip_of_a_real_report() -> None:
    def report(truncated: int, torch: str) -> Report:
        samples = [Sample(seed=i, text=f"There were 3,559 people {i}", finish_reason="length" if i < truncated
                          else "stop", tokens=9, cluster=0, center="c1", first_token="There")
                   for i in range(16)]
        run = TemperatureRun(temperature=0.7, n=16, first_token_divergence=1 / 16, mean_entropy=0.4,
                             perplexity=1.8, repetition_rate=0.0, semantic_entropy=0.0, compliance_rate=1.0,
                             truncation_rate=truncated / 16, center_pull={"c1": 1.0, "none": 0.0},
                             samples=samples, first_tokens={"There": 16})
        return Report(
            case_id="broken-bow-population", verdict="ok",
            input=InputReport(gravity_centers=[GravityCenter(**POPULATION)], noise_documents=[],
                              conflict=Conflict(detected=False, score=0.0)),
            findings=[Finding(stage="input", rule="noise_documents", severity="info", evidence={},
                              advice="Drop them.")],
            environment=ENVIRONMENT | {"libraries": {"torch": torch}},
            sampling=SamplingReport(runs=[run]),
        )

    baseline = read_report(report(0, "2.12.0").to_json())
    assert compare_reports(baseline, read_report(report(0, "2.12.0").to_json())).status == "pass"
    comparison = compare_reports(baseline, read_report(report(12, "2.13.0").to_json()))
    assert kinds(comparison) == {"truncation_rate": "fail", "environment": "warn"}
    assert json.loads(json.dumps(comparison.to_dict()))["status"] == "fail"
