"""Per-sample values of one temperature run, read from its report dict (contract section 3).

The regression gate (:mod:`diagnose.nightly.compare`) and the repair verdicts
(:mod:`diagnose.repair`) test the same statistics on the same values, so both read
them here. Older reports may lack per-sample fields: each reader says None (or falls
back to the run's aggregate) rather than guessing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["sample_clusters", "sample_count", "sample_first_tokens"]


def sample_clusters(run: dict[str, Any]) -> list[Any] | None:
    """Each sample's meaning-cluster index, or None when a sample lacks one."""
    samples = run.get("samples") or []
    return [x["cluster"] for x in samples] if samples and all("cluster" in x for x in samples) else None


def sample_first_tokens(run: dict[str, Any]) -> list[Any] | None:
    """Each sample's first token, else the run's ``first_tokens`` counts expanded, else None."""
    samples = run.get("samples") or []
    if samples and all(x.get("first_token") for x in samples):
        return [x["first_token"] for x in samples]
    counts = run.get("first_tokens") or {}
    return [tok for tok, k in sorted(counts.items()) for _ in range(int(k))] or None


def sample_count(run: dict[str, Any], kind: str) -> tuple[int, int] | None:
    """``(k, n)``: samples that complied (``compliance_rate``) / were truncated
    (``truncation_rate``), from the samples, else from the rate and ``n``."""
    samples = run.get("samples") or []
    field, test = (("compliant", bool) if kind == "compliance_rate"
                   else ("finish_reason", lambda r: r == "length"))
    if samples and all(field in x for x in samples):
        return sum(1 for x in samples if test(x[field])), len(samples)
    n, rate = run.get("n") or len(samples), run.get(kind)
    return (round(float(rate) * n), int(n)) if n and rate is not None else None
