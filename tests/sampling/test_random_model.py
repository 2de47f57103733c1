"""Random-initialised models for benchmarks on hosts without weights; GPU checks when CUDA exists."""

from __future__ import annotations

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.sampling.engine import decode_rows, rows_for
from diagnose.sampling.random_model import random_backend
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
