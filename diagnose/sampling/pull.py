"""Which gravity center did a sampled answer follow?

The same normaliser and value matcher as the input stage
(:mod:`diagnose.text.values`): a sample follows a center when it states one of
the center's answers, as a typed value ("8848.86米" states 8,848.86 m, "2.7
million" states 2,700,000) or as normalised text. A sample credits only what it
states: when the centers have answers, a sample that states none of them follows
``"none"``, however much it resembles a center's documents (a German sentence
without a number does not follow the center whose answer is 30). Only when no
center has an answer at all (nothing stated could decide) does resemblance
decide: the sample follows the center holding the document most similar to it,
if that similarity clears ``min_similarity`` and beats the runner-up center by
``min_margin``; otherwise ``"none"``. When a sample states the answers of several
centers, the most similar of those wins.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

from diagnose.sampling.settings import SamplingSettings
from diagnose.text.compare import same_value
from diagnose.text.normalise import normalise_text
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

NONE = "none"


def _mentions(sample: str, answer: str) -> bool:
    if len(answer) < 2:
        return False
    return re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", sample) is not None


def _states(sample_text: str, sample_values: list[Value], answer: str, answer_values: list[Value]) -> bool:
    if answer_values:
        return any(same_value(a, s) for a in answer_values for s in sample_values)
    return _mentions(sample_text, normalise_text(answer))


def attribute_samples(
    texts: Sequence[str],
    sample_embeddings: np.ndarray,
    center_documents: Mapping[str, Sequence[int]],
    center_answers: Mapping[str, Sequence[str]],
    doc_embeddings: np.ndarray,
    min_similarity: float = SamplingSettings.pull_min_similarity,
    min_margin: float = SamplingSettings.pull_min_margin,
    claim_embeddings: np.ndarray | None = None,
) -> list[str]:
    """Center id (or ``"none"``) for each sample.

    sample_embeddings: (n_samples, d) float32, L2-normalised.
    doc_embeddings: (n_docs, d) float32, L2-normalised.
    claim_embeddings: (n_docs, d) float32, each document's best claim (zero rows
    for none): an answer resembles the sentence that states it more than the
    whole page, so a document's similarity is the better of the two.
    center_documents: center id -> row indices into ``doc_embeddings``.
    center_answers: center id -> answer texts (values as written, or free text).
    min_similarity, min_margin: ``SamplingSettings.pull_min_similarity`` / ``pull_min_margin``.
    """
    centers = list(center_documents)
    answers = {c: [(a, extract_values(a)) for a in center_answers.get(c, ())] for c in centers}
    answered = any(answers.values())
    similarity = (
        sample_embeddings @ doc_embeddings.T
        if len(doc_embeddings) and len(sample_embeddings)
        else np.zeros((len(texts), 0), dtype=np.float32)
    )
    if claim_embeddings is not None and similarity.size:
        similarity = np.maximum(similarity, sample_embeddings @ claim_embeddings.T)
    result: list[str] = []
    for i, text in enumerate(texts):
        sample, values = normalise_text(text), extract_values(text)
        best = {
            c: float(similarity[i, list(center_documents[c])].max()) if center_documents[c] else -1.0
            for c in centers
        }
        stated = [c for c in centers if any(_states(sample, values, a, av) for a, av in answers[c])]
        if len(stated) == 1:
            result.append(stated[0])
            continue
        if not stated and answered:
            result.append(NONE)
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
