"""Which gravity center did a sampled answer follow?

A sample follows a center when it states that center's answer (a normalised
answer span of the center appears in the normalised sample). When no answer
span decides, the sample follows the center holding the document most similar
to it, if that similarity clears ``min_similarity`` and beats the runner-up
center by ``min_margin``; otherwise it follows ``"none"``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Mapping, Sequence

import numpy as np

NONE = "none"


def normalize(text: str) -> str:
    """Casefold, strip accents and punctuation, collapse spaces, drop digit separators."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d)[,\u00a0 ](?=\d{3}\b)", "", text)
    text = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text)
    return " ".join(text.split())


def _mentions(sample: str, answer: str) -> bool:
    if len(answer) < 2:
        return False
    return re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", sample) is not None


def attribute_samples(
    texts: Sequence[str],
    sample_embeddings: np.ndarray,
    center_documents: Mapping[str, Sequence[int]],
    center_answers: Mapping[str, Sequence[str]],
    doc_embeddings: np.ndarray,
    min_similarity: float = 0.45,
    min_margin: float = 0.03,
) -> list[str]:
    """Center id (or ``"none"``) for each sample.

    sample_embeddings: (n_samples, d) float32, L2-normalised.
    doc_embeddings: (n_docs, d) float32, L2-normalised.
    center_documents: center id -> row indices into ``doc_embeddings``.
    center_answers: center id -> answer spans (any normalisation; normalised here).
    """
    centers = list(center_documents)
    answers = {c: [normalize(a) for a in center_answers.get(c, ())] for c in centers}
    similarity = (
        sample_embeddings @ doc_embeddings.T
        if len(doc_embeddings) and len(sample_embeddings)
        else np.zeros((len(texts), 0), dtype=np.float32)
    )
    result: list[str] = []
    for i, text in enumerate(texts):
        sample = normalize(text)
        best = {
            c: float(similarity[i, list(center_documents[c])].max()) if center_documents[c] else -1.0
            for c in centers
        }
        stated = [c for c in centers if any(_mentions(sample, a) for a in answers[c])]
        if len(stated) == 1:
            result.append(stated[0])
            continue
        pool = stated or centers
        ranked = sorted(pool, key=lambda c: best[c], reverse=True)
        if not ranked or best[ranked[0]] < min_similarity:
            result.append(NONE)
            continue
        if not stated and len(ranked) > 1 and best[ranked[0]] - best[ranked[1]] < min_margin:
            result.append(NONE)
            continue
        result.append(ranked[0])
    return result
