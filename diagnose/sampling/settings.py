"""Thresholds of the sampling stage's measurements (a group of :class:`diagnose.settings.Settings`).

They decide how samples are grouped and attributed, so they shape the metrics the
triage rules read (``semantic_entropy``, ``center_pull``, ``bifurcations``); the rules'
own cut-offs are in :class:`diagnose.triage.thresholds.TriageThresholds`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SamplingSettings:
    meaning_similarity: float = 0.85
    """Two non-empty samples at least this similar (cosine) share a meaning cluster
    (:func:`diagnose.sampling.semantic.meaning_clusters`, feeds ``semantic_entropy``)."""
    pull_min_similarity: float = 0.45
    """A sample that states no center's answer follows the center holding its most similar
    document only at or above this cosine (:func:`diagnose.sampling.pull.attribute_samples`);
    otherwise it follows ``"none"``."""
    pull_min_margin: float = 0.03
    """... and only when that center beats the runner-up by at least this cosine."""
    bifurcation_margin: float = 0.1
    """Top-2 probability gap under which a position counts as nearly tied (``bifurcations``)."""
    regex_timeout_s: float = 0.1
    """Time limit (seconds, the ``regex`` module's) of one regex constraint's match on one
    sample; a match stopped at it leaves the constraint's compliance unknown
    (``sampling.constraint_timeout``) and the constraint is not run again in that diagnosis."""
    regex_budget_s: float = 1.0
    """Time (seconds, wall clock) one regex constraint may take over all the samples of a
    diagnosis; once spent, the constraint is stopped as if it had timed out."""
