"""Conflict between centers: claim-level evidence and a 0..1 score.

Near-copies (word-sequence similarity >= ``duplicate_ratio``) in different
centers are aligned and the spans that differ are quoted (``value_mismatch``).
Other cross-center pairs quote the answers each supports (``entity_ambiguity``
when the documents are about differently qualified subjects or unlike each
other, ``stance`` otherwise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
#: Whitespace-separated words, except that each CJK character is its own word.
_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
_FACTUAL = re.compile(r"\d|^[A-Z]")


@dataclass(frozen=True)
class PairEvidence:
    a: int
    b: int
    kind: str
    spans: tuple[tuple[str, str], ...]
    """Differing spans (value_mismatch) or the two answers, quoted from a and b."""


def word_ratio(a: str, b: str) -> float:
    """Similarity 0..1 of the two texts as word sequences."""
    wa, wb = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    if not wa or not wb:
        return 0.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def differing_spans(a: str, b: str, max_spans: int = 3) -> list[tuple[str, str]]:
    """Aligned spans that differ between near-copies ``a`` and ``b``.

    Only replacements that carry a number or a capitalised word (values,
    dates, names) are kept, in text order.
    """
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    sm = SequenceMatcher(None, [w.lower() for w in wa], [w.lower() for w in wb], autojunk=False)
    out = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace":
            continue
        sa, sb = _join(wa[i1:i2]), _join(wb[j1:j2])
        if any(_FACTUAL.search(w) for w in wa[i1:i2] + wb[j1:j2]) and i2 - i1 <= 8 and j2 - j1 <= 8:
            pair = (sa.strip(" ,.;:()"), sb.strip(" ,.;:()"))
            if pair[0] != pair[1] and pair not in out:
                out.append(pair)
        if len(out) >= max_spans:
            break
    return out


def _join(words: list[str]) -> str:
    out = ""
    for w in words:
        glue = "" if not out or re.match(rf"[{_CJK}]", w) or re.search(rf"[{_CJK}]$", out) else " "
        out += glue + w
    return out


def quote(ids: tuple[str, str], spans: list[tuple[str, str]]) -> str:
    """``d1: "4,411" vs d3: "10,000"`` for each span pair, joined by ``; ``."""
    a, b = ids
    return "; ".join(f'{a}: "{x}" vs {b}: "{y}"' for x, y in spans)


def pair_evidence(
    texts: list[str],
    emb: np.ndarray,
    assignment: list[int | None],
    answers: list[str | None],
    duplicate_ratio: float,
    center_similarity: float,
) -> list[PairEvidence]:
    """One evidence pair per pair of centers (the most similar cross pair), by center order.

    emb: ``(n, d)`` float32 unit rows; assignment: center per doc or None.
    """
    k = 1 + max((c for c in assignment if c is not None), default=-1)
    out = []
    for ca in range(k):
        for cb in range(ca + 1, k):
            da = [i for i, c in enumerate(assignment) if c == ca]
            db = [i for i, c in enumerate(assignment) if c == cb]
            best = None
            for i in da:
                for j in db:
                    r = word_ratio(texts[i], texts[j])
                    cand = (r, float(emb[i] @ emb[j]), -min(i, j), min(i, j), max(i, j))
                    best = cand if best is None or cand[:3] > best[:3] else best
            if best is None:
                continue
            ratio, cos, _, i, j = best
            spans = differing_spans(texts[i], texts[j]) if ratio >= duplicate_ratio else []
            if spans:
                out.append(PairEvidence(i, j, "value_mismatch", tuple(spans)))
            else:
                kind = "entity_ambiguity" if cos < center_similarity else "stance"
                pair = (answers[i] or "", answers[j] or "")
                out.append(PairEvidence(i, j, kind, (pair,) if any(pair) else ()))
    return out


def conflict_score(
    center_sizes: list[int], answered: list[bool], mismatches: int, n_docs: int, confirming: int
) -> float:
    """Calibrated 0..1 belief that the documents support two or more answers.

    center_sizes: documents per center; answered: per center, whether it
    carries an extracted answer; mismatches: value_mismatch pairs found;
    n_docs: all documents, noise included; confirming: documents that state
    the single center's answer (used when there is at most one center).

    Tiers, from strong to weak evidence:
    - two or more answered centers: 0.7, plus 0.1 each for a quoted value
      mismatch, a third answered center, and corroboration (the share of
      answered documents that another document agrees with; lone, unconfirmed
      answers are where extraction errors hide);
    - two or more centers without two answers: 0.45 rising to 0.6 with the
      number of centers (apart by similarity only);
    - one center (or none): consensus only as far as documents confirm it;
      each document that does not state the answer leaves room for a missed
      one: ``0.6 * (1 - exp(-unconfirmed / 3))``.
    """
    k = len(center_sizes)
    with_answer = [s for s, a in zip(center_sizes, answered) if a]
    if len(with_answer) >= 2:
        docs = sum(with_answer)
        corroborated = (docs - len(with_answer)) / docs if docs else 0.0
        score = 0.7 + 0.1 * min(mismatches, 1) + 0.1 * (len(with_answer) >= 3) + 0.1 * corroborated
    elif k >= 2:
        score = 0.45 + 0.05 * min(k - 2, 3) + 0.05 * min(mismatches, 1)
    else:
        unconfirmed = max(n_docs - confirming, 0)
        score = 0.6 * (1.0 - float(np.exp(-unconfirmed / 3.0)))
    return float(np.clip(score, 0.0, 1.0))
