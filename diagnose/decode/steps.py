"""What the decoding engine records at each generated position of each sample."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["StepRecord", "entropy_nats"]


@dataclass(frozen=True)
class StepRecord:
    """What the decoding engine records at one generated position of one sample."""

    token: int
    """The sampled token id."""
    raw_logprob: float
    """log p(token) under the raw distribution (temperature 1, no penalty, no truncation)."""
    entropy: float
    """Entropy in nats of the processed distribution the token was drawn from."""
    top2_tokens: tuple[int, int]
    """The two most likely token ids of the raw distribution, most likely first."""
    top2_probs: tuple[float, float]
    """Their raw probabilities, in the same order."""
    raw_entropy: float = float("nan")
    """Entropy in nats of the raw distribution at this position (NaN when unknown)."""
    temperature_last_differs: bool = False
    """Whether applying temperature last (llama.cpp, Ollama) would keep a different
    candidate set than this step's order (temperature before top-k/top-p)."""


def entropy_nats(logits: Tensor) -> Tensor:
    """Shannon entropy in nats of ``softmax(logits)`` over the last axis.

    ``logits`` is ``[..., V]``; the result is ``[...]`` in float32. ``-inf`` entries
    (removed tokens) have probability 0 and contribute 0 (0 * log 0 = 0), so this
    works on processed logits as well as raw ones; which one it reads is the caller's.
    """
    logp = torch.log_softmax(logits.to(torch.float32), dim=-1)
    p = logp.exp()
    terms = torch.where(p > 0, p * logp, torch.zeros_like(p))
    return -terms.sum(dim=-1)
