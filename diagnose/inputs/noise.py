"""Noise: passages that are off-topic or unusable as evidence.

Text features are plain floats per document; :func:`noise_mask` combines them
with the question relevance (cosine, shape ``(n,)``) under settings thresholds.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from diagnose.inputs import _lexicon as lex
from diagnose.inputs.settings import InputSettings

_TOKEN = re.compile(r"\S+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
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

    relevance: ``(n,)`` float32 cosine of each document to the question.
    answered: ``(n,)`` bool, whether an answer span was extracted.
    isolation: ``(n,)`` float32, each document's highest cosine to another
    document of the case (None: not used).
    corroborated: ``(n,)`` bool, whether another document states the same
    answer (None: none is).
    Returns ``(n,)`` bool. A document is noise when it is unusable, when its
    relevance is below ``noise_relevance`` and no other document corroborates
    its answer (the tail of a page - categories, navigation - embeds far from
    the question yet still states the answer the page's head states), or when it has no answer and is
    boilerplate, isolated (unlike every other document: below
    ``isolated_similarity``) without being clearly about the question (below
    ``strong_relevance``), weakly relevant (below ``weak_relevance``)
    without a close neighbour (below ``attach_similarity``), or less relevant
    than every answered document (by more than ``below_answers``): the pages
    that state an answer bound how far from the question a page on it lies.
    """
    relevance = np.asarray(relevance, dtype=np.float32)
    answered = np.asarray(answered, dtype=bool)
    if relevance.shape != answered.shape or relevance.shape[0] != len(features):
        raise ValueError("relevance, answered and features must have one entry per document")
    n = relevance.shape[0]
    known = isolation is not None and n >= 2
    near = np.asarray(isolation, np.float32) if known else np.zeros(n, np.float32)
    backed = np.zeros(n, bool) if corroborated is None else np.asarray(corroborated, bool)
    floor = float(relevance[answered].min()) - settings.below_answers if answered.any() else -np.inf
    out = np.zeros(n, dtype=bool)
    for i, f in enumerate(features):
        if unusable(f, settings) or (relevance[i] < settings.noise_relevance and not backed[i]):
            out[i] = True
        elif not answered[i] and (
            f.boilerplate > settings.boilerplate_share
            or (known and near[i] < settings.isolated_similarity and relevance[i] < settings.strong_relevance)
            or (relevance[i] < settings.weak_relevance and near[i] < settings.attach_similarity)
            or relevance[i] < floor
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


def cjk_share(text: str) -> float:
    """Share of the non-space characters of ``text`` that are CJK."""
    chars = [c for c in text if not c.isspace()]
    return sum(1 for c in chars if _CJK.match(c)) / len(chars) if chars else 0.0


def lexical_relevance(question: str, text: str) -> float:
    """Share 0..1 of the question's CJK content grams (character bigrams, or a
    lone character between function characters) that occur in ``text``."""
    grams = lex.cjk_grams(question)
    return sum(1 for g in grams if g in text) / len(grams) if grams else 0.0


def question_relevance(question: str, texts: list[str], cosine: np.ndarray, cjk_min: float = 0.3) -> np.ndarray:
    """Relevance per document, ``(n,)`` float32.

    The embedding cosine, except when the question is CJK (at least ``cjk_min``
    of its characters): the embedder is English-only and puts every CJK text at
    a similar middling cosine, so a CJK document is scored by
    :func:`lexical_relevance` instead (non-CJK documents keep their cosine)."""
    out = np.asarray(cosine, dtype=np.float32).copy()
    if cjk_share(question) < cjk_min or not lex.cjk_grams(question):
        return out
    for i, text in enumerate(texts):
        if cjk_share(text) >= cjk_min:
            out[i] = lexical_relevance(question, text)
    return out
