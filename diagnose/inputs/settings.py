"""Thresholds of the input stage (a group of :class:`diagnose.settings.Settings`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnose.inputs.calibration import ConflictCalibration


@dataclass(frozen=True)
class InputSettings:
    noise_relevance: float = 0.35
    """A document whose best claim scores below this (cosine + weighted lexical overlap) is noise,
    unless another document corroborates its answer."""
    relative_relevance: float = 0.5
    """... and so is one below this share of the case's best claim score."""
    center_similarity: float = 0.75
    """Documents at least this similar (cosine) may join the same center."""
    seed: int = 0
    """Seed for any randomised step (k-means, projections)."""
    attach_similarity: float = 0.5
    """A document with no answer joins the most similar answered document's center at or above this."""
    strong_relevance: float = 0.8
    """A document whose best claim scores at least this is never noise for being isolated."""
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
    copy_span_words: int = 8
    """Near-copies: a replaced run of at most this many words on each side is an edited value
    (quoted as a ``value_mismatch``); a longer one is a rewrite, not an edit."""
    max_sentences: int = 8
    """Sentences kept per document (the lexically most question-like ones past this)."""
    max_sentence_chars: int = 800
    """... and characters of them: about the embedder's own window (256 word pieces), so the
    stage encodes no more text than a plain embedding of the documents would."""
    lexical_weight: float = 0.5
    """Weight of the question's content-token overlap beside the cosine when ranking sentences."""
    claims_per_document: int = 3
    """A document's best-ranked sentences that count as its claims."""
    min_claim: float = 0.2
    """A claim less relevant than this states no answer."""
    tie_margin: float = 0.05
    """A value within this relevance of a document's best one, stated by another document, wins the tie."""
    stance_vote_weight: float = 0.03
    """Yes/no camps: weight of two documents' stance votes agreeing beside their similarity."""
    camp_gap: float = 0.05
    """Yes/no camps that lean the same way stay two camps only when they are more alike
    within than across by more than this (cosine)."""
    ambiguity_similarity: float = 0.55
    """Two conflicting documents less similar (cosine) than this are about different subjects."""
    read_margin_bias: float = 0.0
    """Read tier: the generator's yes-minus-no margin on a document that says nothing, used when
    it was not measured (the stage measures it per question on a blank document)."""
    read_margin_scale: float = 2.0
    """Read tier: a margin this far from the bias weighs as much as a clear claim."""
    read_answer_similarity: float = 0.8
    """Read tier: free-text answers at least this similar (cosine) are one answer."""
    reader_entity_similarity: float = 0.3
    """Reader: two documents whose ``about`` readings are less similar than this (cosine) are about
    different things, and never share an answer key. MiniLM puts kinds of different things
    under it ("American football team" / "video game console" 0.19, "car maker" / "sports team"
    0.27) and two descriptions of one thing above it ("hiking tent" / "two-person tent" 0.72); at
    0.5 looser descriptions of one person split ramdocs-dev answers (ARI 0.48 → 0.58 at 0.3)."""
    compare_documents: int = 4
    """Read tier, yes/no questions: the generator compares every pair of this many most relevant
    documents that take a side (at most 6 pairs)."""
    conflict_calibration: ConflictCalibration = field(default_factory=ConflictCalibration.shipped)
    """The conflict verdict: logistic weights per feature (:data:`diagnose.inputs.conflict.FEATURES`)
    and the cut points of ``conflict.state``, fitted by ``scripts/calibrate-conflict`` by
    cross-validation on the three dev sets (``diagnose/inputs/conflict_calibration.json``)."""
    reader_calibration: ConflictCalibration = field(default_factory=lambda: ConflictCalibration.shipped("reference"))
    """The conflict verdict when a reader decides the answers (the reference reader or a server
    serving it): fitted on that reader's dev reports (``conflict_calibration_reference.json``)."""
