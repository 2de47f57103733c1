"""Random-initialised models for benchmarks on hosts without weights; GPU checks when CUDA exists."""

from __future__ import annotations

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.decode.engine import decode_rows, rows_for
from diagnose.decode.random_model import random_backend
from tests.fakes import SizedTokenizer



def _spec() -> SamplingSpec:
    return SamplingSpec(seeds=3, temperatures=[0.0, 0.9], top_k=20, top_p=0.9, max_new_tokens=10)


def _check_engine(device: str, dtype: torch.dtype) -> None:
    backend = random_backend("tiny", SizedTokenizer(), device, dtype, seed=7)
    assert backend.shared_prefix and backend.identity["format"] == "random-init"
    prompt = list(range(3, 40))
    spec = _spec()
    shared = decode_rows(backend, prompt, rows_for(spec), spec)
    for trace in shared:
        alone = decode_rows(backend, prompt, [trace.row], spec)[0]
        assert alone.tokens == trace.tokens
    backend.shared_prefix = False  # the prefix-copy fallback gives the same tokens
    copied = decode_rows(backend, prompt, rows_for(spec), spec)
    assert [t.tokens for t in copied] == [t.tokens for t in shared]


def test_seeded_random_weights_are_reproducible():
    a = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=7)
    b = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=7)
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items()):
        assert torch.equal(x, y), name
    with pytest.raises(ValueError, match="preset"):
        random_backend("huge", SizedTokenizer(), "cpu", torch.float32)


def test_engine_on_a_random_model_cpu():
    _check_engine("cpu", torch.float32)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_engine_on_a_random_model_cuda_bf16():
    _check_engine("cuda", torch.bfloat16)


def test_a_seed_gives_the_same_tokens_in_any_batch_in_bfloat16():
    """Contract section 3 in reduced precision: each row decoded with the whole batch, alone, in a
    reversed part of it, and beside rows of other seeds gives the same tokens and log-probabilities."""
    backend = random_backend("tiny", SizedTokenizer(), "cpu", torch.bfloat16, seed=7)
    assert backend.shared_prefix
    prompt = list(range(3, 120))
    spec = SamplingSpec(seeds=4, temperatures=[0.0, 0.9, 1.3], top_k=20, top_p=0.9, max_new_tokens=12)
    rows = rows_for(spec)
    together = decode_rows(backend, prompt, rows, spec)
    assert len({tuple(t.tokens) for t in together}) > 3  # the rows sample different texts
    others = rows_for(spec, seed_offset=100)  # the same temperatures, other seeds
    batches = [rows[::-1][:5], rows[1::2] + others[:3], others[3:] + rows[::3]]
    decoded = [{t.row: t for t in decode_rows(backend, prompt, batch, spec)} for batch in batches]
    for trace in together:
        again = [d[trace.row] for d in decoded if trace.row in d]
        again.append(decode_rows(backend, prompt, [trace.row], spec)[0])
        for other in again:
            assert other.tokens == trace.tokens, trace.row
            assert [s.raw_logprob for s in other.steps] == [s.raw_logprob for s in trace.steps]
