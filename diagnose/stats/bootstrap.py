"""Bootstrap intervals and p-values for the change of a per-run statistic (semantic entropy,
first-token divergence, as defined once in :mod:`diagnose.sampling.metrics`), from the
per-sample values of each run: outputs are random, so runs are compared as distributions,
never single outputs.

Randomness comes only from a ``numpy.random.Generator`` seeded by the caller's ``seed``:
the same inputs and seed give the same interval.

:func:`bootstrap_p_value` inverts :func:`stratified_bootstrap_diff_ci`. The interval at
confidence ``1 - a`` excludes 0 exactly when the bootstrap's two-sided p-value is below
``a``, and with one seed every call draws the same resamples, so the intervals nest. The
p-value is the smallest ``a`` whose interval excludes 0, found by bisection on a log scale
between ``1/resamples`` (the bootstrap's resolution, reported as that bound) and 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["bootstrap_diff_ci", "bootstrap_p_value", "stratified_bootstrap_diff_ci"]

BISECTION_STEPS = 10
"""Halvings of the log-interval between 1/resamples and 1 (about 3% relative precision)."""

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


def bootstrap_p_value(statistic: Statistic, strata: Sequence[tuple[Sequence[float], Sequence[float]]],
                      resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """``(diff, p)``: the observed mean difference and the smallest ``a`` at which the
    stratified bootstrap's ``1 - a`` interval excludes 0 (see the module docstring)."""

    def excludes(a: float) -> tuple[float, bool]:
        diff, low, high = stratified_bootstrap_diff_ci(statistic, strata, resamples=resamples,
                                                       confidence=1.0 - a, seed=seed)
        return diff, low > 0 or high < 0

    floor = 1.0 / resamples
    diff, at_floor = excludes(floor)
    if at_floor:
        return diff, floor
    if not excludes(1.0 - 1e-9)[1]:  # not even the median is off 0
        return diff, 1.0
    low, high = math.log(floor), 0.0
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        if excludes(math.exp(middle))[1]:
            high = middle
        else:
            low = middle
    return diff, min(1.0, math.exp(high))
