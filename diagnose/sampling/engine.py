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
from diagnose.sampling.backend import Backend
from diagnose.sampling.metrics import StepRecord, entropy_nats
from diagnose.sampling.processors import build_pipeline

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
    traces = [Trace(row) for row in rows]
    pipelines = {
        t: build_pipeline(t, spec.top_k, spec.top_p, spec.repetition_penalty)
        for t in sorted({row.temperature for row in rows})
    }
    # Temperature applied last (llama.cpp, Ollama) leaves the candidate set of
    # truncating the untempered logits; compared at every step of sampled rows.
    truncates = spec.top_k > 0 or spec.top_p < 1.0
    temperature_last = build_pipeline(1.0, spec.top_k, spec.top_p, spec.repetition_penalty)
    generators = [torch.Generator().manual_seed(row.generator_seed) for row in rows]
    prompt = torch.tensor(list(prompt_ids), dtype=torch.long)
    needs_history = spec.repetition_penalty != 1.0

    started = time.perf_counter()
    session, logits = backend.start(prompt_ids, len(rows))
    stats.prefill_seconds += time.perf_counter() - started
    started = time.perf_counter()
    live = list(range(len(rows)))  # trace index of each batch position
    for position in range(spec.max_new_tokens):
        raw_logprobs = torch.log_softmax(logits, dim=-1)
        raw_entropy = -(raw_logprobs.exp() * raw_logprobs).nan_to_num().sum(dim=-1)
        top2 = raw_logprobs.topk(2, dim=-1)
        chosen = torch.empty(len(live), dtype=torch.long)
        entropies = torch.empty(len(live))
        order_differs = torch.zeros(len(live), dtype=torch.bool)
        for temperature, pipeline in pipelines.items():
            batch_pos = [p for p, i in enumerate(live) if rows[i].temperature == temperature]
            if not batch_pos:
                continue
            history = _history(prompt, [traces[live[p]].tokens for p in batch_pos], needs_history)
            processed = pipeline(history, logits[batch_pos])
            entropies[batch_pos] = entropy_nats(processed)
            chosen[batch_pos] = pipeline.sample(processed, [generators[live[p]] for p in batch_pos])
            if truncates and not pipeline.greedy and temperature != 1.0:
                other = torch.isfinite(temperature_last(history, logits[batch_pos]))
                order_differs[batch_pos] = (other != torch.isfinite(processed)).any(dim=-1)

        still: list[int] = []
        stats.row_steps += len(live)
        for p, i in enumerate(live):
            token = int(chosen[p])
            trace = traces[i]
            trace.steps.append(
                StepRecord(
                    token=token,
                    raw_logprob=float(raw_logprobs[p, token]),
                    entropy=float(entropies[p]),
                    top2_tokens=(int(top2.indices[p, 0]), int(top2.indices[p, 1])),
                    top2_probs=(float(top2.values[p, 0].exp()), float(top2.values[p, 1].exp())),
                    raw_entropy=float(raw_entropy[p]),
                    temperature_last_differs=bool(order_differs[p]),
                )
            )
            if token in backend.eos_token_ids:
                trace.finish_reason = "stop"
            else:
                trace.tokens.append(token)
                still.append(p)
        if on_step:
            on_step(position + 1, len(still))
        if not still or position + 1 == spec.max_new_tokens:
            break
        stats.forward_passes += 1
        if len(still) < len(live):
            keep = torch.tensor(still, dtype=torch.long)
            session.keep(keep)
            chosen = chosen[keep]
            live = [live[p] for p in still]
        logits = session.advance(chosen)
    stats.decode_seconds += time.perf_counter() - started
    return traces


def _history(prompt: torch.Tensor, generated: list[list[int]], needed: bool) -> torch.Tensor:
    """Token ids seen so far per row (LongTensor[B, L]); empty columns when no processor reads them."""
    if not needed:
        return torch.empty((len(generated), 0), dtype=torch.long)
    rows = [torch.cat([prompt, torch.tensor(g, dtype=torch.long)]) for g in generated]
    return torch.stack(rows)
