"""Thresholds of the input stage (a group of :class:`diagnose.settings.Settings`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputSettings:
    noise_relevance: float = 0.1
    """A document whose cosine similarity to the question is below this is noise."""
    center_similarity: float = 0.75
    """Documents at least this similar (cosine) may join the same center."""
    seed: int = 0
    """Seed for any randomised step (k-means, projections)."""
    attach_similarity: float = 0.5
    """A document with no answer joins the most similar answered document's center at or above this."""
    weak_relevance: float = 0.3
    """An unanswered document below this relevance, with no neighbour at ``attach_similarity``, is noise."""
    strong_relevance: float = 0.5
    """A document at least this similar to the question is never noise for being isolated."""
    isolated_similarity: float = 0.45
    """An unanswered document whose highest cosine to any other document is below this is noise."""
    numeric_share: float = 0.45
    """A document whose tokens are more than this share numbers is a number dump."""
    garbled_share: float = 0.15
    """A document with more than this share of unreadable characters is garbled."""
    boilerplate_share: float = 0.2
    """A document with more than this share of site-chrome words is boilerplate."""
    min_chars: int = 20
    """A document shorter than this (stripped) is empty."""
    duplicate_ratio: float = 0.6
    """Word-sequence similarity (0..1) above which two documents are near-copies."""
    below_answers: float = 0.0
    """An unanswered document less relevant than every answered one by more than this is noise."""
    weak_answer: float = 1.1
    """An answer scoring below this that no other document states counts as no answer for noise."""
    conflict_threshold: float = 0.5
    """``conflict.detected`` is ``conflict.score >= conflict_threshold``."""
    long_context_tokens: int = 2000
    """A prompt at least this long can lose its middle ("lost in the middle")."""
