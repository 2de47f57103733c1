"""Meaning clusters of a run's samples (feeds ``semantic_entropy``).

Pure: takes the texts and their embeddings (computed at the edge by the embedder)
and returns one cluster id per sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from diagnose.sampling.sample_answers import SampleAnswer, same_answer
from diagnose.sampling.settings import SamplingSettings
from diagnose.text.normalise import normalise_text

__all__ = ["answer_clusters", "meaning_clusters", "split_clusters"]


def meaning_clusters(
    texts: Sequence[str], embeddings: np.ndarray, threshold: float = SamplingSettings.meaning_similarity
) -> list[int]:
    """Group samples by meaning; returns one cluster id per text.

    ``embeddings`` is ``(n, d)`` float32, one L2-normalised row per text (rows are
    renormalised defensively; a zero row links to nothing by similarity).
    Rules, single-link (connected components):

    * texts whose normalised forms (:func:`diagnose.text.values.normalise_text`) are equal share a cluster;
    * two non-empty texts whose cosine similarity is ``>= threshold``
      (``SamplingSettings.meaning_similarity``) share a cluster, and so, transitively,
      do their neighbours;
    * texts that normalise to the empty string form one cluster of their own and
      never join another by similarity.

    Cluster ids are 0, 1, 2, ... in order of each cluster's first sample, so the
    result does not depend on anything but the inputs.
    """
    n = len(texts)
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(
            f"embeddings must be (n, d) with n = {n} texts, got shape {vectors.shape}"
        )
    if n == 0:
        return []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)

    keys = [normalise_text(t) for t in texts]
    first_with_key: dict[str, int] = {}
    rows = [first_with_key.setdefault(key, i) for i, key in enumerate(keys)]
    cols = list(range(n))

    linkable = np.array([i for i, key in enumerate(keys) if key and norms[i, 0] > 0], dtype=np.int64)
    if linkable.size > 1:
        sub = vectors[linkable]
        near_a, near_b = np.nonzero(np.triu((sub @ sub.T) >= np.float32(threshold), k=1))
        rows.extend(linkable[near_a].tolist())
        cols.extend(linkable[near_b].tolist())

    graph = coo_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    numbering: dict[int, int] = {}
    return [numbering.setdefault(int(label), len(numbering)) for label in labels]


def answer_clusters(
    texts: Sequence[str], embeddings: np.ndarray, answers: Sequence[SampleAnswer],
    threshold: float = SamplingSettings.meaning_similarity,
) -> list[int]:
    """Meaning clusters by what each sample answers (:mod:`diagnose.sampling.sample_answers`).

    Samples with an answer share a cluster exactly when their answers say the same
    (:func:`~diagnose.sampling.sample_answers.same_answer`, transitively); samples
    without one (free text, or an answer to something else) are grouped among
    themselves by :func:`meaning_clusters` and never join an answered sample.
    Cluster ids are 0, 1, 2, ... in order of each cluster's first sample.
    """
    n = len(texts)
    if len(answers) != n:
        raise ValueError("need one answer per text")
    answered = [i for i, a in enumerate(answers) if a.kind == "answer"]
    rest = [i for i, a in enumerate(answers) if a.kind != "answer"]
    rows, cols = list(range(n)), list(range(n))
    for k, i in enumerate(answered):
        for j in answered[k + 1:]:
            if same_answer(answers[i], answers[j]):
                rows.append(i)
                cols.append(j)
    if rest:
        free = meaning_clusters([texts[i] for i in rest], np.asarray(embeddings)[rest], threshold)
        first: dict[int, int] = {}
        for i, label in zip(rest, free):
            rows.append(first.setdefault(label, i))
            cols.append(i)
    graph = coo_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    numbering: dict[int, int] = {}
    return [numbering.setdefault(int(label), len(numbering)) for label in labels]


def split_clusters(cluster_ids: Sequence[int], keys: Sequence[str]) -> list[int]:
    """Refine meaning clusters so that samples with different ``keys`` never share one.

    Sentence embeddings put "It opened in 1937." and "It opened in 1952." close
    together; the gravity center each sample follows (its key) tells them apart.
    Cluster numbers are reassigned in first-appearance order.
    """
    if len(cluster_ids) != len(keys):
        raise ValueError("need one key per sample")
    numbering: dict[tuple[int, str], int] = {}
    return [numbering.setdefault((c, k), len(numbering)) for c, k in zip(cluster_ids, keys)]
