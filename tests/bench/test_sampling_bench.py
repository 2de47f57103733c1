"""``run_bench`` end to end on a seeded random tiny Llama: every system runs, the line keeps the contract."""

from __future__ import annotations

import re
import sys

import pytest
import torch

from diagnose.bench import builtin_case, llamacpp, run_bench
from diagnose.case import SamplingSpec
from diagnose.bench.sampling import check_rows
from diagnose.decode.engine import Row, decode_rows, rows_for
from diagnose.decode.fake import FakeBackend
from diagnose.decode.random_model import random_backend
from tests.fakes import SizedTokenizer



@pytest.fixture(scope="module")
def result():
    backend = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=3)
    backend.chat_ids = lambda messages: list(range(3, 60))  # the fake tokenizer cannot encode text
    case = builtin_case(documents=2)
    case.sampling = SamplingSpec(seeds=3, temperatures=[0.7, 1.3], top_k=20, top_p=0.9, max_new_tokens=6)
    phases: list[str] = []
    return run_bench(backend, case, on_phase=phases.append), phases


def test_every_system_runs_the_same_job(result):
    bench, phases = result
    assert bench.prompt_tokens == 57
    for phase in (bench.engine, bench.shared_prefill, bench.baseline):
        assert phase.samples == 6 and phase.seconds > 0 and phase.peak_rss_mb > 0
    assert bench.single.samples == 1
    assert bench.shared_prefill.prefill_seconds + bench.shared_prefill.decode_seconds == pytest.approx(
        bench.shared_prefill.seconds)
    # The shared prefill changes where the prompt is computed, not what HF samples.
    assert bench.shared_prefill.generated == bench.baseline.generated
    assert len(set(bench.baseline.generated)) > 1  # and the samples differ from each other
    assert isinstance(bench.llamacpp, llamacpp.Skipped)  # a random model has no GGUF file
    assert any("llama.cpp" in p for p in phases)


def test_every_row_is_checked_for_reproducibility(result):
    bench, _ = result
    check = bench.reproducibility
    assert check.rows == 6 and check.split == (2, 4)
    assert check.same == 6 and check.alone_same and bench.seeds_reproducible


def test_the_last_line_keeps_the_contract_keys_in_order_and_adds_the_new_ones(result):
    bench, _ = result
    line = bench.line()
    assert re.fullmatch(
        r"BENCH speedup_vs_hf=\d+\.\d\d samples_per_s=\d+\.\d\d peak_rss_mb=\d+ seeds_reproducible=true "
        r"speedup_vs_hf_shared_prefill=\d+\.\d\d speedup_vs_llamacpp=skipped decode_vs_floor=\d+\.\d\d",
        line,
    ), line
    assert f"speedup_vs_hf={bench.baseline.seconds / bench.engine.seconds:.2f}" in line
    assert f"decode_vs_floor={bench.engine.decode_seconds / bench.floor.decode_seconds:.2f}" in line


def test_table_has_one_row_per_system_and_the_floor(result):
    bench, _ = result
    table = "\n".join(bench.table())
    for name in ("engine, 6 rows", "HF shared prefill", "HF generate x2 (n=3)", "floor (roofline"):
        assert name in table
    assert f"llama.cpp baseline skipped: {bench.llamacpp.reason}" in table
    assert "6/6 rows gave the same tokens" in table


def test_llamacpp_is_skipped_with_a_clear_reason_when_not_installed(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as if absent
    skipped = llamacpp.llamacpp_generate(tmp_path / "m.gguf", [1, 2], [Row(0.7, 0)], SamplingSpec(), threads=1)
    assert isinstance(skipped, llamacpp.Skipped) and "pip install" in skipped.reason


def test_llamacpp_is_skipped_for_a_model_without_a_gguf_file(monkeypatch):
    monkeypatch.setattr(llamacpp, "available", lambda: "0.3.36")  # as if installed
    skipped = llamacpp.llamacpp_generate(None, [1, 2], [Row(0.7, 0)], SamplingSpec(), threads=1)
    assert skipped == llamacpp.Skipped("the benchmarked model is not a GGUF file")


@pytest.mark.models
def test_llamacpp_samples_every_row_from_one_prefill_when_installed():
    pytest.importorskip("llama_cpp")
    from diagnose.models import resolve_generator

    spec = SamplingSpec(seeds=2, temperatures=[0.7], max_new_tokens=4)
    gguf = resolve_generator("default").path
    phase = llamacpp.llamacpp_generate(gguf, [1, 504, 3458, 28], [Row(0.7, 0), Row(0.7, 1)], spec, threads=1)
    assert phase.samples == 2 and 0 < phase.tokens <= 8
    assert phase.prefill_seconds > 0 and phase.decode_seconds > 0


class _BatchDependent(FakeBackend):
    """A model whose numbers depend on how many rows share the batch (as some reduced-precision
    kernels' do): the reproducibility check must see it, not assume it."""

    def start(self, prompt_ids, rows):
        session, logits = super().start(prompt_ids, rows)
        advance = session.advance
        session.advance = lambda tokens: advance(tokens) + self._shift(len(tokens))
        return session, logits + self._shift(rows)

    def _shift(self, rows: int) -> torch.Tensor:
        shift = torch.zeros(len(self.vocab))
        shift[1 + rows % (len(self.vocab) - 1)] = 2.0
        return shift


@pytest.mark.parametrize("backend_type", [FakeBackend, _BatchDependent])
def test_seeds_reproducible_is_measured_not_assumed(backend_type):
    backend = backend_type(["<eos>", "a", "b", "c", "d", "e"], lambda history: [-9.0, 0.0, 0.1, 0.2, 0.3, 0.4])
    spec = SamplingSpec(seeds=6, temperatures=[1.0], max_new_tokens=8)
    rows = rows_for(spec)
    traces = decode_rows(backend, [1, 2], rows, spec)
    alone = decode_rows(backend, [1, 2], rows[:1], spec)[0]
    check = check_rows(backend, [1, 2], traces, alone, spec)
    assert check.rows == 6
    if backend_type is FakeBackend:
        assert check.ok and check.same == 6
    else:
        assert not check.ok and check.same < 6
        assert check.describe().startswith(f"reproducibility: {check.same}/6 rows gave the same tokens")
