"""Thresholds the triage rules read (a group of :class:`diagnose.settings.Settings`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TriageThresholds:
    conflict_score_warn: float = 0.5
    """input.conflict.score at or above this is a warning."""
