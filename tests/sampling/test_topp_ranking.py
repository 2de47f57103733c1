"""Top-p after top-k ranks only the surviving candidates; it must match a full-vocabulary sort."""

from __future__ import annotations

import torch

from diagnose.decode.processors import TopK, TopP


def _full_sort_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    remove_sorted = before >= p
    remove_sorted[..., 0] = False
    remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def test_fast_ranking_matches_full_sort_including_ties():
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(16, 5000, generator=gen)
    logits[:, :40] = 2.0  # many exact ties inside the top-k
    logits[3, 100:200] = 2.0  # a row where ties straddle the k-th value
    for k, p in [(50, 0.9), (10, 0.5), (300, 0.95), (1, 0.9)]:
        kept = TopK(k)(torch.empty(16, 0, dtype=torch.long), logits)
        got = TopP(p)(torch.empty(16, 0, dtype=torch.long), kept)
        torch.testing.assert_close(got, _full_sort_top_p(kept, p))
