"""``bench sampling --prompts K`` on a seeded random tiny Llama: K prompts with a shared root in one batch."""

from __future__ import annotations

import re
import zlib

import pytest
import torch

from diagnose.bench import builtin_case, llamacpp, run_bench
from diagnose.bench.prompts import run_prompts, variants
from diagnose.case import SamplingSpec
from diagnose.decode.random_model import random_backend
from tests.fakes import SizedTokenizer


def _word_ids(messages) -> list[int]:
    """One id per word (the fake tokenizer cannot encode text): prompts that share words share ids."""
    words = " ".join(m["content"] for m in messages).split()
    return [3 + zlib.crc32(w.encode()) % 290 for w in words]


@pytest.fixture(scope="module")
def result():
    backend = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=3)
    backend.chat_ids = _word_ids
    case = builtin_case(documents=4)
    case.sampling = SamplingSpec(seeds=2, temperatures=[0.7, 1.3], top_k=20, top_p=0.9, max_new_tokens=6)
    phases: list[str] = []
    return run_bench(backend, case), run_prompts(backend, case, 3, on_phase=phases.append), phases


def test_the_variants_drop_one_of_the_last_documents_each():
    case = builtin_case(documents=4)
    cases = variants(case, 3)
    assert [[d.id for d in c.documents] for c in cases] == [["d1", "d2", "d3", "d4"], ["d1", "d2", "d3"],
                                                          ["d1", "d2", "d4"]]
    with pytest.raises(ValueError, match="at most 5 prompts"):
        variants(case, 6)


def test_every_prompt_runs_every_row_on_every_system(result):
    _, prompts, phases = result
    assert prompts.prompts == 3 and prompts.rows == 3 * 4
    for phase in (prompts.batch, prompts.one_by_one, prompts.hf_shared_prefill):
        assert phase.samples == 12 and phase.seconds > 0
    assert 0 < prompts.root_tokens < min(prompts.prompt_tokens)
    assert isinstance(prompts.llamacpp, llamacpp.Skipped)
    assert any("one batch" in p for p in phases)


def test_the_batch_rows_are_their_prompts_decoded_alone(result):
    _, prompts, _ = result
    assert prompts.rows_same == prompts.rows and prompts.reproducible
    assert "12/12 gave the tokens of their prompt decoded alone" in "\n".join(prompts.table())


def test_the_line_keeps_the_contract_keys_and_adds_the_prompts(result):
    bench, prompts, _ = result
    line = f"{bench.line(prompts.reproducible)} {prompts.keys()}"
    assert re.fullmatch(
        r"BENCH speedup_vs_hf=\d+\.\d\d samples_per_s=\d+\.\d\d peak_rss_mb=\d+ seeds_reproducible=true "
        r"speedup_vs_hf_shared_prefill=\d+\.\d\d speedup_vs_llamacpp=skipped decode_vs_floor=\d+\.\d\d "
        r"prompts=3 speedup_vs_one_by_one=\d+\.\d\d prompts_speedup_vs_hf_shared_prefill=\d+\.\d\d "
        r"prompts_speedup_vs_llamacpp=skipped",
        line,
    ), line
    assert f"speedup_vs_one_by_one={prompts.one_by_one.seconds / prompts.batch.seconds:.2f}" in line
    assert "seeds_reproducible=false" in bench.line(False)
