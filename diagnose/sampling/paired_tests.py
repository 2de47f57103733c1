"""p-values for two sampled sides of one comparison (a repair against the original, the full
context against its control), from the nightly gate's own tests.

* Rates: :func:`diagnose.stats.proportion_test` (two-sided Fisher exact).
* Spread metrics: :func:`diagnose.stats.bootstrap_p_value`, the stratified bootstrap inverted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from diagnose.sampling.paired_measures import Metric, Side, counts
from diagnose.stats import bootstrap_p_value, proportion_test


@dataclass(frozen=True)
class SignificanceSettings:
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


def compare(metric: Metric, pairs: Sequence[tuple[Side, Side]], settings: SignificanceSettings) -> Outcome | None:
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
    diff, p = bootstrap_p_value(metric.statistic, strata, settings.resamples, settings.seed)
    return Outcome(float(before), float(after), diff, p)
