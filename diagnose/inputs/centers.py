"""Gravity centers: groups of documents that pull toward one answer.

Pure functions over ``(n, d)`` float32 L2-normalised embeddings and per-doc
answer keys. Each center ends up with one answer key (or, for documents
without an answer, one embedding neighbourhood). Output order is deterministic:
centers by descending mass, then by their first document's index.
"""

from __future__ import annotations

import faiss
import numpy as np


def similarity_pairs(emb: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """All pairs ``(i, j, cos)`` with ``i < j`` and cosine >= threshold.

    emb: ``(n, d)`` float32 unit rows. Uses a faiss inner-product range search.
    """
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    n = emb.shape[0]
    if n < 2:
        return []
    index = faiss.IndexFlatIP(emb.shape[1])
    index.add(emb)
    lims, dist, ids = index.range_search(emb, float(threshold) - 1e-6)
    out = {}
    for i in range(n):
        for j, s in zip(ids[lims[i]:lims[i + 1]], dist[lims[i]:lims[i + 1]]):
            if i < j:
                out[(i, int(j))] = float(s)
    return sorted((i, j, s) for (i, j), s in out.items())


def components(n: int, pairs: list[tuple[int, int, float]]) -> list[int]:
    """Connected-component label per node (labels numbered by first node)."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, _ in pairs:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots: dict[int, int] = {}
    return [roots.setdefault(find(i), len(roots)) for i in range(n)]


def merge_keys(keys: list[str | None]) -> list[str | None]:
    """Map each key onto a canonical one: a key whose words all occur in a more
    frequent (or longer) key joins it ("hockey" -> "ice hockey")."""
    counts: dict[str, int] = {}
    for k in keys:
        if k:
            counts[k] = counts.get(k, 0) + 1
    order = sorted(counts, key=lambda k: (-counts[k], -len(k), k))
    canon: dict[str, str] = {}
    for k in order:
        words = set(k.split())
        target = next((c for c in canon.values() if c != k and words <= set(c.split())), None)
        target = target or next((c for c in order if c != k and words < set(c.split())), None)
        canon[k] = canon.get(target, target) if target else k
    return [canon[k] if k else None for k in keys]


def assign_centers(
    emb: np.ndarray,
    keys: list[str | None],
    noise: np.ndarray,
    attach_similarity: float,
    center_similarity: float,
) -> list[int | None]:
    """Center index per document (None for noise).

    emb: ``(n, d)`` float32 unit rows; keys: answer key per doc or None;
    noise: ``(n,)`` bool. Documents sharing a key share a center. A document
    without a key joins the center of its most similar keyed document when the
    cosine is >= ``attach_similarity``, else it becomes noise (None); when no
    document has a key, documents group by embedding components at
    ``center_similarity``. Center indices are 0.. by descending size, then
    by first document.
    """
    n = emb.shape[0]
    label: list[object] = [None] * n
    keyed = [i for i in range(n) if not noise[i] and keys[i]]
    for i in keyed:
        label[i] = ("k", keys[i])
    loose = [i for i in range(n) if not noise[i] and not keys[i]]
    rest = []
    for i in loose:
        if keyed:
            sims = emb[keyed] @ emb[i]
            best = int(np.argmax(sims))
            if sims[best] >= attach_similarity:
                label[i] = label[keyed[best]]
                continue
            continue
        rest.append(i)
    if rest:
        comp = components(len(rest), similarity_pairs(emb[rest], center_similarity))
        for i, c in zip(rest, comp):
            label[i] = ("e", c)
    return _number(label)


def _number(label: list[object]) -> list[int | None]:
    members: dict[object, list[int]] = {}
    for i, lab in enumerate(label):
        if lab is not None:
            members.setdefault(lab, []).append(i)
    order = sorted(members, key=lambda lab: (-len(members[lab]), members[lab][0]))
    index = {lab: k for k, lab in enumerate(order)}
    return [index[lab] if lab is not None else None for lab in label]


def masses(assignment: list[int | None], weights: np.ndarray | None = None) -> np.ndarray:
    """Share of (weighted) non-noise documents per center, shape ``(k,)``, summing to 1."""
    k = 1 + max((a for a in assignment if a is not None), default=-1)
    out = np.zeros(k, dtype=np.float64)
    for i, a in enumerate(assignment):
        if a is not None:
            out[a] += 1.0 if weights is None else max(float(weights[i]), 1e-6)
    total = out.sum()
    return out / total if total > 0 else out


def merge_agreeing_copies(
    texts: list[str],
    assignment: list[int | None],
    spans: list[str | None],
    duplicate_ratio: float,
) -> list[int | None]:
    """Join centers held apart only by answer extraction.

    Two documents in different centers that are near-copies (word-sequence
    similarity >= ``duplicate_ratio``) and each contain the other's answer span
    state the same facts: their answers differ because a different mention won
    in each, not because the texts disagree. Their centers merge. Centers are
    renumbered as in :func:`assign_centers`.
    """
    from diagnose.inputs.conflict import word_ratio

    k = 1 + max((a for a in assignment if a is not None), default=-1)
    if k < 2:
        return list(assignment)
    pairs = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = assignment[i], assignment[j]
            if a is None or b is None or a == b or not spans[i] or not spans[j]:
                continue
            if spans[i] in texts[j] and spans[j] in texts[i] and word_ratio(texts[i], texts[j]) >= duplicate_ratio:
                pairs.append((a, b, 1.0))
    if not pairs:
        return list(assignment)
    comp = components(k, pairs)
    return _number([comp[a] if a is not None else None for a in assignment])
