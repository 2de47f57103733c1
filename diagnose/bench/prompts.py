"""``diagnose bench sampling --prompts K``: K prompts with a shared root in one batch.

The K prompts are the case and K - 1 variants of it, each without one of its last
documents (as a repair that drops a document would be): they share every token up
to the first removed document. The same rows (seeds x temperatures) of every prompt
are decoded

* by the engine, all prompts in one multi-prompt batch (:mod:`diagnose.decode.multi_prompt`);
* by the engine, prompt after prompt (:func:`~diagnose.decode.engine.decode_rows`);
* by Hugging Face with one shared prefill per prompt (:func:`diagnose.bench.hf.shared_prefill_generate`);
* by llama.cpp per prompt, when llama-cpp-python is installed.

Every row of the batch must give the tokens its prompt gives decoded alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import msgspec
import torch

from diagnose.bench import hf, llamacpp
from diagnose.bench.measure import Phase, device_peak, peak_rss
from diagnose.case import Case
from diagnose.prompt import build_messages
from diagnose.decode.backend import TransformersBackend
from diagnose.decode.engine import DecodeStats, decode_rows, rows_for
from diagnose.decode.multi_prompt import PromptRows, decode_prompts


@dataclass(frozen=True)
class PromptsResult:
    prompts: int
    root_tokens: int
    prompt_tokens: list[int]
    batch: Phase
    one_by_one: Phase
    hf_shared_prefill: Phase
    llamacpp: Phase | llamacpp.Skipped
    rows: int
    rows_same: int
    """Rows of the batch that gave the tokens of their prompt decoded alone."""

    @property
    def reproducible(self) -> bool:
        return self.rows_same == self.rows

    @property
    def speedup_vs_one_by_one(self) -> float:
        return self.one_by_one.seconds / self.batch.seconds

    def table(self) -> list[str]:
        systems = [self.batch, self.one_by_one, self.hf_shared_prefill]
        if isinstance(self.llamacpp, Phase):
            systems.append(self.llamacpp)
        rows = [f"{self.prompts} prompts of {min(self.prompt_tokens)}-{max(self.prompt_tokens)} tokens, "
                f"{self.root_tokens} shared by all",
                f"{'system':<46}{'prefill s':>10}{'decode s':>10}{'total s':>9}{'samples/s':>11}{'peak RSS MB':>13}"]
        for p in systems:
            cells = "".join(f"{v:>10.2f}" if v is not None else f"{'-':>10}" for v in (p.prefill_seconds, p.decode_seconds))
            rows.append(f"{p.name:<46}{cells}{p.seconds:>9.2f}{p.samples_per_s:>11.2f}{p.peak_rss_mb:>13.0f}")
        if isinstance(self.llamacpp, llamacpp.Skipped):
            rows.append(f"llama.cpp baseline skipped: {self.llamacpp.reason}")
        rows.append(f"multi-prompt rows: {self.rows_same}/{self.rows} gave the tokens of their prompt decoded alone")
        return rows

    def keys(self) -> str:
        """What the BENCH line adds."""
        llama = (None if isinstance(self.llamacpp, llamacpp.Skipped)
                 else self.llamacpp.seconds / self.batch.seconds)
        return (f"prompts={self.prompts} speedup_vs_one_by_one={self.speedup_vs_one_by_one:.2f} "
                f"prompts_speedup_vs_hf_shared_prefill={self.hf_shared_prefill.seconds / self.batch.seconds:.2f} "
                f"prompts_speedup_vs_llamacpp={'skipped' if llama is None else f'{llama:.2f}'}")


def variants(case: Case, count: int) -> list[Case]:
    """The case, then ``count - 1`` copies each without one of its last documents (nearest the end first)."""
    if count < 1:
        raise ValueError("--prompts: give at least 1 prompt")
    if count - 1 > len(case.documents):
        raise ValueError(f"--prompts {count}: the case has {len(case.documents)} documents, "
                         f"so at most {len(case.documents) + 1} prompts")
    out = [case]
    for k in range(1, count):
        drop = len(case.documents) - k
        out.append(msgspec.structs.replace(case, documents=case.documents[:drop] + case.documents[drop + 1:]))
    return out


def run_prompts(backend: TransformersBackend, case: Case, count: int,
                on_phase: Callable[[str], None] = lambda t: None) -> PromptsResult:
    from diagnose.decode.prompt_tree import root_length

    spec = case.sampling
    prompts = [backend.chat_ids(build_messages(c)) for c in variants(case, count)]
    rows = rows_for(spec)
    on_phase(f"engine: {count} prompts x {len(rows)} rows in one batch")
    stats = DecodeStats()
    with peak_rss(backend.device) as peak:
        started = time.perf_counter()
        together = decode_prompts(backend, [PromptRows(p, rows) for p in prompts], spec, stats=stats)
        seconds = time.perf_counter() - started
    batch = _phase(f"engine, {count} prompts in one batch", seconds, together, peak, stats)
    on_phase(f"engine: the {count} prompts one by one")
    stats = DecodeStats()
    with peak_rss(backend.device) as peak:
        started = time.perf_counter()
        alone = [decode_rows(backend, p, rows, spec, stats=stats) for p in prompts]
        seconds = time.perf_counter() - started
    one_by_one = _phase("engine, prompt after prompt", seconds, alone, peak, stats)
    same = sum(a.tokens == b.tokens for x, y in zip(together, alone) for a, b in zip(x, y))
    on_phase("baseline: HF, one shared prefill per prompt")
    shared = [hf.shared_prefill_generate(backend, p, spec) for p in prompts]
    on_phase("baseline: llama.cpp per prompt")
    gguf = backend.identity.get("path") if backend.identity.get("format") == "gguf" else None
    llama = [llamacpp.llamacpp_generate(Path(gguf) if gguf else None, p, rows, spec, torch.get_num_threads())
             for p in prompts]
    return PromptsResult(count, root_length(prompts), [len(p) for p in prompts], batch, one_by_one,
                         _total("HF shared prefill per prompt", shared), _total("llama.cpp per prompt", llama),
                         len(rows) * count, same)


def _phase(name: str, seconds: float, traces, peak: list[float], stats: DecodeStats) -> Phase:
    flat = [t for prompt in traces for t in prompt]
    return Phase(name, seconds, len(flat), sum(len(t.tokens) for t in flat), peak[0], stats.prefill_seconds,
                 stats.decode_seconds, device_peak(peak))


def _total(name: str, phases: list) -> Phase | llamacpp.Skipped:
    """One phase summing per-prompt runs (the first skip stands for all)."""
    skipped = next((p for p in phases if isinstance(p, llamacpp.Skipped)), None)
    if skipped is not None:
        return skipped
    prefill = [p.prefill_seconds for p in phases]
    decode = [p.decode_seconds for p in phases]
    return Phase(name, sum(p.seconds for p in phases), sum(p.samples for p in phases), sum(p.tokens for p in phases),
                 max(p.peak_rss_mb for p in phases), None if None in prefill else sum(prefill),
                 None if None in decode else sum(decode))
