"""Shared-prefix batched decoding: every seed and temperature from one prefill.

Steps, in order, for each generated position:

1. the backend gives raw next-token logits for every live row (one forward pass);
2. raw log-probabilities and the raw top-2 candidates are recorded;
3. each temperature group of rows goes through its own logits pipeline
   (penalty → temperature → top-k → top-p, see ``processors.build_pipeline``);
4. each row draws its token with its own ``torch.Generator``, so a row's text
   depends only on its seed, its temperature and the prompt, never on which
   other rows share the batch;
5. rows that emit an end-of-sequence token or reach ``max_new_tokens`` leave
   the batch and stop costing work.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from diagnose.case import SamplingSpec
from diagnose.decode.backend import Backend, DecodeSession
from diagnose.decode.steps import StepRecord, entropy_nats
from diagnose.decode.processors import SeenTokens, build_pipeline

StepCallback = Callable[[int, int], None]
"""Called after each position with (position, rows still decoding)."""


@dataclass(frozen=True)
class Row:
    temperature: float
    seed: int

    @property
    def generator_seed(self) -> int:
        """A 63-bit seed derived from (seed, temperature) alone."""
        key = f"{self.seed}:{self.temperature:.6f}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") & (2**63 - 1)


@dataclass
class Trace:
    """What one row generated, with a record of every step."""

    row: Row
    tokens: list[int] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    finish_reason: str = "length"


@dataclass
class DecodeStats:
    """Where decoding time went (filled in when passed to :func:`decode_rows`)."""

    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    forward_passes: int = 0
    row_steps: int = 0
    """Sum over steps of the rows still decoding: the work actually done."""
    rows_per_pass: list[int] = field(default_factory=list)
    """Rows advanced by each forward pass after the prefill, in order."""


def rows_for(spec: SamplingSpec, seed_offset: int = 0) -> list[Row]:
    """All (temperature, seed) rows of a case, temperature-major.

    Seeds are ``seed_offset .. seed_offset + seeds - 1``: 0 by default, so a case
    always gives the same samples; a regression run can move the offset to draw
    fresh samples and see the real sampling noise.
    """
    return [Row(t, seed_offset + i) for t in spec.temperatures for i in range(spec.seeds)]


@torch.inference_mode()
def decode_rows(
    backend: Backend,
    prompt_ids: Sequence[int],
    rows: Sequence[Row],
    spec: SamplingSpec,
    on_step: StepCallback | None = None,
    stats: DecodeStats | None = None,
) -> list[Trace]:
    """Decode every row from one shared prefill of ``prompt_ids``."""
    stats = stats if stats is not None else DecodeStats()
    if not rows:
        return []
    started = time.perf_counter()
    session, logits = backend.start(prompt_ids, len(rows))
    stats.prefill_seconds += time.perf_counter() - started
    return decode_session(session, logits, [(prompt_ids, rows)], spec, backend.eos_token_ids, on_step, stats)


@torch.inference_mode()
def decode_session(
    session: DecodeSession,
    logits: torch.Tensor,
    prompts: Sequence[tuple[Sequence[int], Sequence[Row]]],
    spec: SamplingSpec | Sequence[SamplingSpec],
    eos_token_ids: frozenset[int],
    on_step: StepCallback | None = None,
    stats: DecodeStats | None = None,
) -> list[Trace]:
    """Decode the rows of a started session: ``prompts`` lists each prompt with its rows, in the
    session's row order; ``logits`` are the first position's (one per row). ``spec``: the sampling
    settings of every prompt, or one per prompt (their temperatures are the rows')."""
    stats = stats if stats is not None else DecodeStats()
    specs = [spec] * len(prompts) if isinstance(spec, SamplingSpec) else list(spec)
    rows = [row for _, prompt_rows in prompts for row in prompt_rows]
    row_specs = [s for (_, prompt_rows), s in zip(prompts, specs) for _ in prompt_rows]
    limits = [s.max_new_tokens for s in row_specs]
    # Rows share a logits pipeline where their temperature and filters agree.
    keys = [(row.temperature, s.top_k, s.top_p, s.repetition_penalty) for row, s in zip(rows, row_specs)]
    traces = [Trace(row) for row in rows]
    pipelines = {key: build_pipeline(*key) for key in sorted(set(keys))}
    generators = [torch.Generator().manual_seed(row.generator_seed) for row in rows]

    started = time.perf_counter()
    # The repetition penalty reads every id seen so far: one running mask, not a rebuilt set.
    penalised = any(s.repetition_penalty != 1.0 for s in specs)
    seen = SeenTokens.stacked(prompts, logits.shape[-1]) if penalised else None
    no_history = torch.empty((len(rows), 0), dtype=torch.long)
    live = list(range(len(rows)))  # trace index of each batch position

    def positions_by_pipeline() -> dict[tuple, list[int]]:
        return {key: [p for p, i in enumerate(live) if keys[i] == key] for key in pipelines}

    groups = positions_by_pipeline()
    for position in range(max(limits)):
        raw_logprobs = torch.log_softmax(logits, dim=-1)
        raw_entropy = -(raw_logprobs.exp() * raw_logprobs).nan_to_num().sum(dim=-1)
        top2 = raw_logprobs.topk(2, dim=-1)
        chosen = torch.empty(len(live), dtype=torch.long)
        entropies = torch.empty(len(live))
        order_differs = torch.zeros(len(live), dtype=torch.bool)
        for key, pipeline in pipelines.items():
            batch_pos = groups[key]
            if not batch_pos:
                continue
            history = seen.mask[batch_pos] if seen is not None else no_history[batch_pos]
            # Temperature applied last (llama.cpp, Ollama) can keep another candidate set:
            # compared at every step of sampled rows, where the order can matter.
            processed, other = pipeline.process(history, logits[batch_pos], compare_temperature_last=True)
            entropies[batch_pos] = entropy_nats(processed)
            chosen[batch_pos] = pipeline.sample(processed, [generators[live[p]] for p in batch_pos])
            if other is not None:
                order_differs[batch_pos] = (other != torch.isfinite(processed)).any(dim=-1)
        if seen is not None:
            seen.add(chosen)

        # One conversion per step, not one per row and field.
        tokens = chosen.tolist()
        logprobs = raw_logprobs.gather(1, chosen.unsqueeze(1)).squeeze(1).tolist()
        top2_ids, top2_probs = top2.indices.tolist(), top2.values.exp().tolist()
        step_entropies, step_raw_entropies, differs = entropies.tolist(), raw_entropy.tolist(), order_differs.tolist()
        still: list[int] = []
        stats.row_steps += len(live)
        for p, i in enumerate(live):
            token = tokens[p]
            trace = traces[i]
            trace.steps.append(
                StepRecord(
                    token=token,
                    raw_logprob=logprobs[p],
                    entropy=step_entropies[p],
                    top2_tokens=(top2_ids[p][0], top2_ids[p][1]),
                    top2_probs=(top2_probs[p][0], top2_probs[p][1]),
                    raw_entropy=step_raw_entropies[p],
                    temperature_last_differs=differs[p],
                )
            )
            if token in eos_token_ids:
                trace.finish_reason = "stop"
            else:
                trace.tokens.append(token)
                if position + 1 < limits[i]:
                    still.append(p)
        if on_step:
            on_step(position + 1, len(still))
        if not still:
            break
        stats.forward_passes += 1
        if len(still) < len(live):
            keep = torch.tensor(still, dtype=torch.long)
            session.keep(keep)
            if seen is not None:
                seen.keep(keep)
            chosen = chosen[keep]
            live = [live[p] for p in still]
            groups = positions_by_pipeline()
        stats.rows_per_pass.append(len(live))
        logits = session.advance(chosen)
    stats.decode_seconds += time.perf_counter() - started
    return traces

