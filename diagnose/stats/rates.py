"""Tests for a change of a rate (compliance, truncation, a center's share) between two runs of
``n`` samples, and the correction for testing a family of them."""

from __future__ import annotations

import math

from scipy.stats import fisher_exact

__all__ = ["bonferroni", "proportion_test"]


def proportion_test(baseline_k: int, baseline_n: int, current_k: int, current_n: int) -> float:
    """Two-sided Fisher exact test p-value for ``baseline_k/baseline_n`` vs ``current_k/current_n``.

    Inputs: ``k`` samples out of ``n`` had the property (compliant, truncated) in
    each run; ``n >= 1`` and ``0 <= k <= n``. The 2x2 table is
    ``[[baseline_k, baseline_n - baseline_k], [current_k, current_n - current_k]]``;
    the p-value sums the hypergeometric probabilities of all tables with the same
    margins that are no more likely than the observed one. 1.0 when the rates match.
    """
    for name, k, n in (("baseline", baseline_k, baseline_n), ("current", current_k, current_n)):
        if n < 1:
            raise ValueError(f"{name}_n must be >= 1, got {n}")
        if not 0 <= k <= n:
            raise ValueError(f"{name}_k must be in [0, {name}_n={n}], got {k}")
    table = [[baseline_k, baseline_n - baseline_k], [current_k, current_n - current_k]]
    result = fisher_exact(table, alternative="two-sided")
    p_value = float(result.pvalue)
    return 1.0 if math.isnan(p_value) else min(1.0, p_value)


def bonferroni(p: float, tests: int) -> float:
    """Every p-value of a family of ``tests`` tests multiplied by their number (at most 1)."""
    return min(1.0, p * max(tests, 1))
