"""``diagnose bench sampling``: our shared-prefix engine against Hugging Face ``generate``.

The baseline is ``model.generate(num_return_sequences=seeds)`` run once per
temperature on the same prompt, model and sampling settings. Both sides run in
the same process, one after the other, on the same threads.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass

import torch

from diagnose.case import Case, SamplingSpec
from diagnose.prompt import build_messages
from diagnose.sampling.backend import TransformersBackend
from diagnose.sampling.engine import Row, decode_rows, rows_for


@dataclass(frozen=True)
class BenchResult:
    engine_seconds: float
    engine_samples: int
    engine_tokens: int
    hf_seconds: float
    hf_tokens: int
    prompt_tokens: int
    seeds_reproducible: bool
    peak_rss_mb: float

    @property
    def speedup_vs_hf(self) -> float:
        return self.hf_seconds / self.engine_seconds if self.engine_seconds else 0.0

    @property
    def samples_per_s(self) -> float:
        return self.engine_samples / self.engine_seconds if self.engine_seconds else 0.0

    def line(self) -> str:
        return (
            f"BENCH speedup_vs_hf={self.speedup_vs_hf:.2f} samples_per_s={self.samples_per_s:.2f} "
            f"peak_rss_mb={self.peak_rss_mb:.0f} "
            f"seeds_reproducible={'true' if self.seeds_reproducible else 'false'}"
        )


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


def builtin_case(documents: int = 8) -> Case:
    """A RAG prompt of ``documents`` passages (about 100 tokens each), two of them conflicting."""
    from diagnose.case import Document

    docs = []
    for i in range(documents):
        text = _PASSAGES[i % len(_PASSAGES)].format(year=1937 if i % 8 == 0 else 1952)
        docs.append(Document(id=f"d{i + 1}", text=text))
    return Case(id="bench-sampling", question="When was the Golden Gate Bridge opened?", documents=docs)


def hf_generate_baseline(backend: TransformersBackend, prompt_ids: list[int], spec: SamplingSpec) -> tuple[float, int]:
    """Seconds and generated tokens for one ``generate`` call per temperature."""
    model = backend.model
    ids = torch.tensor([prompt_ids], device=backend.device)
    pad = backend.tokenizer.pad_token_id
    pad = pad if pad is not None else next(iter(backend.eos_token_ids))
    started = time.perf_counter()
    tokens = 0
    for temperature in spec.temperatures:
        torch.manual_seed(0)  # the baseline's own global-seed convention
        with torch.inference_mode():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                do_sample=True,
                temperature=temperature,
                top_k=spec.top_k,
                top_p=spec.top_p,
                repetition_penalty=spec.repetition_penalty,
                max_new_tokens=spec.max_new_tokens,
                num_return_sequences=spec.seeds,
                pad_token_id=pad,
            )
        generated = out[:, ids.shape[1]:]
        tokens += int((generated != pad).sum())
    return time.perf_counter() - started, tokens


def run_bench(backend: TransformersBackend, case: Case, on_phase=lambda text: None) -> BenchResult:
    spec = case.sampling
    if any(t <= 1e-5 for t in spec.temperatures):
        raise ValueError("the bench compares sampling: give temperatures above 0")
    prompt_ids = backend.chat_ids(build_messages(case))
    on_phase("warm-up")
    decode_rows(backend, prompt_ids, [Row(spec.temperatures[0], 0)], spec)

    on_phase(f"engine: {len(spec.temperatures)}×{spec.seeds} rows, one prefill")
    started = time.perf_counter()
    traces = decode_rows(backend, prompt_ids, rows_for(spec), spec)
    engine_seconds = time.perf_counter() - started

    on_phase("reproducibility: each temperature's seed 0 alone")
    reproducible = all(
        decode_rows(backend, prompt_ids, [tr.row], spec)[0].tokens == tr.tokens
        for tr in traces
        if tr.row.seed == 0
    )

    on_phase("baseline: HF generate(num_return_sequences=seeds) per temperature")
    hf_seconds, hf_tokens = hf_generate_baseline(backend, prompt_ids, spec)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return BenchResult(
        engine_seconds=engine_seconds,
        engine_samples=len(traces),
        engine_tokens=sum(len(tr.steps) for tr in traces),
        hf_seconds=hf_seconds,
        hf_tokens=hf_tokens,
        prompt_tokens=len(prompt_ids),
        seeds_reproducible=reproducible,
        peak_rss_mb=peak_kb / 1024,
    )
