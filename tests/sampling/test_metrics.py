"""Metric functions, with expected values worked out by hand in each test."""

from __future__ import annotations

import math

import pytest
import torch

from diagnose.decode.steps import StepRecord, entropy_nats
from diagnose.sampling.metrics import (
    Bifurcation,
    bifurcations,
    center_pull,
    compliance_rate,
    first_token_divergence,
    mean_entropy,
    perplexity,
    repetition_rate,
    semantic_entropy,
    truncation_rate,
)

NEG_INF = float("-inf")


# --- entropy_nats -----------------------------------------------------------------


def test_entropy_of_uniform_is_log_v():
    assert entropy_nats(torch.zeros(4)).item() == pytest.approx(math.log(4), abs=1e-6)


def test_entropy_handles_removed_tokens():
    # two equal survivors -> ln 2; -inf entries contribute 0, not nan
    out = entropy_nats(torch.tensor([0.0, NEG_INF, 0.0, NEG_INF]))
    assert out.item() == pytest.approx(math.log(2), abs=1e-6)
    # a single survivor (greedy) -> exactly 0
    assert entropy_nats(torch.tensor([NEG_INF, 3.0, NEG_INF])).item() == 0.0


def test_entropy_hand_computed_and_batched():
    # probs [1/2, 1/4, 1/4]: H = 1/2 ln 2 + 2 * 1/4 ln 4 = 1.5 ln 2
    row = [math.log(2.0), 0.0, 0.0]
    batch = torch.tensor([row, [0.0, 0.0, NEG_INF]], dtype=torch.float32)
    out = entropy_nats(batch)
    assert out.shape == (2,)
    assert out.tolist() == pytest.approx([1.5 * math.log(2), math.log(2)], abs=1e-6)


def test_entropy_upcasts_half_precision():
    out = entropy_nats(torch.zeros(2, 8, dtype=torch.bfloat16))
    assert out.dtype == torch.float32
    assert out.tolist() == pytest.approx([math.log(8)] * 2, abs=1e-6)


# --- first_token_divergence -------------------------------------------------------


def test_first_token_divergence():
    assert first_token_divergence([5, 5, 5, 5]) == 0.25  # all agree: 1/n
    assert first_token_divergence([5, 6, 5, 7]) == 0.75
    assert first_token_divergence([1, 2, 3]) == 1.0
    with pytest.raises(ValueError):
        first_token_divergence([])


# --- mean_entropy / perplexity: pooled over positions -----------------------------


def test_mean_entropy_pools_positions_not_samples():
    # 4 positions in all: (0 + 1 + 2 + 1) / 4 = 1.0; a per-sample mean would give 1.25
    assert mean_entropy([[0.0, 1.0, 2.0], [1.0]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        mean_entropy([[], []])


def test_perplexity_pools_tokens():
    # NLLs 1, 1, 4 -> mean 2 -> e^2
    assert perplexity([[-1.0, -1.0], [-4.0]]) == pytest.approx(math.exp(2.0))
    # every token had raw probability 1/4 -> perplexity 4
    assert perplexity([[math.log(0.25)] * 3, [math.log(0.25)]]) == pytest.approx(4.0)
    assert perplexity([[0.0]]) == 1.0
    with pytest.raises(ValueError):
        perplexity([])


# --- repetition_rate --------------------------------------------------------------


def test_repetition_rate_by_hand():
    # [1,2,3,1,2,3]: 3-grams 123 231 312 123 -> 1 repeat of 4 = 0.25
    # [7,7,7,7]: 777 777 -> second repeats -> 0.5
    # [1,2]: no 3-gram -> 0.0 (still counted in the average)
    # mean = (0.25 + 0.5 + 0.0) / 3 = 0.25
    assert repetition_rate([[1, 2, 3, 1, 2, 3], [7, 7, 7, 7], [1, 2]]) == pytest.approx(0.25)


def test_repetition_rate_edges():
    assert repetition_rate([[1, 2, 3, 4, 5]]) == 0.0
    assert repetition_rate([[], [9]]) == 0.0
    # 3-gram order matters: 123 vs 321 are different
    assert repetition_rate([[1, 2, 3, 2, 1]]) == 0.0


# --- semantic_entropy -------------------------------------------------------------


def test_semantic_entropy_by_hand():
    assert semantic_entropy([0, 0, 0]) == 0.0
    assert semantic_entropy([0, 1, 2, 3]) == pytest.approx(math.log(4))
    # sizes 2, 1, 1 of 4: -(.5 ln .5 + 2 * .25 ln .25) = 1.5 ln 2
    assert semantic_entropy([0, 0, 1, 2]) == pytest.approx(1.5 * math.log(2))
    with pytest.raises(ValueError):
        semantic_entropy([])


# --- compliance / truncation ------------------------------------------------------


def test_compliance_rate():
    assert compliance_rate([True, True, False, True]) == 0.75
    assert compliance_rate([True]) == 1.0


def test_truncation_rate():
    assert truncation_rate(["stop", "length", "stop", "length", "length"]) == 0.6
    assert truncation_rate(["stop"]) == 0.0


# --- center_pull ------------------------------------------------------------------


def test_center_pull_has_every_key_and_sums_to_one():
    pull = center_pull(["c1", "none", "c1", "c1"], ["c1", "c2"])
    assert pull == {"c1": 0.75, "c2": 0.0, "none": 0.25}
    assert list(pull) == ["c1", "c2", "none"]
    assert sum(pull.values()) == pytest.approx(1.0)


def test_center_pull_without_centers():
    assert center_pull(["none", "none"], []) == {"none": 1.0}


@pytest.mark.parametrize(
    ("attributions", "centers"),
    [(["c3"], ["c1"]), (["none"], ["none"]), (["c1"], ["c1", "c1"]), ([], ["c1"])],
)
def test_center_pull_rejects_bad_input(attributions, centers):
    with pytest.raises(ValueError):
        center_pull(attributions, centers)


# --- bifurcations -----------------------------------------------------------------


def _step(token: int, top2=(10, 11), probs=(0.5, 0.4)) -> StepRecord:
    return StepRecord(
        token=token, raw_logprob=-0.5, entropy=1.0, top2_tokens=top2, top2_probs=probs
    )


def test_step_record_is_frozen():
    with pytest.raises(AttributeError):
        _step(1).token = 2  # type: ignore[misc]


def test_bifurcation_found_where_near_tie_and_split():
    sure = dict(top2=(1, 2), probs=(0.9, 0.05))
    tie = dict(top2=(10, 11), probs=(0.46, 0.44))
    samples = [
        [_step(1, **sure), _step(10, **tie), _step(5, **sure)],
        [_step(1, **sure), _step(11, **tie), _step(6, **sure)],
        [_step(1, **sure), _step(10, **tie), _step(5, **sure)],
    ]
    found = bifurcations(samples, margin=0.1)
    assert found == [Bifurcation(position=1, prefix=(1,), candidates=(10, 11), margin=pytest.approx(0.02))]
    # position 2 splits too (5 vs 6) but under different prefixes (10 vs 11), and not near-tied


def test_no_bifurcation_without_split_or_without_tie():
    tie = dict(top2=(10, 11), probs=(0.45, 0.44))
    agree = [[_step(10, **tie)], [_step(10, **tie)]]
    assert bifurcations(agree, margin=0.1) == []  # tied but everybody chose 10
    wide = dict(top2=(10, 11), probs=(0.7, 0.2))
    split = [[_step(10, **wide)], [_step(11, **wide)]]
    assert bifurcations(split, margin=0.1) == []  # split but margin 0.5
    assert len(bifurcations(split, margin=0.6)) == 1
    # margin exactly at the threshold is not "below" it
    edge = dict(top2=(10, 11), probs=(0.5, 0.25))
    assert bifurcations([[_step(10, **edge)], [_step(11, **edge)]], margin=0.25) == []


def test_bifurcation_groups_by_shared_prefix_only():
    tie = dict(top2=(10, 11), probs=(0.4, 0.38))
    samples = [
        [_step(1), _step(10, **tie)],
        [_step(2), _step(11, **tie)],  # differs from sample 0 at 0: different prefix at 1
        [_step(1), _step(10, **tie)],
        [_step(2), _step(10, **tie)],
    ]
    found = bifurcations(samples, margin=0.05)
    # position 0: split 1 vs 2 with margin 0.1 (not < 0.05); position 1: prefix (1,) agrees,
    # prefix (2,) splits 11 vs 10 -> one bifurcation
    assert [(b.position, b.prefix, b.candidates) for b in found] == [(1, (2,), (10, 11))]
    assert found[0].margin == pytest.approx(0.02)


def test_bifurcation_ignores_finished_samples_and_empty_input():
    tie = dict(top2=(3, 4), probs=(0.3, 0.3))
    samples = [[_step(3, **tie)], [_step(3, **tie), _step(3, **tie)], [_step(3, **tie), _step(4, **tie)]]
    found = bifurcations(samples, margin=0.1)
    assert found == [Bifurcation(1, (3,), (3, 4), 0.0)]
    assert bifurcations([], margin=0.1) == []
    assert bifurcations([[], []], margin=0.1) == []
