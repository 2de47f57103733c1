"""Thresholds of the input stage (a group of :class:`diagnose.settings.Settings`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputSettings:
    noise_relevance: float = 0.15
    """A document whose cosine similarity to the question is below this is noise."""
    center_similarity: float = 0.75
    """Documents at least this similar (cosine) may join the same center."""
    seed: int = 0
    """Seed for any randomised step (k-means, projections)."""
