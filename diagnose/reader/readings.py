"""What a reader returns per document, and the yes/no margin read from first-token log-probabilities.

Shared by every reader: the sampled model's (:mod:`diagnose.inputs.reading`) and the
reference reader (:mod:`diagnose.reader.structured`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["DocumentReading", "NO_VARIANTS", "ReadingStats", "YES_VARIANTS", "margin_from_logprobs"]

YES_VARIANTS: tuple[str, ...] = ("Yes", "yes", " Yes", " yes", "YES")
NO_VARIANTS: tuple[str, ...] = ("No", "no", " No", " no", "NO")


@dataclass(frozen=True)
class DocumentReading:
    answer: str
    """The model's short answer from this document alone (stripped, first line, <= 200 chars)."""
    yes_margin: float | None
    """Yes/no questions: log P(yes) - log P(no) at the first answer position; else None."""
    prompt_tokens: int
    about: str | None = None
    """A reader that asks (:mod:`diagnose.reader`): what the document says it is about."""
    date: str | None = None
    """A reader that asks: the date the document gives for itself, as the reader wrote it."""
    superseded: bool = False
    """A reader that asks: the document says of itself that it is archived or replaced."""


@dataclass
class ReadingStats:
    """What a reader's reading cost, summed over its calls."""

    documents: int = 0
    """Documents the model actually read (empty ones are not counted)."""
    prefill_s: float = 0.0
    decode_s: float = 0.0
    prompt_tokens: int = 0
    """Prompt tokens of every call (shared heads included)."""
    evaluated_tokens: int = 0
    """Prompt tokens actually evaluated (the rest came from a key/value cache); 0 when not known."""
    generated_tokens: int = 0


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def margin_from_logprobs(top: dict[str, float]) -> float | None:
    """The yes-no margin from first-token logprobs (a server's top ones: a variant missing
    from them counts as the lowest returned minus 1); None when neither is there."""
    finite = [v for v in top.values() if math.isfinite(v)]
    if not finite:
        return None
    yes = [top[t] for t in YES_VARIANTS if t in top and math.isfinite(top[t])]
    no = [top[t] for t in NO_VARIANTS if t in top and math.isfinite(top[t])]
    if not yes and not no:
        return None
    floor = min(finite) - 1.0
    return _logsumexp(yes or [floor]) - _logsumexp(no or [floor])
