"""Noise: passages that are off-topic or unusable as evidence.

Text features are plain floats per document; :func:`noise_mask` combines them
with the question relevance (cosine, shape ``(n,)``) under settings thresholds.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from diagnose.inputs.settings import InputSettings

_TOKEN = re.compile(r"\S+")
_NUMERIC = re.compile(r"^[\W_]*[-+]?[\d.,:/%]*\d[\d.,:/%]*[\W_]*$")
BOILERPLATE = frozenset(
    """privacy policy cookie cookies terms use wikipedia disclaimers edit links talk tools sidebar
    download printable version permanent link page information cite subscribe subscribers newsletter
    login log sign javascript browser advertising ads click navigation menu search toggle contents
    retrieved archived isbn accessed copyright rights reserved trademark mobile view hide""".split()
)


@dataclass(frozen=True)
class TextFeatures:
    """Per-document text facts, each a share in 0..1 (``chars`` a count)."""

    chars: int
    numeric: float
    """Share of whitespace tokens that are numbers."""
    garbled: float
    """Share of characters that are replacement, control or private-use characters."""
    boilerplate: float
    """Share of word tokens that are site-chrome words (menus, licences, cookie notices)."""


def text_features(text: str) -> TextFeatures:
    """Measure one passage."""
    stripped = text.strip()
    tokens = _TOKEN.findall(stripped)
    numeric = sum(1 for t in tokens if _NUMERIC.match(t)) / len(tokens) if tokens else 0.0
    bad = sum(1 for c in stripped if c == "\ufffd" or unicodedata.category(c) in ("Cc", "Co", "Cs"))
    bad -= sum(1 for c in stripped if c in "\n\t\r")
    words = re.findall(r"[a-z]+", stripped.lower())
    boiler = sum(1 for w in words if w in BOILERPLATE) / len(words) if words else 0.0
    return TextFeatures(
        chars=len(stripped),
        numeric=numeric,
        garbled=max(bad, 0) / len(stripped) if stripped else 1.0,
        boilerplate=boiler,
    )


def unusable(features: TextFeatures, settings: InputSettings) -> str | None:
    """Why a passage is unusable whatever it says (empty, garbled, a number dump), else None."""
    if features.chars < settings.min_chars:
        return "empty"
    if features.garbled > settings.garbled_share:
        return "garbled"
    if features.numeric > settings.numeric_share:
        return "number dump"
    return None


def noise_mask(
    relevance: np.ndarray,
    answered: np.ndarray,
    features: list[TextFeatures],
    settings: InputSettings,
    isolation: np.ndarray | None = None,
    corroborated: np.ndarray | None = None,
) -> np.ndarray:
    """Decide noise per document.

    relevance: ``(n,)`` float32, each document's best claim score (how well
    its best sentence matches the question). answered: ``(n,)`` bool, whether
    it states an answer. isolation: ``(n,)`` float32, its highest cosine to
    another document of the case (None: not used). corroborated: ``(n,)``
    bool, whether another document states the same answer (None: none is).

    Returns ``(n,)`` bool. A document is noise when it is unusable; when no
    other document corroborates its answer and its relevance is below
    ``noise_relevance`` or below ``relative_relevance`` times the case's best
    (the documents that answer bound how far from the question a page on it
    lies); or when it answers nothing and is boilerplate, or isolated (below
    ``isolated_similarity`` to every other document) without being clearly
    about the question (below ``strong_relevance``).
    """
    relevance = np.asarray(relevance, dtype=np.float32)
    answered = np.asarray(answered, dtype=bool)
    if relevance.shape != answered.shape or relevance.shape[0] != len(features):
        raise ValueError("relevance, answered and features must have one entry per document")
    n = relevance.shape[0]
    known = isolation is not None and n >= 2
    near = np.asarray(isolation, np.float32) if known else np.ones(n, np.float32)
    backed = np.zeros(n, bool) if corroborated is None else np.asarray(corroborated, bool)
    top = float(relevance.max()) if n else 0.0
    out = np.zeros(n, dtype=bool)
    for i, f in enumerate(features):
        weak = relevance[i] < settings.noise_relevance or relevance[i] < settings.relative_relevance * top
        if unusable(f, settings) or (weak and not backed[i]):
            out[i] = True
        elif not answered[i] and (
            f.boilerplate > settings.boilerplate_share
            or (near[i] < settings.isolated_similarity and relevance[i] < settings.strong_relevance)
        ):
            out[i] = True
    return out


def isolation(emb: np.ndarray) -> np.ndarray:
    """Each row's highest cosine to another row, ``(n,)`` float32 (1.0 when n < 2).

    emb: ``(n, d)`` float32 unit rows."""
    n = emb.shape[0]
    if n < 2:
        return np.ones(n, np.float32)
    sims = (emb @ emb.T).astype(np.float32)
    np.fill_diagonal(sims, -1.0)
    return sims.max(axis=1)
