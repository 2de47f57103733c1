"""The metrics a repair is judged by, and each one's per-sample values.

Every metric is one of the run-level statistics the nightly gate tests, read the
same way (:mod:`diagnose.sampling.per_sample`, :mod:`diagnose.sampling.metrics`):

* spread metrics, tested with the stratified bootstrap (one stratum per
  temperature): ``semantic_entropy`` (per-sample meaning clusters),
  ``first_token_divergence`` (first tokens), ``repetition_rate`` and
  ``temperature_last_divergence`` (per-sample values from the decoded traces);
* rates, tested with Fisher's exact test on counts pooled over temperatures:
  ``center_split`` (samples *off* the leading center: the share the gate's
  center-pull test reads, turned so that lower is better), ``compliance_rate``
  and ``truncation_rate``.

A side is one temperature run (:class:`~diagnose.report.TemperatureRun`) plus its
traces in seed order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from diagnose.sampling.per_sample import sample_clusters, sample_count, sample_first_tokens
from diagnose.sampling import metrics
from diagnose.decode.engine import Trace
from diagnose.report import TemperatureRun


@dataclass(frozen=True)
class Side:
    """One temperature run of the original or of a candidate."""

    run: TemperatureRun
    traces: Sequence[Trace]


@dataclass(frozen=True)
class Metric:
    name: str
    test: Literal["stratified_bootstrap", "fisher_exact"]
    better: Literal[-1, 1]
    """-1: lower is better (every wobble metric); +1: higher is better (compliance)."""
    label: str
    unit: Literal["nats", "share"]
    min_change: float
    """The smallest change that counts, even when significant."""
    values: Callable[[Side], list[Any] | None] | None = None
    """Spread metrics: the per-sample values the statistic reads."""
    statistic: Callable[[np.ndarray], float] | None = None

    def value(self, sides: Sequence[Side]) -> float | None:
        """The metric of one run (or of several runs pooled, for rates)."""
        if self.test == "fisher_exact":
            counted = counts(self.name, sides)
            return None if counted is None else counted[0] / counted[1]
        values = self.values(sides[0]) if len(sides) == 1 else None
        return None if values is None else float(self.statistic(np.asarray(values)))


def counts(name: str, sides: Sequence[Side]) -> tuple[int, int] | None:
    """``(k, n)`` pooled over ``sides``: for ``center_split`` the samples that do not
    follow the sides' leading center (the most common attribution, ``"none"`` included),
    else :func:`sample_count` (compliant / truncated samples)."""
    if name == "center_split":
        followed = Counter(s.center for side in sides for s in side.run.samples)
        n = sum(followed.values())
        return (n - max(followed.values()), n) if n else None
    found = [sample_count(side.run, name) for side in sides]
    if any(x is None for x in found) or not found:
        return None
    return sum(k for k, _ in found), sum(n for _, n in found)


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _repetition(side: Side) -> list[float] | None:
    return [metrics.repetition_rate([tr.tokens]) for tr in side.traces] or None


def _order_divergence(side: Side) -> list[float] | None:
    return [metrics.order_divergence([tr.steps]) for tr in side.traces] or None


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("center_split", "fisher_exact", -1, "center split", "share", 0.2),
    Metric("semantic_entropy", "stratified_bootstrap", -1, "semantic entropy", "nats", 0.3,
           lambda side: sample_clusters(side.run), metrics.semantic_entropy),
    Metric("first_token_divergence", "stratified_bootstrap", -1, "first-token divergence", "share", 0.2,
           lambda side: sample_first_tokens(side.run), metrics.first_token_divergence),
    Metric("repetition_rate", "stratified_bootstrap", -1, "repetition rate", "share", 0.1, _repetition, _mean),
    Metric("temperature_last_divergence", "stratified_bootstrap", -1, "temperature-last divergence", "share",
           0.05, _order_divergence, _mean),
    Metric("compliance_rate", "fisher_exact", 1, "compliance", "share", 0.2),
    Metric("truncation_rate", "fisher_exact", -1, "truncation", "share", 0.2),
)}
"""Minimum changes: the nightly gate's (``GateSettings``) for the metrics it tests;
0.1 for repetition (the strong-pull threshold is 0.25) and 0.05 for the share of
steps where a temperature-last sampler differs (the portability warning is at 0.1)."""
