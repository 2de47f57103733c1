"""What a repair did, from its tests and the re-run triage.

A repair's *tests* are its metrics, each compared before/after pooled over the
temperatures (:mod:`diagnose.sampling.paired_tests`). A test is *significant* when
its Bonferroni-corrected p-value (corrected over every metric of every repair
sampled in the diagnosis) is below ``alpha`` and the change reaches the metric's
minimum (:data:`diagnose.sampling.paired_measures.METRICS`). Its outcome is then
``better`` or ``worse`` by the metric's direction; otherwise ``none``.

The verdicts:

* ``worse``: some tested metric (a target or a guard) got significantly worse;
* ``fixes``: no metric got worse, a *target* metric (the wobble the answered finding
  is about) got significantly better, and none of the answered findings fires any
  more when triage is re-run on the candidate (same thresholds; a finding still at
  a lower severity counts as gone);
* ``helps``: no metric got worse and a target got significantly better, but an
  answered finding still fires;
* ``no_effect``: anything else, including a finding that no longer fires without a
  significant improvement (a threshold crossed by noise is not a verified repair).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from diagnose.report import RepairTest, RepairVerdict
from diagnose.sampling.paired_measures import Metric

VERDICT_RANK: dict[str, int] = {"fixes": 0, "helps": 1, "no_effect": 2, "worse": 3}
"""Best first."""


def outcome(metric: Metric, diff: float, p_adjusted: float, alpha: float) -> Literal["better", "worse", "none"]:
    if p_adjusted >= alpha or abs(diff) < metric.min_change - 1e-12:
        return "none"
    return "better" if diff * metric.better > 0 else "worse"


def verdict(tests: Sequence[RepairTest], resolved: bool) -> RepairVerdict:
    if any(t.outcome == "worse" for t in tests):
        return "worse"
    improved = any(t.role == "target" and t.outcome == "better" for t in tests)
    if not improved:
        return "no_effect"
    return "fixes" if resolved else "helps"
