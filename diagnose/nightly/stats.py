"""Noise-aware statistics for the regression gate, as pure functions.

Outputs are random, so the gate compares the *distributions* of two runs, never
single outputs. Two tools:

* :func:`bootstrap_diff_ci`: a percentile bootstrap confidence interval for the
  change of a per-run statistic (semantic entropy, first-token divergence, as
  defined once in :mod:`diagnose.sampling.metrics`), from the per-sample values
  of each run;
* :func:`proportion_test`: a two-sided Fisher exact test for a change of a rate
  (compliance, truncation) between two runs of ``n`` samples.

Randomness comes only from a ``numpy.random.Generator`` seeded by the caller's
``seed``: the same inputs and seed give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.stats import fisher_exact

__all__ = ["bootstrap_diff_ci", "proportion_test", "stratified_bootstrap_diff_ci"]

Statistic = Callable[[np.ndarray], float]
"""A run-level statistic of a 1-D array of per-sample values (length n >= 1)."""


def bootstrap_diff_ci(
    statistic: Statistic,
    baseline_values: Sequence[Any] | np.ndarray,
    current_values: Sequence[Any] | np.ndarray,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Percentile bootstrap CI of ``statistic(current) - statistic(baseline)``.

    Inputs: ``baseline_values`` and ``current_values`` are the per-sample values
    of each run (1-D, n >= 1 each, lengths may differ). Each of ``resamples``
    rounds redraws both sides independently, with replacement and at their own
    size, and records the difference of the statistic; the interval is the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of those
    differences. Returns ``(diff, low, high)`` where ``diff`` is the observed
    difference. Deterministic for a given ``seed``.
    """
    return stratified_bootstrap_diff_ci(
        statistic, [(baseline_values, current_values)], resamples=resamples, confidence=confidence, seed=seed
    )


def stratified_bootstrap_diff_ci(
    statistic: Statistic,
    strata: Sequence[tuple[Sequence[Any] | np.ndarray, Sequence[Any] | np.ndarray]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Percentile bootstrap CI of the mean over strata of ``statistic(current) - statistic(baseline)``.

    Inputs: one ``(baseline_values, current_values)`` pair per stratum (here: per
    temperature, whose spreads differ by design); each side is 1-D with n >= 1.
    Every round redraws each side of each stratum independently, with replacement,
    at its own size. Returns ``(diff, low, high)``; deterministic for a given ``seed``.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not strata:
        raise ValueError("need at least one stratum")
    pairs = []
    for base_values, cur_values in strata:
        base, cur = np.asarray(base_values), np.asarray(cur_values)
        if base.ndim != 1 or base.size == 0:
            raise ValueError("baseline_values must be a non-empty 1-D sequence")
        if cur.ndim != 1 or cur.size == 0:
            raise ValueError("current_values must be a non-empty 1-D sequence")
        pairs.append((base, cur))
    rng = np.random.default_rng(seed)
    diffs = np.zeros(resamples, dtype=np.float64)
    for base, cur in pairs:
        base_idx = rng.integers(0, base.size, size=(resamples, base.size))
        cur_idx = rng.integers(0, cur.size, size=(resamples, cur.size))
        diffs += np.fromiter(
            (statistic(cur[c]) - statistic(base[b]) for b, c in zip(base_idx, cur_idx)),
            dtype=np.float64,
            count=resamples,
        )
    diffs /= len(pairs)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(diffs, [tail, 1.0 - tail])
    diff = sum(statistic(cur) - statistic(base) for base, cur in pairs) / len(pairs)
    return float(diff), float(low), float(high)


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
