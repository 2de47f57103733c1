"""Gravity centers: groups of documents that pull toward one answer.

Pure functions over ``(n, d)`` float32 L2-normalised embeddings, per-doc
answer keys and cannot-link pairs (documents whose claims contradict). Each
center ends up with at most one answer key; documents without an answer join
by embedding neighbourhood. Output order is deterministic:
centers by descending mass, then by their first document's index.
"""

from __future__ import annotations

import numpy as np

try:
    import faiss
except ImportError as exc:  # neither build installed: say which extra brings one
    raise ImportError(
        "faiss is not installed: pip install 'rag-diagnose[cpu]' (faiss-cpu) or 'rag-diagnose[gpu]' (faiss-gpu-cu12)"
    ) from exc


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


def group_documents(
    emb: np.ndarray,
    keys: list[str | None],
    noise: np.ndarray,
    cannot_link: set[tuple[int, int]],
    attach_similarity: float,
    center_similarity: float,
    must_link: set[tuple[int, int]] = frozenset(),
) -> list[int | None]:
    """Center index per document (None for noise): constrained agglomeration.

    emb: ``(n, d)`` float32 unit rows; keys: the answer key per document or None;
    noise: ``(n,)`` bool; cannot_link: pairs ``(i, j)``, ``i < j``, whose claims
    contradict; must_link: pairs that state one answer without a key to say so
    (the same name). Documents with one key form one group, so do must-link
    pairs that no cannot-link pair keeps apart. Then pairs merge in
    order of descending cosine: a keyless document joins a group at
    ``attach_similarity``, two keyless groups at ``center_similarity``; two
    groups with different keys never merge, nor two groups holding a
    cannot-link pair. Center indices are 0.. by descending size, then by first
    document.
    """
    n = emb.shape[0]
    live = [i for i in range(n) if not noise[i]]
    group = {i: i for i in live}
    members = {i: {i} for i in live}
    key_of: dict[int, str | None] = {i: keys[i] for i in live}
    by_key: dict[str, int] = {}
    for i in live:
        k = keys[i]
        if k is not None and k in by_key:
            _join(group, members, key_of, by_key[k], i)
        elif k is not None:
            by_key[k] = i
    blocked = {(min(a, b), max(a, b)) for a, b in cannot_link}
    for a, b in sorted(must_link):
        ga, gb = group.get(a), group.get(b)
        if ga is None or gb is None or ga == gb or None not in (key_of[ga], key_of[gb]) and key_of[ga] != key_of[gb]:
            continue
        if not any((min(x, y), max(x, y)) in blocked for x in members[ga] for y in members[gb]):
            _join(group, members, key_of, ga, gb)
    # Only pairs similar enough to merge at all: the faiss range search, below the lower threshold.
    found = similarity_pairs(emb[live], min(attach_similarity, center_similarity)) if live else []
    pairs = sorted(((cos, live[a], live[b]) for a, b, cos in found), key=lambda p: (-p[0], p[1], p[2]))
    for cos, i, j in pairs:
        gi, gj = group[i], group[j]
        if gi == gj:
            continue
        ki, kj = key_of[gi], key_of[gj]
        if ki is not None and kj is not None:
            continue
        if cos < (attach_similarity if (ki is None) != (kj is None) else center_similarity):
            continue
        if any((min(a, b), max(a, b)) in blocked for a in members[gi] for b in members[gj]):
            continue
        _join(group, members, key_of, gi, gj)
    label: list[object] = [group[i] if i in group else None for i in range(n)]
    return renumber(label)


def keep_one_lone(assignment: list[int | None], lone: list[bool], strength: list[float]) -> list[int | None]:
    """At most one center resting on a document alone whose answer nothing backs.

    lone: per document, whether its answer is unbacked (none found, or a name no other
    document gives). A center of one such document is the weakest evidence of an answer
    (headings, menus and sources are capitalised too); of those centers only the one
    whose document answers most strongly stays, the others' documents become noise.
    """
    members: dict[int, list[int]] = {}
    for i, a in enumerate(assignment):
        if a is not None:
            members.setdefault(a, []).append(i)
    alone = [m[0] for m in members.values() if len(m) == 1 and lone[m[0]]]
    if len(alone) < 2:
        return list(assignment)
    keep = max(alone, key=lambda i: (float(strength[i]), -i))
    label: list[object] = [None if i in alone and i != keep else a for i, a in enumerate(assignment)]
    return renumber(label)


def without_answerless(assignment: list[int | None], answered: list[bool]) -> list[int | None]:
    """Centers none of whose documents answers (``answered``, per document) made noise, unless no
    document answers at all (then the embeddings' centers stand). A document without an answer
    still joins an answer's center when the agglomeration put it there (a page the reader
    misread); on its own, or with other such pages, it pulls toward no answer."""
    kept = {a for a, ok in zip(assignment, answered) if a is not None and ok}
    if not kept:
        return list(assignment)
    return renumber([a if a in kept else None for a in assignment])


def members(assignment: list[int | None]) -> list[list[int]]:
    """The documents of each center, by center index (noise in none)."""
    count = 1 + max((a for a in assignment if a is not None), default=-1)
    return [[i for i, a in enumerate(assignment) if a == k] for k in range(count)]


def _join(group: dict[int, int], members: dict[int, set[int]], key_of: dict, a: int, b: int) -> None:
    """Merge group ``b`` into group ``a`` (roots), keeping whichever key is set."""
    a, b = group[a], group[b]
    if a == b:
        return
    for m in members[b]:
        group[m] = a
    members[a] |= members.pop(b)
    key_of[a] = key_of[a] if key_of[a] is not None else key_of[b]
    key_of.pop(b, None)


def renumber(label: list[object]) -> list[int | None]:
    """Center indices 0.. for any labels, by descending size, then by first document (None: noise)."""
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
