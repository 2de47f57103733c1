"""Camps of a yes/no question: which documents argue the same conclusion.

A document's own stance (the polarity vote of its claims) is noisy: passages
that argue "no" often say what *would* be true ("only officers can arrest").
Documents that argue one conclusion also share their reasons, so they embed
close together. The camps are the split of the documents into at most two
groups that best agrees with both: within a group, documents are similar
(cosine above the case's mean) and vote alike. Pure: float32 arrays in, labels out.
"""

from __future__ import annotations

import itertools

import numpy as np

MAX_EXACT = 12
"""Up to this many documents every split is tried; above it, a greedy pass from the vote split."""


def camps(emb: np.ndarray, votes: np.ndarray, vote_weight: float, min_gap: float = 0.0) -> np.ndarray:
    """``(n,)`` int labels 0/1: the two-way split maximising within-group affinity.

    emb: ``(n, d)`` float32 unit rows; votes: ``(n,)`` float32 signed stance
    votes (positive: yes). Affinity of a pair: its cosine minus the mean cosine
    of the case, plus ``vote_weight`` times the product of the squashed votes.
    Label 1 marks the group with the lower vote sum (the "no" side); all zeros
    when one group is best, or when both groups lean the same way and are no
    more than ``min_gap`` more alike within than across (cosine): two groups
    that say the same thing in two styles are one camp."""
    n = emb.shape[0]
    if n < 2:
        return np.zeros(n, np.int64)
    sims = (emb @ emb.T).astype(np.float64)
    off = ~np.eye(n, dtype=bool)
    affinity = sims - sims[off].mean()
    tv = np.tanh(np.asarray(votes, np.float64))
    affinity = affinity + vote_weight * np.outer(tv, tv)
    np.fill_diagonal(affinity, 0.0)
    best = _best_split(affinity)
    if best.any() and tv[best == 1].sum() > tv[best == 0].sum():
        best = 1 - best
    if best.any() and (tv[best == 0].sum() < 0 or tv[best == 1].sum() >= 0) and _gap(sims, best) <= min_gap:
        return np.zeros(n, np.int64)
    return best


def _gap(sims: np.ndarray, labels: np.ndarray) -> float:
    """Mean cosine within the two groups minus across them."""
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(labels), dtype=bool)
    within, across = sims[same & off], sims[~same]
    return float(within.mean() - across.mean()) if within.size and across.size else 0.0


def _within(affinity: np.ndarray, labels: np.ndarray) -> float:
    same = labels[:, None] == labels[None, :]
    return float(affinity[same].sum())


def _best_split(affinity: np.ndarray) -> np.ndarray:
    n = affinity.shape[0]
    if n <= MAX_EXACT:
        best, score = np.zeros(n, np.int64), _within(affinity, np.zeros(n, np.int64))
        for bits in itertools.product((0, 1), repeat=n - 1):
            labels = np.array((0,) + bits, np.int64)
            s = _within(affinity, labels)
            if s > score + 1e-12:
                best, score = labels, s
        return best
    labels = np.zeros(n, np.int64)
    improved = True
    while improved:
        improved = False
        for i in range(n):
            flipped = labels.copy()
            flipped[i] ^= 1
            if _within(affinity, flipped) > _within(affinity, labels) + 1e-12:
                labels, improved = flipped, True
    return labels
