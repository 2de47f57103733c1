"""Meaning clusters of a run's samples (feeds ``semantic_entropy``).

Pure: takes the texts and their embeddings (computed at the edge by the embedder)
and returns one cluster id per sample.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

__all__ = ["meaning_clusters", "normalize_text"]

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Casefold, drop Unicode punctuation, collapse whitespace and strip.

    Two samples with the same normalised text always share a meaning cluster.
    """
    folded = text.casefold()
    kept = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return _SPACE.sub(" ", kept).strip()


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri != rj:
            self.parent[max(ri, rj)] = min(ri, rj)


def meaning_clusters(
    texts: Sequence[str], embeddings: np.ndarray, threshold: float = 0.85
) -> list[int]:
    """Group samples by meaning; returns one cluster id per text.

    ``embeddings`` is ``(n, d)`` float32, one L2-normalised row per text (rows are
    renormalised defensively; a zero row links to nothing by similarity).
    Rules, single-link (union-find):

    * texts whose :func:`normalize_text` forms are equal share a cluster;
    * two non-empty texts whose cosine similarity is ``>= threshold`` share a cluster,
      and so, transitively, do their neighbours;
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

    keys = [normalize_text(t) for t in texts]
    groups = _UnionFind(n)
    first_with_key: dict[str, int] = {}
    for i, key in enumerate(keys):
        groups.union(first_with_key.setdefault(key, i), i)

    linkable = [i for i, key in enumerate(keys) if key and norms[i, 0] > 0]
    non_empty = np.array(linkable, dtype=np.int64)
    if non_empty.size > 1:
        sub = vectors[non_empty]
        similar = (sub @ sub.T) >= np.float32(threshold)
        rows, cols = np.nonzero(np.triu(similar, k=1))
        for a, b in zip(rows.tolist(), cols.tolist()):
            groups.union(int(non_empty[a]), int(non_empty[b]))

    numbering: dict[int, int] = {}
    return [numbering.setdefault(groups.find(i), len(numbering)) for i in range(n)]


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
