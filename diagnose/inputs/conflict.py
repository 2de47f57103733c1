"""Conflict between centers: claim-level evidence and a 0..1 score.

Near-copies (word-sequence similarity >= ``duplicate_ratio``) are aligned and
the spans that differ inside their claims are quoted (``value_mismatch``).
Other cross-center pairs quote the claims each side makes (``stance`` for yes/no
questions, ``entity_ambiguity`` when the two documents are about different
subjects, ``value_mismatch`` otherwise). The score is a logistic model over a
few features (:data:`FEATURES`), calibrated on the dev sets
(:mod:`diagnose.inputs.calibration`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from diagnose.inputs.settings import InputSettings
from diagnose.text.sentences import CJK

#: Whitespace-separated words, except that each CJK character is its own word.
_WORD = re.compile(rf"[{CJK}]|[^\s{CJK}]+")
_CJK_CHAR = re.compile(rf"[{CJK}]")
_FACTUAL = re.compile(r"\d|^[A-Z]")
_EDGE_PUNCTUATION = " ,.;:()，。；：（）、"
"""Punctuation trimmed from a quoted span's ends, in Latin and CJK writing."""


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


def differing_spans(
    a: str, b: str, max_spans: int = 3, max_words: int = InputSettings.copy_span_words
) -> list[tuple[str, str]]:
    """Aligned spans that differ between near-copies ``a`` and ``b``.

    Only replacements of at most ``max_words`` words on each side
    (``InputSettings.copy_span_words``) that carry a number or a capitalised word
    (values, dates, names) are kept, in text order.
    """
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    sm = SequenceMatcher(None, [w.lower() for w in wa], [w.lower() for w in wb], autojunk=False)
    out = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace":
            continue
        sa, sb = _join(wa[i1:i2]), _join(wb[j1:j2])
        if any(_FACTUAL.search(w) for w in wa[i1:i2] + wb[j1:j2]) and i2 - i1 <= max_words and j2 - j1 <= max_words:
            pair = (sa.strip(_EDGE_PUNCTUATION), sb.strip(_EDGE_PUNCTUATION))
            if all(pair) and pair[0] != pair[1] and pair not in out:  # punctuation alone is no value
                out.append(pair)
        if len(out) >= max_spans:
            break
    return out


def _join(words: list[str]) -> str:
    out = ""
    for w in words:
        glue = "" if not out or _CJK_CHAR.match(w) or _CJK_CHAR.match(out[-1]) else " "
        out += glue + w
    return out


def quote(ids: tuple[str, str], spans: list[tuple[str, str]]) -> str:
    """``d1: "4,411" vs d3: "10,000"`` for each span pair, joined by ``; ``."""
    a, b = ids
    return "; ".join(f'{a}: "{x}" vs {b}: "{y}"' for x, y in spans)


def copy_mismatches(
    texts: list[str], claim_spans: list[list[tuple[int, int]]], duplicate_ratio: float, live: list[bool],
    max_words: int = InputSettings.copy_span_words,
) -> list[PairEvidence]:
    """Near-copies that differ in a factual span inside one of their claims.

    claim_spans: per document, ``(start, end)`` character ranges of its claim
    sentences; live: per document, whether it takes part (not noise). An edited
    copy that changed the answer is the classic misinformation pattern; a
    changed value elsewhere in the page (a different fact) does not count."""
    out = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if not (live[i] and live[j]) or word_ratio(texts[i], texts[j]) < duplicate_ratio:
                continue
            spans = [
                (x, y) for x, y in differing_spans(texts[i], texts[j], max_spans=8, max_words=max_words)
                if _inside(texts[i], x, claim_spans[i]) or _inside(texts[j], y, claim_spans[j])
            ]
            if spans:
                out.append(PairEvidence(i, j, "value_mismatch", tuple(spans[:3])))
    return out


def _inside(text: str, span: str, ranges: list[tuple[int, int]]) -> bool:
    at = text.find(span)
    return at >= 0 and any(a <= at < b for a, b in ranges)


FEATURES: tuple[str, ...] = (
    "value_split", "stance_split", "copy_mismatch", "camp_gap", "vote_gap", "spread",
    "extra_centers", "center_gap", "read_split", "pair_split", "echo", "static_conflict", "yes_gap",
)
"""What the conflict score reads, each in 0..1:

- ``value_split``: two centers state contradicting typed values (the weaker side's claim strength);
- ``stance_split``: two camps of a yes/no question (the weaker camp's vote strength);
- ``copy_mismatch``: near-copies in different centers differ in a claimed value (an edited copy);
- ``camp_gap``: yes/no camps: mean cosine within the camps minus across them;
- ``vote_gap``: yes/no camps: how far apart the camps' mean stance votes are;
- ``spread``: 1 - the mean cosine between two non-noise documents (how far apart they argue);
- ``extra_centers``: centers beyond the first, a half each (1 for three or more);
- ``center_gap``: 1 - the cosine between the two largest centers' mean vectors (what they are about);
- ``read_split``: read tier: how far apart the documents' own answers are: a yes/no question's
  margins' range, else 1 when two centers give different answers (each center's most given: a
  page its center took in by its text, :func:`diagnose.inputs.stage._echoes_join`, reads with it;
  0 when not read);
- ``yes_gap``: read tier, yes/no questions: the widest gap between two documents' probabilities
  of yes (the sigmoid of their yes-minus-no margins; 0 otherwise);
- ``pair_split``: read tier, yes/no questions: the mean probability the generator gives to "no"
  when asked whether two documents that take a side give the same answer
  (:mod:`diagnose.inputs.compare`; 0 when not asked);
- ``echo``: a reader that decides, other questions: of the documents outside the largest
  center, the share whose text also states the largest center's value (0 otherwise);
- ``static_conflict``: a reader that decides: the static tier's own conflict probability on the
  case (the text rules' verdict as one signal beside the reader's answers; 0 otherwise).

No feature counts documents: how many documents each side has moves with how many were retrieved,
not with whether they disagree (a share of documents on the weaker side was one, and it ranked a
one-against-one pair above a two-against-one conflict).
"""


STANCE_FEATURES: frozenset[str] = frozenset({
    "stance_split", "camp_gap", "vote_gap", "extra_centers", "read_split", "pair_split",
    "yes_gap",
})
"""For a yes/no question, the features that come from the documents' stances (their camps and
what a model read of them): left out of the verdict when no model judged the stances."""


def without_stance(features: dict[str, float]) -> dict[str, float]:
    """``features`` with every :data:`STANCE_FEATURES` entry set to 0 (a new dict)."""
    return {k: 0.0 if k in STANCE_FEATURES else v for k, v in features.items()}
