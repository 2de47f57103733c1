"""Run the sampling job on every system, check the engine's rows, and print one table.

Order: the machine's rates; the engine on one row (memory reference) and on all
rows; every row again in another batch; the HF shared-prefill baseline;
llama.cpp; plain HF ``generate`` (the slowest, last).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import torch

from diagnose.bench import hf, llamacpp
from diagnose.bench.measure import Phase, device_peak, peak_rss
from diagnose.bench.roofline import Floor, Machine, ModelShape, job_floor, measure_machine
from diagnose.case import Case, SamplingSpec
from diagnose.prompt import build_messages
from diagnose.decode.backend import TransformersBackend
from diagnose.decode.engine import DecodeStats, Row, Trace, decode_rows, rows_for
from diagnose.decode.processors import GREEDY_EPSILON


@dataclass(frozen=True)
class Reproducibility:
    """Each row decoded again in another batch: reversed order, split in two of unequal size."""

    rows: int
    same: int
    alone_same: bool
    """The first row decoded alone (the memory-reference run) gave the same tokens too."""
    split: tuple[int, int]

    @property
    def ok(self) -> bool:
        return self.same == self.rows and self.alone_same

    def describe(self) -> str:
        return (
            f"reproducibility: {self.same}/{self.rows} rows gave the same tokens decoded again in "
            f"another batch (reversed, {self.split[0]} + {self.split[1]} rows); the first row alone: "
            f"{'same' if self.alone_same else 'DIFFERENT'}"
        )


@dataclass(frozen=True)
class BenchResult:
    prompt_tokens: int
    machine: Machine
    floor: Floor
    single: Phase
    engine: Phase
    shared_prefill: Phase
    llamacpp: Phase | llamacpp.Skipped
    baseline: Phase
    """Plain HF ``generate(num_return_sequences=seeds)`` per temperature (the contract's ``speedup_vs_hf``)."""
    reproducibility: Reproducibility

    @property
    def seeds_reproducible(self) -> bool:
        return self.reproducibility.ok

    @property
    def speedup_vs_hf(self) -> float:
        return self.baseline.seconds / self.engine.seconds

    @property
    def speedup_vs_hf_shared_prefill(self) -> float:
        return self.shared_prefill.seconds / self.engine.seconds

    @property
    def speedup_vs_llamacpp(self) -> float | None:
        if isinstance(self.llamacpp, llamacpp.Skipped):
            return None
        return self.llamacpp.seconds / self.engine.seconds

    @property
    def samples_per_s(self) -> float:
        return self.engine.samples_per_s

    @property
    def decode_vs_floor(self) -> float:
        return (self.engine.decode_seconds or 0.0) / self.floor.decode_seconds

    def table(self) -> list[str]:
        header = (
            f"{'system':<42}{'prefill s':>10}{'decode s':>10}{'total s':>9}{'samples/s':>11}"
            f"{'tokens':>8}{'peak RSS MB':>13}{'vs floor: prefill':>19}{'decode':>8}{'total':>7}"
        )
        rows = [self.machine.describe(), header]
        systems = [self.engine, self.single, self.shared_prefill]
        if isinstance(self.llamacpp, Phase):
            systems.append(self.llamacpp)
        systems.append(self.baseline)
        for phase in systems:
            rows.append(self._row(phase))
        on_device = [p for p in systems if p.peak_device_mb is not None]
        if on_device:
            rows.append("peak memory allocated on the device, MB: " + ", ".join(
                f"{p.name.split(',')[0]} {p.peak_device_mb:.0f}" for p in on_device))
        floor = self.floor
        rows.append(
            f"{'floor (roofline of the engine job)':<42}{floor.prefill_seconds:>10.2f}{floor.decode_seconds:>10.2f}"
            f"{floor.seconds:>9.2f}{self.engine.samples / floor.seconds:>11.2f}"
        )
        rows.append(
            f"decode floor: {floor.decode_memory_seconds:.2f} s by bytes, {floor.decode_compute_seconds:.2f} s "
            f"by FLOPs, so {floor.decode_bound}-bound (each pass: the larger of the two)"
        )
        if isinstance(self.llamacpp, llamacpp.Skipped):
            rows.append(f"llama.cpp baseline skipped: {self.llamacpp.reason}")
        rows.append(self.reproducibility.describe())
        rows.append(
            f"memory: batched peak / single-sample peak = {self.engine.peak_rss_mb / self.single.peak_rss_mb:.2f}"
        )
        return rows

    def _row(self, phase: Phase) -> str:
        def cell(value: float | None, width: int) -> str:
            return f"{value:>{width}.2f}" if value is not None else f"{'-':>{width}}"

        floor = self.floor
        pre, dec = phase.prefill_seconds, phase.decode_seconds
        is_single = phase is self.single  # its own job is one row, not the floor's
        return (
            f"{phase.name:<42}{cell(pre, 10)}{cell(dec, 10)}{phase.seconds:>9.2f}{phase.samples_per_s:>11.2f}"
            f"{phase.tokens:>8}{phase.peak_rss_mb:>13.0f}"
            f"{cell(None if pre is None else pre / floor.prefill_seconds, 19)}"
            f"{cell(None if dec is None or is_single else dec / floor.decode_seconds, 8)}"
            f"{cell(None if is_single else phase.seconds / floor.seconds, 7)}"
        )

    def line(self, other_rows_reproducible: bool = True) -> str:
        """The BENCH line; ``other_rows_reproducible``: rows of another job (``--prompts``) were too."""
        llama = self.speedup_vs_llamacpp
        reproducible = self.seeds_reproducible and other_rows_reproducible
        return (
            f"BENCH speedup_vs_hf={self.speedup_vs_hf:.2f} samples_per_s={self.samples_per_s:.2f} "
            f"peak_rss_mb={self.engine.peak_rss_mb:.0f} "
            f"seeds_reproducible={'true' if reproducible else 'false'} "
            f"speedup_vs_hf_shared_prefill={self.speedup_vs_hf_shared_prefill:.2f} "
            f"speedup_vs_llamacpp={'skipped' if llama is None else f'{llama:.2f}'} "
            f"decode_vs_floor={self.decode_vs_floor:.2f}"
        )


def _engine(name: str, backend, prompt_ids: list[int], rows: Sequence[Row], spec: SamplingSpec):
    stats = DecodeStats()
    with peak_rss(backend.device) as peak:
        started = time.perf_counter()
        traces = decode_rows(backend, prompt_ids, rows, spec, stats=stats)
        seconds = time.perf_counter() - started
    phase = Phase(name, seconds, len(traces), sum(len(t.tokens) for t in traces), peak[0],
                  stats.prefill_seconds, stats.decode_seconds, device_peak(peak))
    return phase, traces, stats


def check_rows(backend, prompt_ids: list[int], traces: list[Trace], alone: Trace, spec: SamplingSpec) -> Reproducibility:
    """Decode every row again, reversed and in two batches of other sizes; compare tokens."""
    rows = [t.row for t in reversed(traces)]
    cut = max(1, len(rows) // 3)
    again = decode_rows(backend, prompt_ids, rows[:cut], spec) + (
        decode_rows(backend, prompt_ids, rows[cut:], spec) if rows[cut:] else []
    )
    tokens = {t.row: t.tokens for t in again}
    same = sum(tokens[t.row] == t.tokens for t in traces)
    return Reproducibility(len(traces), same, alone.tokens == traces[0].tokens, (cut, len(rows) - cut))


def run_bench(backend: TransformersBackend, case: Case, on_phase: Callable[[str], None] = lambda t: None) -> BenchResult:
    spec = case.sampling
    if any(t <= GREEDY_EPSILON for t in spec.temperatures):
        raise ValueError("the bench compares sampling: give temperatures above 0")
    prompt_ids = backend.chat_ids(build_messages(case))
    rows = rows_for(spec)
    shape = ModelShape.of(backend.model)
    on_phase("measuring the machine: matmul throughput and read bandwidth")
    # Batch-invariant half precision runs its products in float32 (diagnose.decode.batch_invariant):
    # the floor is that of the products as they run.
    invariant = backend.batch_invariance.mode == "fixed_row_chunks"
    compute = torch.float32 if invariant else next(backend.model.parameters()).dtype
    machine = measure_machine(shape, compute, len(prompt_ids), device=backend.device)
    on_phase("engine: one row (memory reference)")
    single, (alone,), _ = _engine("engine, 1 row (memory reference)", backend, prompt_ids, rows[:1], spec)
    on_phase(f"engine: {len(spec.temperatures)}x{spec.seeds} rows, one prefill")
    engine, traces, stats = _engine(f"engine, {len(rows)} rows, one prefill", backend, prompt_ids, rows, spec)
    floor = job_floor(shape, machine, len(prompt_ids), stats.rows_per_pass)
    on_phase("reproducibility: every row again in another batch")
    reproducibility = check_rows(backend, prompt_ids, traces, alone, spec)
    on_phase("baseline: HF, one shared prefill, generate(cache=...) per temperature")
    shared = hf.shared_prefill_generate(backend, prompt_ids, spec)
    on_phase("baseline: llama.cpp on the same GGUF")
    gguf = backend.identity.get("path") if backend.identity.get("format") == "gguf" else None
    llama = llamacpp.llamacpp_generate(Path(gguf) if gguf else None, prompt_ids, rows, spec, torch.get_num_threads())
    on_phase("baseline: HF generate(num_return_sequences=seeds) per temperature")
    baseline = hf.plain_generate(backend, prompt_ids, spec)
    return BenchResult(len(prompt_ids), machine, floor, single, engine, shared, llama, baseline, reproducibility)
