"""Each triage rule fires when its evidence crosses its threshold and stays silent just below."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from diagnose.report import Conflict, ConflictPair, GravityCenter, ReaderInfo, TemperatureRun
from diagnose.triage import environment_rules as env_rules
from diagnose.triage import framework_rules, input_rules, length_rules, sampling_rules
from diagnose.triage.context import DeterminismCheck
from diagnose.triage.thresholds import TriageThresholds
from tests.factories import make_case, make_ctx, make_inputs, make_run

T = TriageThresholds()


# --- input -----------------------------------------------------------------------------------


def test_competing_centers_fires_on_detected_conflict() -> None:
    centers = [GravityCenter(id="c1", documents=["d0"], mass=0.6667, label="1990"),
               GravityCenter(id="c2", documents=["d1", "d2"], mass=0.3333, label="2010")]
    pair = ConflictPair(a="d0", b="d1", kind="value_mismatch", evidence="'1990' vs '2010'")
    ctx = make_ctx(inputs=make_inputs(gravity_centers=centers,
                                      conflict=Conflict(detected=True, score=0.87649, pairs=[pair],
                                                        threshold=0.6)))
    flag = input_rules.competing_centers(ctx)
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence["conflict_score"] == 0.876
    assert flag.evidence["thresholds"] == {"conflict_score": 0.6}
    assert [c["id"] for c in flag.evidence["centers"]] == ["c1", "c2"]
    assert flag.evidence["centers"][0]["mass"] == 0.667
    assert flag.evidence["centers"][1]["documents"] == ["d1", "d2"]
    assert flag.evidence["pairs"] == [{"a": "d0", "b": "d1", "kind": "value_mismatch",
                                       "evidence": "'1990' vs '2010'"}]


def test_competing_centers_silent_without_conflict() -> None:
    inputs = make_inputs(conflict=Conflict(detected=False, score=0.3))
    assert input_rules.competing_centers(make_ctx(inputs=inputs)) is None


def test_an_unsure_verdict_is_info_not_warn() -> None:
    conflict = Conflict(detected=False, score=0.42, probability=0.42, state="unsure", threshold=0.8)
    flag = input_rules.competing_centers(make_ctx(inputs=make_inputs(conflict=conflict)))
    assert flag is not None and flag.severity == "info"
    assert flag.evidence["state"] == "unsure" and flag.evidence["probability"] == 0.42
    assert flag.advice.startswith("Possibly")
    sure = Conflict(detected=True, score=0.9, probability=0.9, state="conflict", threshold=0.8)
    assert input_rules.competing_centers(make_ctx(inputs=make_inputs(conflict=sure))).severity == "warn"


def _reference(calibrated: bool | None) -> ReaderInfo:
    return ReaderInfo(name="reader.gguf", kind="reference", sha256="ab" * 32, kernels="AVX AVX2 AVX512 FMA",
                      calibrated=calibrated)


def test_a_reader_built_for_other_cpu_features_than_its_calibration_read_is_named() -> None:
    flag = input_rules.reader_build(make_ctx(inputs=make_inputs(reader=_reference(False))))
    assert flag.severity == "info" and flag.evidence["kernels"] == "AVX AVX2 AVX512 FMA"
    assert "AVX AVX2 AVX512 FMA" in flag.advice and "make reader" in flag.advice


@pytest.mark.parametrize("reader", [_reference(True), _reference(None), None], ids=["fitted", "unknown", "static"])
def test_reader_build_is_silent_unless_the_build_is_known_to_differ(reader) -> None:
    assert input_rules.reader_build(make_ctx(inputs=make_inputs(reader=reader))) is None


def test_competing_centers_caps_pairs_at_five() -> None:
    pairs = [ConflictPair(a=f"d{i}", b=f"d{i + 1}", kind="stance", evidence="x") for i in range(7)]
    ctx = make_ctx(inputs=make_inputs(conflict=Conflict(detected=True, score=1.0, pairs=pairs)))
    assert [p["a"] for p in input_rules.competing_centers(ctx).evidence["pairs"]] == [
        "d0", "d1", "d2", "d3", "d4"]


def test_noise_share_fires_at_threshold() -> None:
    # 2 of 5 documents are noise: 0.4 >= 0.34
    ctx = make_ctx(case=make_case(n_docs=5), inputs=make_inputs(noise_documents=["d3", "d4"]))
    flag = input_rules.noise_share(ctx)
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {"noise_documents": ["d3", "d4"], "share": 0.4, "threshold": 0.34}


def test_noise_share_silent_just_below() -> None:
    # 1 of 3 = 0.333 < 0.34
    ctx = make_ctx(case=make_case(n_docs=3), inputs=make_inputs(noise_documents=["d2"]))
    assert input_rules.noise_share(ctx) is None


def test_noise_share_boundary_is_inclusive() -> None:
    th = TriageThresholds(noise_share_warn=0.5)
    inputs = make_inputs(noise_documents=["d2", "d3"])
    flag = input_rules.noise_share(make_ctx(case=make_case(n_docs=4), inputs=inputs, thresholds=th))
    assert flag is not None and flag.evidence["share"] == 0.5 and flag.evidence["threshold"] == 0.5
    inputs = make_inputs(noise_documents=["d3"])
    assert input_rules.noise_share(make_ctx(case=make_case(n_docs=4), inputs=inputs, thresholds=th)) is None


def test_noise_share_silent_without_documents() -> None:
    assert input_rules.noise_share(make_ctx(case=make_case(n_docs=0))) is None


def test_contradictory_instructions() -> None:
    pairs = [["Answer in one word.", "Explain your reasoning in detail."]]
    flag = input_rules.contradictory_instructions(make_ctx(inputs=make_inputs(instruction_conflicts=pairs)))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {"pairs": pairs}
    assert input_rules.contradictory_instructions(make_ctx()) is None


def test_unclear_delimiters() -> None:
    issue = "the template joins documents without a separator"
    flag = input_rules.unclear_delimiters(make_ctx(inputs=make_inputs(delimiter_issue=issue)))
    assert flag is not None and flag.severity == "warn" and flag.evidence == {"issue": issue}
    assert input_rules.unclear_delimiters(make_ctx()) is None


@pytest.mark.parametrize(
    "position, tokens, fires",
    [
        (0.5, T.lost_in_middle_tokens, True),
        (0.25, 2000, True),
        (0.75, 2000, True),
        (0.5, T.lost_in_middle_tokens - 1, False),
        (0.24, 2000, False),
        (0.76, 2000, False),
        (None, 5000, False),
    ],
)
def test_lost_in_the_middle(position: float | None, tokens: int, fires: bool) -> None:
    inputs = make_inputs(strongest_center_position=position, prompt_tokens=tokens)
    flag = input_rules.lost_in_the_middle(make_ctx(inputs=inputs))
    if not fires:
        assert flag is None
        return
    assert flag is not None and flag.severity == "info"
    assert flag.evidence == {"strongest_center_position": position, "prompt_tokens": tokens,
                             "threshold_tokens": 1500, "middle": [0.25, 0.75]}


# --- sampling --------------------------------------------------------------------------------


def test_split_center_pull_fails_on_split() -> None:
    pull = {"c1": 0.5, "c2": 0.3, "none": 0.2}
    flag = sampling_rules.split_center_pull(make_ctx(runs=[make_run(0.7, center_pull=pull)]))
    assert flag is not None and flag.severity == "fail"
    assert flag.evidence == {"temperature": 0.7, "n": 8, "center_pull": pull, "samples": {"c1": 4, "c2": 2},
                             "threshold": 0.2, "min_samples": 2}


@pytest.mark.parametrize(
    "pull, fires",
    [
        ({"c1": 0.9, "c2": 0.1}, False),
        ({"c1": 0.81, "c2": 0.19}, False),
        ({"c1": 0.8, "c2": 0.2}, True),  # the share is inclusive
        ({"c1": 0.6, "none": 0.4}, False),  # "none" is not a center
        ({"c1": 1.0}, False),
        ({"c1": 0.3, "c2": 0.3, "c3": 0.4}, True),
    ],
)
def test_split_center_pull_threshold(pull: dict[str, float], fires: bool) -> None:
    flag = sampling_rules.split_center_pull(make_ctx(runs=[make_run(center_pull=pull)]))
    assert (flag is not None) is fires


def test_split_center_pull_reports_coolest_split_run() -> None:
    runs = [make_run(1.2, center_pull={"c1": 0.5, "c2": 0.5}),
            make_run(0.2, center_pull={"c1": 1.0}),
            make_run(0.7, center_pull={"c1": 0.6, "c2": 0.4})]
    assert sampling_rules.split_center_pull(make_ctx(runs=runs)).evidence["temperature"] == 0.7


def test_split_center_pull_silent_without_sampling() -> None:
    assert sampling_rules.split_center_pull(make_ctx(runs=None)) is None


def test_split_center_pull_needs_two_samples_on_each_center() -> None:
    """With n <= 5 one stray sample is already a 0.2 share: it is not a split."""
    one_stray = make_run(0.7, n=4, center_pull={"c1": 0.75, "c2": 0.25, "none": 0.0})
    assert sampling_rules.split_center_pull(make_ctx(runs=[one_stray])) is None
    two_each = make_run(0.7, n=4, center_pull={"c1": 0.5, "c2": 0.5, "none": 0.0})
    flag = sampling_rules.split_center_pull(make_ctx(runs=[two_each]))
    assert flag is not None and flag.evidence["samples"] == {"c1": 2, "c2": 2}
    lone_pair = make_run(0.7, n=2, center_pull={"c1": 0.5, "c2": 0.5, "none": 0.0})
    assert sampling_rules.split_center_pull(make_ctx(runs=[lone_pair])) is None


# weak_pull judges n-normalised values: semantic entropy / ln n and
# (distinct first tokens - 1) / (n - 1), both 0 when all agree and 1 when all differ.
# At n = 8: ln 8 = 2.0794, so 0.325 is 0.6758 nats; (d - 1) / 7 >= 0.45 needs d >= 5.
@pytest.mark.parametrize(
    "semantic_entropy, divergence, fires",
    [
        (0.676, 1 / 8, True),    # 0.676 / 2.0794 = 0.3251
        (0.67, 1 / 8, False),    # 0.322
        (0.0, 5 / 8, True),      # (5 - 1) / 7 = 0.571
        (0.0, 4 / 8, False),     # (4 - 1) / 7 = 0.429
        (0.67, 4 / 8, False),
    ],
)
def test_weak_pull_thresholds(semantic_entropy: float, divergence: float, fires: bool) -> None:
    runs = [make_run(1.0), make_run(0.2, semantic_entropy=semantic_entropy,
                                    first_token_divergence=divergence)]
    flag = sampling_rules.weak_pull(make_ctx(runs=runs))
    if not fires:
        assert flag is None
        return
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence["thresholds"] == {"semantic_entropy_normalized": 0.325,
                                           "first_token_divergence_normalized": 0.45}
    assert flag.evidence["semantic_entropy"] == semantic_entropy
    assert flag.evidence["first_token_divergence"] == round(divergence, 3)


def _run_of(n: int, clusters: list[int], first_tokens: list[int]) -> TemperatureRun:
    """A run at T=0.2 whose metrics come from per-sample cluster ids and first tokens."""
    from diagnose.sampling.metrics import first_token_divergence, semantic_entropy

    assert len(clusters) == len(first_tokens) == n
    return make_run(0.2, n=n, semantic_entropy=semantic_entropy(clusters),
                    first_token_divergence=first_token_divergence(first_tokens))


def _sizes(*sizes: int) -> list[int]:
    """Cluster ids (or first tokens) with these group sizes: _sizes(2, 1) == [0, 0, 1]."""
    return [group for group, size in enumerate(sizes) for _ in range(size)]


# Hand-computed: H = -sum p ln p over the groups; normalised H / ln n; first tokens
# (d - 1) / (n - 1). ln 2 = 0.6931, ln 16 = 2.7726, ln 48 = 3.8712.
@pytest.mark.parametrize(
    "n, clusters, tokens, expected",
    [
        # n = 2: both samples give the same answer with the same first token. Raw divergence
        # is 1 distinct / 2 = 0.5, which equalled the old raw threshold: it fired on every case.
        (2, _sizes(2), _sizes(2), {"semantic_entropy": 0.0, "semantic_entropy_normalized": 0.0,
                                   "first_token_divergence": 0.5, "distinct_first_tokens": 1,
                                   "first_token_divergence_normalized": 0.0}),
        # n = 16: 15 samples agree, one differs; 3 distinct first tokens (14 + 1 + 1).
        # H = -(15/16 ln 15/16 + 1/16 ln 1/16) = 0.2338, / 2.7726 = 0.084; (3 - 1) / 15 = 0.133.
        (16, _sizes(15, 1), _sizes(14, 1, 1), {"semantic_entropy": 0.234, "semantic_entropy_normalized": 0.084,
                                               "first_token_divergence": 0.188, "distinct_first_tokens": 3,
                                               "first_token_divergence_normalized": 0.133}),
        # n = 48: 46 agree, 2 differ; 2 distinct first tokens.
        # H = -(46/48 ln 46/48 + 2/48 ln 2/48) = 0.1732, / 3.8712 = 0.045; (2 - 1) / 47 = 0.021.
        (48, _sizes(46, 2), _sizes(46, 2), {"semantic_entropy": 0.173, "semantic_entropy_normalized": 0.045,
                                            "first_token_divergence": 0.042, "distinct_first_tokens": 2,
                                            "first_token_divergence_normalized": 0.021}),
    ],
)
def test_weak_pull_is_silent_on_a_strong_pull_for_any_n(n, clusters, tokens, expected) -> None:
    run = _run_of(n, clusters, tokens)
    assert sampling_rules.weak_pull(make_ctx(runs=[run])) is None
    # the values it judged, as the finding would report them
    agreement = sampling_rules._agreement(run)
    assert {k: agreement[k] for k in expected} == expected


@pytest.mark.parametrize(
    "n, clusters, tokens, expected",
    [
        # n = 2: the two samples mean different things and start differently: H = ln 2, / ln 2 = 1.
        (2, _sizes(1, 1), _sizes(1, 1), {"n": 2, "semantic_entropy": 0.693, "semantic_entropy_max": 0.693,
                                         "semantic_entropy_normalized": 1.0, "first_token_divergence": 1.0,
                                         "distinct_first_tokens": 2, "first_token_divergence_normalized": 1.0}),
        # n = 16: four equal meanings: H = ln 4 = 1.3863, / 2.7726 = 0.5; 4 first tokens: 3 / 15 = 0.2.
        (16, _sizes(4, 4, 4, 4), _sizes(4, 4, 4, 4),
         {"n": 16, "semantic_entropy": 1.386, "semantic_entropy_max": 2.773, "semantic_entropy_normalized": 0.5,
          "first_token_divergence": 0.25, "distinct_first_tokens": 4, "first_token_divergence_normalized": 0.2}),
        # n = 16, one meaning but 9 distinct first tokens (8 + 8 x 1): (9 - 1) / 15 = 0.533.
        (16, _sizes(16), _sizes(8, *[1] * 8),
         {"n": 16, "semantic_entropy": 0.0, "semantic_entropy_max": 2.773, "semantic_entropy_normalized": 0.0,
          "first_token_divergence": 0.562, "distinct_first_tokens": 9, "first_token_divergence_normalized": 0.533}),
        # n = 48: eight equal meanings: H = ln 8 = 2.0794, / 3.8712 = 0.537; 12 first tokens: 11 / 47 = 0.234.
        (48, _sizes(*[6] * 8), _sizes(*[4] * 12),
         {"n": 48, "semantic_entropy": 2.079, "semantic_entropy_max": 3.871, "semantic_entropy_normalized": 0.537,
          "first_token_divergence": 0.25, "distinct_first_tokens": 12, "first_token_divergence_normalized": 0.234}),
        # n = 48, one meaning but 23 distinct first tokens (26 + 22 x 1): raw 23 / 48 = 0.479 stayed
        # under the old raw 0.5; normalised (23 - 1) / 47 = 0.468 >= 0.45.
        (48, _sizes(48), _sizes(26, *[1] * 22),
         {"n": 48, "semantic_entropy": 0.0, "semantic_entropy_max": 3.871, "semantic_entropy_normalized": 0.0,
          "first_token_divergence": 0.479, "distinct_first_tokens": 23, "first_token_divergence_normalized": 0.468}),
    ],
)
def test_weak_pull_fires_on_a_weak_pull_for_any_n(n, clusters, tokens, expected) -> None:
    flag = sampling_rules.weak_pull(make_ctx(runs=[_run_of(n, clusters, tokens)]))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {"temperature": 0.2, **expected,
                             "thresholds": {"semantic_entropy_normalized": 0.325,
                                            "first_token_divergence_normalized": 0.45}}


def test_two_seeds_that_agree_raise_nothing_through_the_registry() -> None:
    """`seeds: 2` used to raise sampling.weak_pull on every case (raw divergence 1/2 >= 0.5)."""
    from diagnose.triage import triage

    run = _run_of(2, _sizes(2), _sizes(2))
    rules = {f.rule for f in triage(make_ctx(case=make_case(seeds=2, temperatures=[0.2]), runs=[run]))}
    assert "sampling.weak_pull" not in rules


@pytest.mark.parametrize("n", [2, 3, 16, 48, 256])
def test_normalised_scales_run_from_all_agree_to_all_differ(n: int) -> None:
    import math

    assert sampling_rules.normalized_semantic_entropy(0.0, n) == 0.0
    assert sampling_rules.normalized_semantic_entropy(math.log(n), n) == pytest.approx(1.0)
    assert sampling_rules.normalized_first_token_divergence(1 / n, n) == 0.0
    assert sampling_rules.normalized_first_token_divergence(1.0, n) == 1.0


def test_weak_pull_reads_only_the_coolest_run() -> None:
    runs = [make_run(1.2, semantic_entropy=2.0, first_token_divergence=1.0), make_run(0.2)]
    assert sampling_rules.weak_pull(make_ctx(runs=runs)) is None


def test_weak_pull_needs_more_than_one_sample() -> None:
    run = make_run(0.2, n=1, semantic_entropy=2.0, first_token_divergence=1.0)
    assert sampling_rules.weak_pull(make_ctx(runs=[run])) is None


def test_strong_pull_fires_at_threshold() -> None:
    runs = [make_run(0.2, repetition_rate=0.4), make_run(0.7, repetition_rate=0.25),
            make_run(1.2, repetition_rate=0.249)]
    flag = sampling_rules.strong_pull(make_ctx(runs=runs))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {"repetition_rate": {"0.2": 0.4, "0.7": 0.25}, "threshold": 0.25}


def test_strong_pull_silent_just_below() -> None:
    assert sampling_rules.strong_pull(make_ctx(runs=[make_run(0.2, repetition_rate=0.249)])) is None


def test_weak_and_strong_pull_never_fire_together() -> None:
    """A stand-in that loops in another language also differs from seed to seed: the loops speak,
    not a weak pull with the opposite advice."""
    from diagnose.triage import triage

    looping_and_apart = make_run(0.3, repetition_rate=0.6, semantic_entropy=math.log(8),
                                 first_token_divergence=1.0)
    rules = {f.rule for f in triage(make_ctx(runs=[looping_and_apart]))}
    assert "sampling.strong_pull" in rules and "sampling.weak_pull" not in rules
    apart = make_run(0.3, semantic_entropy=math.log(8), first_token_divergence=1.0)
    assert {f.rule for f in triage(make_ctx(runs=[apart]))} >= {"sampling.weak_pull"}


def test_strong_pull_does_not_ask_for_a_penalty_the_case_already_has_too_much_of() -> None:
    from diagnose.triage import triage

    case = make_case(repetition_penalty=1.5)
    findings = {f.rule: f for f in triage(make_ctx(case=case, runs=[make_run(0.7, repetition_rate=0.5)]))}
    assert "sampling.repetition_penalty_high" in findings
    assert "add a mild repetition penalty" not in findings["sampling.strong_pull"].advice
    quiet = sampling_rules.strong_pull(make_ctx(runs=[make_run(0.7, repetition_rate=0.5)]))
    assert "add a mild repetition penalty (1.05-1.15)" in quiet.advice


def test_determinism_trap() -> None:
    case = make_case(temperatures=[0.0, 0.2, 0.3, 0.9], max_new_tokens=T.long_output_tokens)
    flag = sampling_rules.determinism_trap(make_ctx(case=case))
    assert flag is not None and flag.severity == "info"
    assert flag.evidence == {"temperatures": [0.0, 0.2], "max_new_tokens": 256,
                             "thresholds": {"low_temperature": 0.3, "long_output_tokens": 256}}


def test_determinism_trap_silent_just_below() -> None:
    short = make_case(temperatures=[0.2], max_new_tokens=T.long_output_tokens - 1)
    assert sampling_rules.determinism_trap(make_ctx(case=short)) is None
    warm = make_case(temperatures=[0.3, 1.0], max_new_tokens=1024)
    assert sampling_rules.determinism_trap(make_ctx(case=warm)) is None


@pytest.mark.parametrize(
    "top_k, top_p, n_problems",
    [
        (3, 0.9, 1),  # small top_k with top_p
        (1, 0.95, 1),
        (4, 0.9, 0),
        (3, 1.0, 0),  # top_p off: nothing to fight
        (0, 0.2, 1),  # tiny top_p
        (0, 0.21, 0),
        (2, 0.1, 2),
    ],
)
def test_truncation_settings(top_k: int, top_p: float, n_problems: int) -> None:
    flag = sampling_rules.truncation_settings(make_ctx(case=make_case(top_k=top_k, top_p=top_p)))
    if not n_problems:
        assert flag is None
        return
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence["top_k"] == top_k and flag.evidence["top_p"] == top_p
    assert len(flag.evidence["problems"]) == n_problems
    assert flag.evidence["thresholds"] == {"small_top_k": 3, "tiny_top_p": 0.2}


def test_repetition_penalty_high() -> None:
    flag = sampling_rules.repetition_penalty_high(make_ctx(case=make_case(repetition_penalty=1.3)))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {"repetition_penalty": 1.3, "threshold": 1.3}
    assert sampling_rules.repetition_penalty_high(make_ctx(case=make_case(repetition_penalty=1.29))) is None


# --- length ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rate, severity", [(0.5, "fail"), (0.9, "fail"), (0.2, "warn"),
                                            (0.49, "warn"), (0.0, None)])
def test_truncated(rate: float, severity: str | None) -> None:
    runs = [make_run(0.2), make_run(0.7, truncation_rate=rate)]
    flag = length_rules.truncated(make_ctx(case=make_case(max_new_tokens=64), runs=runs))
    if severity is None:
        assert flag is None
        return
    assert flag is not None and flag.severity == severity
    assert flag.evidence == {"truncation_rate": {"0.7": rate}, "max_new_tokens": 64,
                             "thresholds": {"warn_above": 0.0, "fail_at": 0.5}}


def test_truncated_severity_follows_worst_run() -> None:
    runs = [make_run(0.2, truncation_rate=0.125), make_run(1.2, truncation_rate=0.625)]
    flag = length_rules.truncated(make_ctx(runs=runs))
    assert flag.severity == "fail"
    assert flag.evidence["truncation_rate"] == {"0.2": 0.125, "1.2": 0.625}


def test_truncated_silent_without_sampling() -> None:
    assert length_rules.truncated(make_ctx(runs=None)) is None


@pytest.mark.parametrize(
    "prompt, window, severity, share",
    [
        (900, 1000, "fail", 1.028),  # (900 + 128) / 1000
        (873, 1000, "fail", 1.001),  # just over: 1001 / 1000
        (872, 1000, "warn", 1.0),  # exactly full still fits: warn, not fail
        (800, 1000, "warn", 0.928),
        (772, 1000, None, None),  # 900 / 1000 = 0.9, not above the share
        (500, 1000, None, None),
        (900, 0, None, None),  # window unknown
        (0, 1000, None, None),  # no tokenizer
    ],
)
def test_context_window(prompt: int, window: int, severity: str | None, share: float | None) -> None:
    inputs = make_inputs(prompt_tokens=prompt, context_window=window)
    flag = length_rules.context_window(make_ctx(case=make_case(max_new_tokens=128), inputs=inputs))
    if severity is None:
        assert flag is None
        return
    assert flag is not None and flag.severity == severity
    assert flag.evidence == {"prompt_tokens": prompt, "max_new_tokens": 128, "context_window": window,
                             "share": share, "threshold": 0.9}


# --- environment -----------------------------------------------------------------------------


def test_nondeterministic_fires_on_mismatch() -> None:
    check = DeterminismCheck(temperature=0.7, seed=3, batch_tokens=40, alone_tokens=38, first_mismatch=12)
    env = {"device": "cuda:0", "dtype": "bfloat16"}
    flag = env_rules.nondeterministic(make_ctx(environment=env, determinism=check))
    assert flag is not None and flag.severity == "fail"
    assert flag.evidence == {"temperature": 0.7, "seed": 3, "first_mismatch_position": 12,
                             "batch_tokens": 40, "alone_tokens": 38,
                             "device": "cuda:0", "dtype": "bfloat16"}


def test_nondeterministic_mismatch_at_first_token() -> None:
    check = DeterminismCheck(temperature=0.2, seed=0, batch_tokens=5, alone_tokens=5, first_mismatch=0)
    assert env_rules.nondeterministic(make_ctx(determinism=check)).evidence["first_mismatch_position"] == 0


def test_nondeterministic_silent_when_identical_or_unchecked() -> None:
    same = DeterminismCheck(temperature=0.7, seed=3, batch_tokens=40, alone_tokens=40, first_mismatch=None)
    assert env_rules.nondeterministic(make_ctx(determinism=same)) is None
    assert env_rules.nondeterministic(make_ctx(determinism=None)) is None


def test_reproducibility_is_per_seed_only_when_the_seed_reproduced_alone() -> None:
    same = DeterminismCheck(temperature=0.7, seed=3, batch_tokens=40, alone_tokens=40, first_mismatch=None)
    parted = DeterminismCheck(temperature=0.7, seed=3, batch_tokens=40, alone_tokens=40, first_mismatch=39)
    assert same.reproducibility == "per_seed"
    assert parted.reproducibility == "per_batch_composition"


def test_quantized_model() -> None:
    env = {"model_id": "m", "quantization": "Q4_K_M", "dtype": "float16"}
    flag = env_rules.quantized_model(make_ctx(environment=env))
    assert flag is not None and flag.severity == "info"
    assert flag.evidence == {"model_id": "m", "quantization": "Q4_K_M", "dtype": "float16"}
    assert env_rules.quantized_model(make_ctx(environment={"quantization": None})) is None
    assert env_rules.quantized_model(make_ctx(environment={})) is None


# --- framework -------------------------------------------------------------------------------


def test_sampler_portability_silent_for_portable_settings() -> None:
    assert framework_rules.sampler_portability(make_ctx()) is None
    # top_p with temperature exactly 1.0: order does not matter
    assert framework_rules.sampler_portability(make_ctx(case=make_case(temperatures=[1.0], top_p=0.9))) is None


@pytest.mark.parametrize(
    "sampling, engines",
    [
        ({"top_k": 40}, {"OpenAI"}),  # top-k keeps the same tokens whatever the temperature
        ({"top_p": 0.9}, {"llama.cpp / Ollama"}),
        ({"repetition_penalty": 1.1}, {"OpenAI / llama.cpp"}),
        ({"temperatures": [0.0]}, {"Hugging Face"}),
        ({"temperatures": [0.0, 0.7], "top_p": 0.9, "top_k": 50, "repetition_penalty": 1.2},
         {"OpenAI", "llama.cpp / Ollama", "OpenAI / llama.cpp", "Hugging Face"}),
    ],
)
def test_sampler_portability_notes(sampling: dict[str, Any], engines: set[str]) -> None:
    case = make_case(**sampling)
    flag = framework_rules.sampler_portability(make_ctx(case=case))
    assert flag is not None and flag.severity == "info"
    assert set(flag.evidence["differences"]) == engines
    spec = case.sampling
    assert flag.evidence["sampling"] == {"temperatures": spec.temperatures, "top_k": spec.top_k,
                                         "top_p": spec.top_p, "repetition_penalty": spec.repetition_penalty}
    if "OpenAI" in engines:
        assert f"top_k={spec.top_k}" in flag.evidence["differences"]["OpenAI"]


@pytest.mark.parametrize("position", [0.2, 0.25, 0.5, 0.75, 0.8, None])
@pytest.mark.parametrize("tokens", [T.lost_in_middle_tokens - 1, T.lost_in_middle_tokens])
def test_the_report_field_and_the_finding_decide_lost_in_the_middle_alike(position, tokens) -> None:
    from diagnose.triage.input_rules import lost_in_the_middle_at

    inputs = make_inputs(strongest_center_position=position, prompt_tokens=tokens)
    fired = input_rules.lost_in_the_middle(make_ctx(inputs=inputs)) is not None
    assert lost_in_the_middle_at(position, tokens, T) == fired


# --- sampling.answers_elsewhere ----------------------------------------------------------------


def _elsewhere_ctx(question: str, *labels: str):
    from diagnose.report import Sample

    centers = [GravityCenter(id=f"c{i}", documents=[f"d{i}"], mass=m, label=label)
               for i, (label, m) in enumerate(zip(labels, (0.6, 0.4)))]
    sample = Sample(seed=0, text="The line opened in 1998.", finish_reason="stop", answer_kind="other")
    run = make_run(0.7, answer_kinds={"answer": 7, "other": 1, "none": 0}, samples=[sample])
    case = msgspec.structs.replace(make_case(), question=question)
    return make_ctx(case=case, inputs=make_inputs(gravity_centers=centers), runs=[run])


def test_answers_elsewhere_advice_is_built_from_the_question_and_the_centers():
    flag = sampling_rules.answers_elsewhere(_elsewhere_ctx("How long is the Orvella tram line?", "12 km", "14 km"))
    assert flag is not None and "weeks" not in flag.advice
    assert '"How long is the Orvella tram line?"' in flag.advice
    assert '("12 km" or "14 km")' in flag.advice and "Answer with the value only, like 12 km." in flag.advice


def test_answers_elsewhere_advice_without_centers_names_no_form():
    flag = sampling_rules.answers_elsewhere(_elsewhere_ctx("Wer entwarf die Orvella-Brücke?"))
    assert "weeks" not in flag.advice and "Wer entwarf die Orvella-Brücke?" in flag.advice
