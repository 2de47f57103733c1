"""Read tier, yes/no questions: does the generator judge two documents to give the same answer?

The documents that take a side (not noise, with a stance found) are ranked by
relevance; every pair of the best ``limit`` of them is put to the reader in one
prompt (:meth:`diagnose.inputs.reading.DocumentReader.compare`), which returns
``log P(yes) - log P(no)`` for "do these two passages give the same answer to the
question?". A pair's chance of "different" is ``sigmoid(-margin)``; the case's
``pair_split`` feature is the mean of those over its pairs (a mean, so that it
does not grow with the number of documents).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    import numpy as np

    from diagnose.inputs.answers import DocAnswer


class PairReader(Protocol):
    def compare(self, question: str, pairs: list[tuple[str, str]]) -> list[float | None]: ...


def sides(found: "Sequence[DocAnswer | None]", noise: "np.ndarray", relevance: "np.ndarray", limit: int) -> list[int]:
    """The documents that take a side, most relevant first, at most ``limit`` (ties: case order)."""
    taking = [i for i, a in enumerate(found) if a is not None and a.key is not None and not noise[i]]
    return sorted(taking, key=lambda i: (-float(relevance[i]), i))[:limit]


def compare_sides(
    reader: PairReader, question: str, texts: list[str], found, noise, relevance, limit: int
) -> list[float] | None:
    """The reader's same-answer margins for every pair of the documents that take a side
    (None when fewer than two do, or the reader returns no margin at all)."""
    chosen = sorted(sides(found, noise, relevance, limit))
    pairs = [(i, j) for k, i in enumerate(chosen) for j in chosen[k + 1:]]
    if not pairs:
        return None
    margins = reader.compare(question, [(texts[i], texts[j]) for i, j in pairs])
    kept = [m for m in margins if m is not None]
    return kept or None


def pair_split(margins: Sequence[float]) -> float:
    """Mean chance of "different answers", ``sigmoid(-margin)``, over the pairs (0 with none)."""
    if not margins:
        return 0.0
    return sum(1.0 / (1.0 + math.exp(max(min(m, 50.0), -50.0))) for m in margins) / len(margins)
