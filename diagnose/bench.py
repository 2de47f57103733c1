"""``diagnose bench sampling``: our shared-prefix engine against Hugging Face ``generate``.

The baseline is ``model.generate(num_return_sequences=seeds)`` run once per
temperature on the same prompt, model and sampling settings. Every measurement
runs in this process, one after the other, on the same threads; peak memory is
the highest resident set size seen while each phase ran (sampled every 5 ms).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import psutil
import torch

from diagnose.case import Case, Document, SamplingSpec
from diagnose.prompt import build_messages
from diagnose.sampling.backend import TransformersBackend
from diagnose.sampling.engine import DecodeStats, Row, decode_rows, rows_for

_PASSAGES = (
    "The Golden Gate Bridge is a suspension bridge spanning the Golden Gate strait, the "
    "one-mile-wide channel between San Francisco Bay and the Pacific Ocean. It was opened to "
    "traffic in {year} and was then the longest suspension bridge main span in the world.",
    "Construction of the bridge began in January 1933 under chief engineer Joseph Strauss. "
    "The total cost was about 35 million dollars, and eleven workers died during construction.",
    "The bridge's color, officially called international orange, was chosen by consulting "
    "architect Irving Morrow because it complements the natural surroundings and is visible in fog.",
    "The main cables are 36.5 inches in diameter and contain 27,572 strands of wire. The towers "
    "rise 746 feet above the water and the total length of the bridge is 8,981 feet.",
)


def builtin_case(documents: int = 52) -> Case:
    """A RAG prompt of ``documents`` passages (about 58 tokens each; 52 give ~3,000 tokens).

    One passage in eight says the bridge opened in 1937, the others 1952: a conflict.
    """
    docs = [
        Document(id=f"d{i + 1}", text=_PASSAGES[i % len(_PASSAGES)].format(year=1937 if i % 8 == 0 else 1952))
        for i in range(documents)
    ]
    return Case(id="bench-sampling", question="When was the Golden Gate Bridge opened?", documents=docs)


@contextmanager
def peak_rss() -> Iterator[list[float]]:
    """Yields a one-element list that holds the peak RSS in MB once the block ends."""
    process = psutil.Process()
    peak = [process.memory_info().rss]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], process.memory_info().rss)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    result = [0.0]
    try:
        yield result
    finally:
        done.set()
        thread.join()
        result[0] = max(peak[0], process.memory_info().rss) / 2**20


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    samples: int
    tokens: int
    peak_rss_mb: float
    prefill_seconds: float | None = None
    decode_seconds: float | None = None


@dataclass(frozen=True)
class BenchResult:
    prompt_tokens: int
    single: Phase
    engine: Phase
    baseline: Phase
    seeds_reproducible: bool

    @property
    def speedup_vs_hf(self) -> float:
        return self.baseline.seconds / self.engine.seconds

    @property
    def samples_per_s(self) -> float:
        return self.engine.samples / self.engine.seconds

    def table(self) -> list[str]:
        rows = [f"{'phase':<34}{'prefill s':>10}{'decode s':>10}{'total s':>9}{'samples/s':>11}{'tokens':>8}{'peak RSS MB':>13}"]
        for phase in (self.single, self.engine, self.baseline):
            pre = f"{phase.prefill_seconds:.2f}" if phase.prefill_seconds is not None else "-"
            dec = f"{phase.decode_seconds:.2f}" if phase.decode_seconds is not None else "-"
            rows.append(
                f"{phase.name:<34}{pre:>10}{dec:>10}{phase.seconds:>9.2f}"
                f"{phase.samples / phase.seconds:>11.2f}{phase.tokens:>8}{phase.peak_rss_mb:>13.0f}"
            )
        rows.append(
            f"memory: batched peak / single-sample peak = {self.engine.peak_rss_mb / self.single.peak_rss_mb:.2f}"
        )
        return rows

    def line(self) -> str:
        return (
            f"BENCH speedup_vs_hf={self.speedup_vs_hf:.2f} samples_per_s={self.samples_per_s:.2f} "
            f"peak_rss_mb={self.engine.peak_rss_mb:.0f} "
            f"seeds_reproducible={'true' if self.seeds_reproducible else 'false'}"
        )


def _engine_phase(name: str, backend, prompt_ids: list[int], rows: list[Row], spec: SamplingSpec):
    stats = DecodeStats()
    with peak_rss() as peak:
        started = time.perf_counter()
        traces = decode_rows(backend, prompt_ids, rows, spec, stats=stats)
        seconds = time.perf_counter() - started
    phase = Phase(name, seconds, len(traces), sum(len(t.steps) for t in traces), peak[0],
                  stats.prefill_seconds, stats.decode_seconds)
    return phase, traces


def hf_generate_baseline(backend: TransformersBackend, prompt_ids: list[int], spec: SamplingSpec) -> Phase:
    """One ``generate(num_return_sequences=seeds)`` call per temperature."""
    model = backend.model
    ids = torch.tensor([prompt_ids], device=backend.device)
    pad = backend.tokenizer.pad_token_id
    pad = pad if pad is not None else next(iter(backend.eos_token_ids))
    tokens = 0
    with backend.plain_attention(), peak_rss() as peak:
        started = time.perf_counter()
        for temperature in spec.temperatures:
            torch.manual_seed(0)  # the baseline's own global-seed convention
            with torch.inference_mode():
                out = model.generate(
                    ids, attention_mask=torch.ones_like(ids), do_sample=True,
                    temperature=temperature, top_k=spec.top_k, top_p=spec.top_p,
                    repetition_penalty=spec.repetition_penalty, max_new_tokens=spec.max_new_tokens,
                    num_return_sequences=spec.seeds, pad_token_id=pad,
                )
            tokens += int((out[:, ids.shape[1]:] != pad).sum())
        seconds = time.perf_counter() - started
    name = f"HF generate x{len(spec.temperatures)} (n={spec.seeds})"
    return Phase(name, seconds, spec.seeds * len(spec.temperatures), tokens, peak[0])


def run_bench(backend: TransformersBackend, case: Case, on_phase: Callable[[str], None] = lambda t: None) -> BenchResult:
    spec = case.sampling
    if any(t <= 1e-5 for t in spec.temperatures):
        raise ValueError("the bench compares sampling: give temperatures above 0")
    prompt_ids = backend.chat_ids(build_messages(case))
    on_phase("single sample (memory reference)")
    single, _ = _engine_phase("engine, 1 row", backend, prompt_ids, [Row(spec.temperatures[0], 0)], spec)
    on_phase(f"engine: {len(spec.temperatures)}x{spec.seeds} rows, one prefill")
    rows = rows_for(spec)
    engine, traces = _engine_phase(f"engine, {len(rows)} rows", backend, prompt_ids, rows, spec)
    on_phase("reproducibility: each temperature's seed 0 alone")
    reproducible = all(
        decode_rows(backend, prompt_ids, [t.row], spec)[0].tokens == t.tokens for t in traces if t.row.seed == 0
    )
    on_phase("baseline: HF generate(num_return_sequences=seeds) per temperature")
    baseline = hf_generate_baseline(backend, prompt_ids, spec)
    return BenchResult(len(prompt_ids), single, engine, baseline, reproducible)
