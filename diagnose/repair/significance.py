"""p-values for a repair's metrics, from the nightly gate's own tests.

* Rates: :func:`diagnose.nightly.stats.proportion_test` (two-sided Fisher exact).
* Spread metrics: :func:`diagnose.nightly.stats.stratified_bootstrap_diff_ci`,
  inverted. The interval at confidence ``1 - a`` excludes 0 exactly when the
  bootstrap's two-sided p-value is below ``a``, and with one seed every call draws
  the same resamples, so the intervals nest. The p-value is the smallest ``a`` whose
  interval excludes 0, found by bisection on a log scale between ``1/resamples``
  (the bootstrap's resolution, reported as that bound) and 1.

Bonferroni: every p-value of a family of ``m`` tests is multiplied by ``m`` (at most 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from diagnose.nightly.stats import proportion_test, stratified_bootstrap_diff_ci
from diagnose.repair.measures import Metric, Side, counts

BISECTION_STEPS = 10
"""Halvings of the log-interval between 1/resamples and 1 (about 3% relative precision)."""


@dataclass(frozen=True)
class Settings:
    alpha: float = 0.05
    """Family-wise significance level (the gate's ``GateSettings.alpha``)."""
    resamples: int = 1000
    """Bootstrap rounds per interval (p-values below 1/resamples read as that bound)."""
    seed: int = 0
    """Seed of the bootstrap's random generator."""


@dataclass(frozen=True)
class Outcome:
    before: float
    after: float
    diff: float
    p: float


def compare(metric: Metric, pairs: Sequence[tuple[Side, Side]], settings: Settings) -> Outcome | None:
    """The original (first of each pair) against the candidate, pooled over the pairs
    (one pair per temperature). None when a side lacks the per-sample values."""
    if metric.test == "fisher_exact":
        before, after = counts(metric.name, [b for b, _ in pairs]), counts(metric.name, [a for _, a in pairs])
        if before is None or after is None:
            return None
        rate_b, rate_a = before[0] / before[1], after[0] / after[1]
        return Outcome(rate_b, rate_a, rate_a - rate_b, proportion_test(*before, *after))
    strata = [(metric.values(b), metric.values(a)) for b, a in pairs]
    if any(b is None or a is None for b, a in strata):
        return None
    before = sum(metric.statistic(np.asarray(b)) for b, _ in strata) / len(strata)
    after = sum(metric.statistic(np.asarray(a)) for _, a in strata) / len(strata)
    diff, p = bootstrap_p_value(metric.statistic, strata, settings)
    return Outcome(float(before), float(after), diff, p)


def bootstrap_p_value(statistic, strata, settings: Settings) -> tuple[float, float]:
    """``(diff, p)``: the observed mean difference and the smallest ``a`` at which the
    stratified bootstrap's ``1 - a`` interval excludes 0 (see the module docstring)."""

    def excludes(a: float) -> tuple[float, bool]:
        diff, low, high = stratified_bootstrap_diff_ci(
            statistic, strata, resamples=settings.resamples, confidence=1.0 - a, seed=settings.seed)
        return diff, low > 0 or high < 0

    floor = 1.0 / settings.resamples
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


def bonferroni(p: float, tests: int) -> float:
    return min(1.0, p * max(tests, 1))

