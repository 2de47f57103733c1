"""The regression gate's thresholds (a group of :class:`diagnose.settings.Settings`, ``gate``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateSettings:
    confidence: float = 0.95
    """Confidence level of the bootstrap intervals."""
    resamples: int = 2000
    """Bootstrap rounds per interval."""
    min_entropy_change: float = 0.3
    """Smallest semantic-entropy increase (nats) that counts, even when significant."""
    min_divergence_change: float = 0.2
    """Smallest first-token-divergence increase that counts, even when significant."""
    alpha: float = 0.05
    """Significance level of the Fisher exact tests."""
    min_rate_change: float = 0.2
    """Smallest compliance/truncation rate change (absolute) that counts."""
    center_shift_min_share: float = 0.2
    """A new leading center must hold at least this share of samples to count."""
    seed: int = 0
    """Seed of the bootstrap's random generator."""
