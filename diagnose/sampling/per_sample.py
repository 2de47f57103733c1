"""Per-sample values of one temperature run (contract section 3).

The regression gate (:mod:`diagnose.nightly.compare`) and the repair verdicts
(:mod:`diagnose.repair`) test the same statistics on the same values, so both read
them here. A run without samples has no per-sample values: each reader says None
(or falls back to the run's aggregate) rather than guessing.
"""

from __future__ import annotations

from typing import Literal

from diagnose.report import TemperatureRun

__all__ = ["sample_clusters", "sample_count", "sample_first_tokens"]


def sample_clusters(run: TemperatureRun) -> list[int] | None:
    """Each sample's meaning-cluster index, or None when the run has no samples."""
    return [x.cluster for x in run.samples] or None


def sample_first_tokens(run: TemperatureRun) -> list[str] | None:
    """Each sample's first token, else the run's ``first_tokens`` counts expanded, else None."""
    if run.samples and all(x.first_token for x in run.samples):
        return [x.first_token for x in run.samples]
    return [tok for tok, k in sorted(run.first_tokens.items()) for _ in range(int(k))] or None


def sample_count(run: TemperatureRun, kind: Literal["compliance_rate", "truncation_rate"]) -> tuple[int, int] | None:
    """``(k, n)``: samples that complied (``compliance_rate``) / were truncated
    (``truncation_rate``), from the samples, else from the rate and ``n``."""
    compliance = kind == "compliance_rate"
    if run.samples:
        return sum(1 for x in run.samples if (x.compliant if compliance else x.finish_reason == "length")), len(run.samples)
    rate = run.compliance_rate if compliance else run.truncation_rate
    return (round(float(rate) * run.n), int(run.n)) if run.n and rate is not None else None
