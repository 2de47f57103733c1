"""The gate's statistics: bootstrap intervals and exact tests, checked against hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diagnose.stats import bootstrap_diff_ci, proportion_test
from diagnose.sampling.metrics import first_token_divergence, semantic_entropy


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


# --- bootstrap -----------------------------------------------------------------------------


def test_identical_constant_samples_give_exactly_zero_interval() -> None:
    assert bootstrap_diff_ci(semantic_entropy, [2] * 16, [2] * 16) == (0.0, 0.0, 0.0)
    assert bootstrap_diff_ci(first_token_divergence, ["The"] * 16, ["The"] * 16) == (0.0, 0.0, 0.0)


def test_constant_sides_give_a_degenerate_interval_at_the_difference() -> None:
    # every resample of a constant run is the run itself
    assert bootstrap_diff_ci(_mean, [0.0] * 5, [1.0] * 5) == (1.0, 1.0, 1.0)


def test_two_point_current_run_gives_the_hand_computed_percentiles() -> None:
    # current = [0, 1]: a resample's mean is 0, 0.5, 1 with probability 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% quantiles of the difference are 0 and 1; the point diff is 0.5.
    diff, low, high = bootstrap_diff_ci(_mean, [0.0], [0.0, 1.0], resamples=4000)
    assert (diff, low, high) == (0.5, 0.0, 1.0)


def test_clearly_shifted_samples_give_an_interval_excluding_zero() -> None:
    one_meaning = [0] * 16
    three_meanings = [0] * 6 + [1] * 5 + [2] * 5
    diff, low, high = bootstrap_diff_ci(semantic_entropy, one_meaning, three_meanings)
    assert diff == pytest.approx(semantic_entropy(three_meanings))
    assert 0.0 < low <= high
    down = bootstrap_diff_ci(semantic_entropy, three_meanings, one_meaning)
    assert down[0] == pytest.approx(-diff) and down[2] < 0.0


def test_reordered_samples_from_one_distribution_straddle_zero() -> None:
    baseline = [0] * 10 + [1] * 4 + [2] * 2
    current = list(reversed(baseline))
    diff, low, high = bootstrap_diff_ci(semantic_entropy, baseline, current)
    assert diff == 0.0 and low < 0.0 < high


def test_bootstrap_is_reproducible_for_a_seed_and_draws_per_seed() -> None:
    baseline, current = [0] * 12 + [1] * 4, [0] * 8 + [1] * 5 + [2] * 3
    first = bootstrap_diff_ci(semantic_entropy, baseline, current, seed=7)
    assert bootstrap_diff_ci(semantic_entropy, baseline, current, seed=7) == first
    others = {bootstrap_diff_ci(semantic_entropy, baseline, current, seed=s, resamples=200) for s in range(5)}
    assert len(others) > 1


def test_bootstrap_does_not_touch_global_numpy_state() -> None:
    np.random.seed(123)
    expected = np.random.random()
    np.random.seed(123)
    bootstrap_diff_ci(semantic_entropy, [0, 1], [1, 2], resamples=50)
    assert np.random.random() == expected


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"resamples": 0}, "resamples"), ({"confidence": 1.0}, "confidence"), ({"confidence": 0.0}, "confidence")],
)
def test_bootstrap_rejects_bad_settings(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        bootstrap_diff_ci(_mean, [1.0], [2.0], **kwargs)


def test_bootstrap_rejects_an_empty_side() -> None:
    with pytest.raises(ValueError, match="baseline_values"):
        bootstrap_diff_ci(_mean, [], [1.0])
    with pytest.raises(ValueError, match="current_values"):
        bootstrap_diff_ci(_mean, [1.0], [])


# --- Fisher exact test ---------------------------------------------------------------------


def _hypergeometric(x: int, row: int, col: int, total: int) -> float:
    """P(top-left cell = x) for a 2x2 table with the given first-row, first-column and grand totals."""
    return math.comb(col, x) * math.comb(total - col, row - x) / math.comb(total, row)


def test_fisher_on_a_tiny_table_matches_the_hypergeometric_sum() -> None:
    # [[2, 0], [0, 2]]: P(x) = 1/6, 4/6, 1/6 for x = 0, 1, 2; tables as unlikely as x=2: x=0 and x=2.
    assert proportion_test(2, 2, 0, 2) == pytest.approx(1 / 3)
    # [[3, 1], [1, 3]]: P(x) = 1, 16, 36, 16, 1 (/70); as unlikely as x=3: x in {0, 1, 3, 4}.
    assert proportion_test(3, 4, 1, 4) == pytest.approx(34 / 70)


def test_fisher_on_an_asymmetric_table_matches_the_hypergeometric_sum() -> None:
    # [[1, 4], [5, 1]]: first row 5, first column 6, total 11.
    probs = {x: _hypergeometric(x, 5, 6, 11) for x in range(0, 6)}
    expected = sum(p for p in probs.values() if p <= probs[1] * (1 + 1e-7))
    assert proportion_test(1, 5, 5, 6) == pytest.approx(expected)


def test_fisher_for_truncation_jumping_from_none_to_twelve_of_sixteen() -> None:
    # symmetric margins: x=0 and x=12 are the two extreme, equally likely tables
    expected = 2 * math.comb(16, 12) / math.comb(32, 12)
    assert proportion_test(0, 16, 12, 16) == pytest.approx(expected)
    assert proportion_test(0, 16, 12, 16) < 1e-4


def test_fisher_equal_rates_give_one_and_the_test_is_symmetric() -> None:
    assert proportion_test(5, 16, 5, 16) == pytest.approx(1.0)
    assert proportion_test(16, 16, 16, 16) == 1.0
    assert proportion_test(3, 10, 8, 12) == pytest.approx(proportion_test(8, 12, 3, 10))


@pytest.mark.parametrize(("args", "match"), [((5, 4, 1, 4), "baseline_k"), ((1, 4, -1, 4), "current_k"),
                                             ((0, 0, 1, 4), "baseline_n")])
def test_fisher_rejects_impossible_counts(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        proportion_test(*args)
