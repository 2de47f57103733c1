"""The control's verdict on findings, from runs built by hand: noise, and inconclusive comparisons."""

from __future__ import annotations

from diagnose.report import ControlRun, Finding, Sample, SamplingReport, TemperatureRun
from diagnose.triage.controlled import decide


def _run(centers: list[str], temperature: float = 0.5, one_meaning: bool = False) -> TemperatureRun:
    """One run whose samples follow ``centers``, one meaning cluster per distinct center (or one in all)."""
    clusters = {c: 0 if one_meaning else i for i, c in enumerate(dict.fromkeys(centers))}
    share = {c: centers.count(c) / len(centers) for c in clusters}
    return TemperatureRun(
        temperature=temperature, n=len(centers), first_token_divergence=1 / len(centers), mean_entropy=0.1,
        perplexity=1.0, repetition_rate=0.0, semantic_entropy=0.0, compliance_rate=1.0, truncation_rate=0.0,
        center_pull=share,
        samples=[Sample(seed=i, text=c, finish_reason="stop", cluster=clusters[c], center=c, first_token=c)
                 for i, c in enumerate(centers)])


def _decide(rule: str, severity: str, full: list[str], control: list[str], one_meaning: bool = False):
    finding = Finding(stage=rule.split(".")[0], rule=rule, severity=severity, evidence={}, advice="a")
    sampling = SamplingReport(runs=[_run(full, one_meaning=one_meaning)])
    kept = ControlRun(variant="dominant_center", description="the dominant center's documents alone",
                      documents=["d1"], center="c1", runs=[_run(control)])
    [decided] = decide([finding], sampling, [], kept, [])
    return decided


def test_noise_that_leaves_the_answers_on_the_center_is_info():
    decided = _decide("input.noise_share", "warn", ["c1"] * 15 + ["none"], ["c1"] * 16)
    assert decided.severity == "info" and decided.evidence["control"]["attributed"] == "model"
    assert decided.evidence["control"]["uncontrolled_severity"] == "warn"
    tests = {t["metric"]: t for t in decided.evidence["control"]["tests"]}
    assert set(tests) == {"no_center", "semantic_entropy"}
    assert tests["no_center"]["full_context"] == round(1 / 16, 4) and tests["no_center"]["control"] == 0.0
    assert "did not pull the answers away" in decided.advice


def test_noise_that_pulls_the_answers_off_the_center_keeps_its_warning():
    decided = _decide("input.noise_share", "warn", ["c1"] * 4 + ["none"] * 12, ["c1"] * 16)
    assert decided.severity == "warn" and decided.evidence["control"]["attributed"] == "prompt"
    off = next(t for t in decided.evidence["control"]["tests"] if t["metric"] == "no_center")
    assert off["full_context"] == 0.75 and off["p_adjusted"] < 0.05


def test_a_split_worse_than_its_control_but_not_significantly_is_one_level_down():
    # 4 of 16 follow the competing center against none of the control's 16: worse by 0.25, p > 0.05.
    decided = _decide("sampling.split_center_pull", "fail", ["c1"] * 12 + ["c2"] * 4, ["c1"] * 16)
    assert decided.evidence["control"]["attributed"] == "inconclusive" and decided.severity == "warn"
    assert "not significantly" in decided.advice


def test_an_inconclusive_warning_is_info():
    # A quarter of the samples off the center (the same answer, worded past the matcher): p > 0.05.
    decided = _decide("input.noise_share", "warn", ["c1"] * 12 + ["none"] * 4, ["c1"] * 16, one_meaning=True)
    assert decided.evidence["control"]["attributed"] == "inconclusive" and decided.severity == "info"


def test_samples_following_another_center_are_the_splits_not_the_noises():
    decided = _decide("input.noise_share", "warn", ["c1"] * 8 + ["c2"] * 8, ["c1"] * 16, one_meaning=True)
    off = next(t for t in decided.evidence["control"]["tests"] if t["metric"] == "no_center")
    assert off["full_context"] == 0.0 and decided.severity == "info"


def test_samples_following_no_center_do_not_count_as_a_split():
    decided = _decide("sampling.split_center_pull", "fail", ["c1"] * 8 + ["none"] * 8, ["c1"] * 16)
    [test] = decided.evidence["control"]["tests"]
    assert test["metric"] == "competing_pull" and test["full_context"] == 0.0
    assert decided.severity == "info"
