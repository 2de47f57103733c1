"""The logits pipeline: small processors with one call shape, in one fixed order.

Every processor is ``(ids: LongTensor[B, L], logits: FloatTensor[B, V]) -> FloatTensor[B, V]``;
``ids`` may instead be the running seen-token mask ``BoolTensor[B, V]`` that
:class:`SeenTokens` keeps while decoding (only the repetition penalty reads it).
It checks its one parameter in ``__init__`` (raising :class:`CaseError` that names the
case field) and never edits its input: it returns a new tensor. Removed tokens are
``-inf``. :func:`build_pipeline` is the only place that decides which processors run
and in which order; its docstring states that order.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from diagnose.case import GREEDY_EPSILON
from diagnose.errors import CaseError

__all__ = [
    "GREEDY_EPSILON",
    "LogitsProcessor",
    "Pipeline",
    "RepetitionPenalty",
    "SeenTokens",
    "Temperature",
    "TopK",
    "TopP",
    "build_pipeline",
]


class LogitsProcessor(ABC):
    """One step of the pipeline: token ids and logits in, new logits out."""

    field: ClassVar[str]
    """The case field this processor's parameter comes from (used in errors)."""

    @abstractmethod
    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        """Return new logits ``[B, V]``; ``ids`` is ``[B, L]`` (prompt + generated)."""


def _finite_number(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CaseError(field, "must be a number", value)
    if not math.isfinite(value):
        raise CaseError(field, "must be a finite number", value)
    return float(value)


class SeenTokens:
    """Which ids each row has seen (prompt + generated so far), kept up to date as rows decode.

    The repetition penalty needs that set at every step. Rebuilding it from the
    ids costs ``O(B * (P + t))`` per step for a prompt of ``P`` tokens; this mask
    is built once from the prompt and then costs ``O(B)`` per step.
    """

    def __init__(self, prompt_ids: Sequence[int], rows: int, vocab: int) -> None:
        first = torch.zeros(vocab, dtype=torch.bool)
        prompt = torch.tensor(list(prompt_ids), dtype=torch.long)
        first[prompt[(prompt >= 0) & (prompt < vocab)]] = True
        self.mask = first.repeat(rows, 1)
        """BoolTensor[B, V]: True where row ``b`` has seen id ``v``."""

    @classmethod
    def stacked(cls, prompts: Sequence[tuple[Sequence[int], Sequence[Any]]], vocab: int) -> "SeenTokens":
        """The rows of several prompts, in order: ``prompts`` pairs each prompt's ids with its rows."""
        parts = [cls(ids, len(rows), vocab) for ids, rows in prompts]
        seen = parts[0]
        if len(parts) > 1:
            seen.mask = torch.cat([part.mask for part in parts])
        return seen

    def add(self, tokens: Tensor) -> None:
        """Each row saw one more token (LongTensor[B])."""
        self.mask[torch.arange(tokens.shape[0]), tokens] = True

    def keep(self, rows: Tensor) -> None:
        """Keep only these rows (LongTensor[B']), in this order."""
        self.mask = self.mask[rows]


class RepetitionPenalty(LogitsProcessor):
    """Hugging Face repetition penalty over every id in ``ids`` (prompt + generated).

    Each distinct id is penalised once, however often it occurs: a negative logit is
    multiplied by the penalty, a non-negative one divided by it. Negative ids are
    treated as padding and ignored. 1.0 changes nothing. ``ids`` may also be a
    seen-token mask ``BoolTensor[B, V]`` (:class:`SeenTokens`).
    """

    field = "sampling.repetition_penalty"

    def __init__(self, penalty: float) -> None:
        value = _finite_number(self.field, penalty)
        if value <= 0.0:
            raise CaseError(self.field, "must be > 0; 1.0 turns it off", penalty)
        self.penalty = value

    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        batch, vocab = logits.shape
        if ids.numel() == 0:
            return logits.clone()
        if ids.dtype == torch.bool:
            seen = ids
        else:
            # One spare column collects padding (negative ids), then is dropped.
            index = torch.where(ids >= 0, ids, torch.full_like(ids, vocab)).long()
            seen = torch.zeros(batch, vocab + 1, dtype=torch.bool, device=logits.device)
            seen.scatter_(1, index, True)
            seen = seen[:, :vocab]
        # Only the seen entries change (a few thousand of B x V): rewrite those alone.
        rows, columns = seen.nonzero(as_tuple=True)
        values = logits[rows, columns]
        out = logits.clone()
        out[rows, columns] = torch.where(values < 0, values * self.penalty, values / self.penalty)
        return out


class Temperature(LogitsProcessor):
    """Divide the logits by the temperature (> ``GREEDY_EPSILON``; smaller means greedy)."""

    field = "sampling.temperatures"

    def __init__(self, temperature: float) -> None:
        value = _finite_number(self.field, temperature)
        if value <= GREEDY_EPSILON:
            raise CaseError(
                self.field,
                f"must be > {GREEDY_EPSILON} to sample; lower values mean greedy decoding",
                temperature,
            )
        self.temperature = value

    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        return logits / self.temperature


class TopK(LogitsProcessor):
    """Keep the ``k`` highest logits per row, plus any tied with the k-th (as HF does).

    0 turns top-k off; a ``k`` larger than the vocabulary keeps everything.
    """

    field = "sampling.top_k"

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int):
            raise CaseError(self.field, "must be an integer; 0 turns top-k off", k)
        if k < 0:
            raise CaseError(self.field, "must be >= 0; 0 turns top-k off", k)
        self.k = k

    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        k = min(self.k, logits.shape[-1])
        if k == 0:
            return logits.clone()
        kth = torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))


class TopP(LogitsProcessor):
    """Nucleus filter with Hugging Face semantics.

    Reads ``softmax(logits)`` of the current (already top-k filtered, so renormalised)
    logits. A token is kept iff the probability mass of the candidates ranked strictly
    before it (more likely; ties in index order) is ``< p``, so the token that crosses
    ``p`` is kept and at least one token always survives. 1.0 keeps everything.
    """

    field = "sampling.top_p"

    def __init__(self, p: float) -> None:
        value = _finite_number(self.field, p)
        if not 0.0 < value <= 1.0:
            raise CaseError(self.field, "must be in (0, 1]; 1.0 turns top-p off", p)
        self.p = value

    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        if self.p >= 1.0:
            return logits.clone()
        probs = torch.softmax(logits.float(), dim=-1)
        sorted_probs, order = _ranked(probs, logits)
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        remove_sorted = before >= self.p
        remove_sorted[..., 0] = False
        # Tokens outside the ranked candidates are -inf already: removing them changes nothing.
        remove = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, remove_sorted)
        return logits.masked_fill(remove, float("-inf"))


def _ranked(probs: Tensor, logits: Tensor) -> tuple[Tensor, Tensor]:
    """Candidates by descending probability, ties in index order: (probs, ids), each [B, M].

    After top-k only a few entries per row are finite, so ranking those few (not the
    whole vocabulary) gives the same order at a fraction of the cost.
    """
    finite = int(torch.isfinite(logits).sum(dim=-1).max())
    if finite * 4 >= logits.shape[-1]:
        return torch.sort(probs, dim=-1, descending=True, stable=True)
    _, ids = torch.topk(probs, max(finite, 1), dim=-1, sorted=False)
    ids, _ = torch.sort(ids, dim=-1)  # index order first, so the stable sort breaks ties by index
    values, by_value = torch.sort(probs.gather(-1, ids), dim=-1, descending=True, stable=True)
    return values, ids.gather(-1, by_value)


@dataclass(frozen=True)
class Pipeline:
    """The processors of one sampling setting, in order, and whether it is greedy."""

    processors: tuple[LogitsProcessor, ...]
    greedy: bool

    def __call__(self, ids: Tensor, logits: Tensor) -> Tensor:
        """Processed logits ``[B, V]`` in float32, ``-inf`` for removed tokens.

        Greedy: every entry is ``-inf`` except each row's argmax after the penalties,
        which keeps its (penalised) logit, so the processed distribution is one-hot.
        """
        return self.process(ids, logits)[0]

    @property
    def order_matters(self) -> bool:
        """Whether applying the temperature last (llama.cpp, Ollama) can keep other tokens.

        Only top-p reads the temperature: top-k keeps the same tokens whatever
        monotone scale the logits have.
        """
        kinds = {type(p) for p in self.processors}
        return Temperature in kinds and TopP in kinds

    def process(self, ids: Tensor, logits: Tensor, compare_temperature_last: bool = False) -> tuple[Tensor, Tensor | None]:
        """Processed logits, and, when asked and :attr:`order_matters`, the kept tokens had the
        temperature come last (``BoolTensor[B, V]``; otherwise None).

        Temperature last keeps top-k's tokens (the same set) and runs top-p on their
        untempered logits: the top-k survivors multiplied back by the temperature.
        """
        out = logits.to(torch.float32)
        if out is logits:
            out = logits.clone()
        other = None
        for processor in self.processors:
            if isinstance(processor, TopP) and compare_temperature_last and self.order_matters:
                temperature = next(p for p in self.processors if isinstance(p, Temperature)).temperature
                other = torch.isfinite(processor(ids, out * temperature))
            out = processor(ids, out)
        if self.greedy:
            top = out.argmax(dim=-1, keepdim=True)
            out = torch.full_like(out, float("-inf")).scatter(-1, top, out.gather(-1, top))
        return out, other

    def sample(self, processed: Tensor, generators: Sequence[torch.Generator]) -> Tensor:
        """Draw one token per row of ``processed`` ``[B, V]``; returns ``LongTensor[B]``.

        Row ``i`` draws by inverse CDF with one uniform from ``generators[i]``, so its
        token depends only on its own logits and its own generator, never on the
        other rows. Greedy pipelines take the argmax and leave the generators alone.
        Each generator must live on ``processed``'s device.
        """
        if processed.dim() != 2:
            raise ValueError(f"processed logits must be [B, V], got shape {tuple(processed.shape)}")
        if self.greedy:
            return processed.argmax(dim=-1)
        if len(generators) != processed.shape[0]:
            raise ValueError(
                f"need one generator per row: {processed.shape[0]} rows, {len(generators)} generators"
            )
        # Inverse-CDF sampling: one uniform per row from that row's own generator, then
        # one batched cumulative sum and search (multinomial costs a full pass per row).
        uniforms = torch.cat(
            [torch.rand(1, generator=g, dtype=torch.float64, device=processed.device) for g in generators]
        )
        probs = torch.softmax(processed.to(torch.float64), dim=-1)
        cdf = torch.cumsum(probs, dim=-1)
        targets = (uniforms * cdf[:, -1]).unsqueeze(-1)
        # right=True skips zero-probability tokens: their cdf equals their predecessor's.
        draws = torch.searchsorted(cdf, targets, right=True).squeeze(-1)
        return draws.clamp_(max=processed.shape[-1] - 1).to(torch.long)


def build_pipeline(
    temperature: float, top_k: int, top_p: float, repetition_penalty: float
) -> Pipeline:
    """Build the pipeline for one sampling setting. The order is fixed:

    1. upcast the logits to float32 (in :meth:`Pipeline.__call__`);
    2. :class:`RepetitionPenalty` (HF: every prompt + generated id, once);
    3. :class:`Temperature`;
    4. :class:`TopK` (ties with the k-th kept);
    5. :class:`TopP` (on the top-k survivors, renormalised);
    6. sample: :meth:`Pipeline.sample`, one inverse-CDF draw per row with its own
       generator, or argmax when greedy.

    Settings that change nothing add no processor: penalty 1.0, temperature 1.0,
    top_k 0, top_p 1.0. A temperature at or below :data:`GREEDY_EPSILON` means greedy:
    only the penalty runs (it can change the argmax; temperature, top-k and top-p
    cannot). Every parameter is validated either way; errors name the case field.
    """
    temp = _finite_number(Temperature.field, temperature)
    if temp < 0.0:
        raise CaseError(Temperature.field, "must be >= 0; 0 means greedy decoding", temperature)
    greedy = temp <= GREEDY_EPSILON
    penalty = RepetitionPenalty(repetition_penalty)
    warpers: list[LogitsProcessor] = []
    if not greedy and temp != 1.0:
        warpers.append(Temperature(temp))
    top_k_proc, top_p_proc = TopK(top_k), TopP(top_p)
    if top_k_proc.k > 0:
        warpers.append(top_k_proc)
    if top_p_proc.p < 1.0:
        warpers.append(top_p_proc)
    processors: list[LogitsProcessor] = [penalty] if penalty.penalty != 1.0 else []
    if not greedy:
        processors.extend(warpers)
    return Pipeline(processors=tuple(processors), greedy=greedy)
