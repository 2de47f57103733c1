"""Half precision on CPU gives each row the same bits alone and in any batch (contract section 3)."""

from __future__ import annotations

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.decode import batch_invariant
from diagnose.decode.engine import decode_rows, rows_for
from diagnose.decode.random_model import random_backend
from diagnose.decode.shared_prefix import prefix_attention
from diagnose.environment import fingerprint
from tests.fakes import SizedTokenizer

BATCH = 40
SUBSETS = [1, 2, 3, 5, 7, 13, 17, 33]
"""Row counts that take other kernel paths than the whole batch (MKL's float32 GEMM below a dozen
rows, the flash kernel's last query block)."""


def _subsets(seed: int = 0):
    """(rows, indices): random rows of the batch, in random order, as a smaller batch."""
    gen = torch.Generator().manual_seed(seed)
    for count in SUBSETS:
        yield count, torch.randperm(BATCH, generator=gen)[:count]


def test_fixed_row_chunks_give_every_row_the_same_bits_in_any_batch():
    gen = torch.Generator().manual_seed(1)
    weight = torch.randn(384, 640, generator=gen) / 25
    rows = torch.randn(BATCH, 640, generator=gen)
    batch = batch_invariant.in_fixed_row_chunks(lambda chunk: torch.nn.functional.linear(chunk, weight), rows)
    assert batch.shape == (BATCH, 384)
    for count, picked in _subsets():
        alone = batch_invariant.in_fixed_row_chunks(lambda chunk: torch.nn.functional.linear(chunk, weight), rows[picked])
        assert torch.equal(alone, batch[picked]), count
    # tuples of results come back cut to the rows given, each along the same dimension
    halves = batch_invariant.in_fixed_row_chunks(lambda chunk: (chunk[:, :2], chunk.sum(-1, keepdim=True)), rows[:3])
    assert torch.equal(halves[0], rows[:3, :2]) and halves[1].shape == (3, 1)
    assert batch_invariant.linear(rows[:0].bfloat16(), weight, None).shape == (0, 384)  # no rows: none out


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_rounds_a_float32_product_once_and_rows_keep_their_bits(dtype):
    gen = torch.Generator().manual_seed(2)
    weight = (torch.randn(200, 320, generator=gen) / 20).to(dtype)
    bias = torch.randn(200, generator=gen).to(dtype)
    x = torch.randn(BATCH, 1, 320, generator=gen).to(dtype)
    with batch_invariant.decoding():
        batch = batch_invariant.linear(x, weight.float(), bias.float())
        picked_rows = [(count, picked, batch_invariant.linear(x[picked], weight.float(), bias.float()))
                       for count, picked in _subsets(3)]
    assert batch.dtype == dtype and batch.shape == (BATCH, 1, 200)
    exact = x.double().squeeze(1) @ weight.double().T + bias.double()
    assert torch.allclose(batch.squeeze(1).double(), exact, rtol=torch.finfo(dtype).eps, atol=1e-6)
    for count, picked, alone in picked_rows:
        assert torch.equal(alone, batch[picked]), count


@pytest.mark.parametrize("softcap", [None, 0.7], ids=["fused", "softcapped"])
def test_prefix_attention_in_bfloat16_gives_each_query_the_same_bits_in_any_batch(softcap):
    gen = torch.Generator().manual_seed(4)
    kv_heads, dim, prompt = 3, 32, 150
    keys = torch.randn(1, kv_heads, prompt, dim, generator=gen)
    values = torch.randn(1, kv_heads, prompt, dim, generator=gen)
    q = torch.randn(kv_heads, BATCH, dim, generator=gen).bfloat16()
    out, lse = prefix_attention(q, keys, values, dim**-0.5, softcap)
    exact = torch.softmax(_exact_scores(q, keys, dim**-0.5, softcap), dim=-1) @ values[0].double()
    assert torch.allclose(out.double(), exact, atol=1e-5)
    for count, picked in _subsets(5):
        alone, alone_lse = prefix_attention(q[:, picked], keys, values, dim**-0.5, softcap)
        assert torch.equal(alone, out[:, picked]) and torch.equal(alone_lse, lse[:, picked]), count


def _exact_scores(q, keys, scale, softcap):
    scores = q.double() @ keys[0].double().transpose(1, 2) * scale
    return scores if softcap is None else torch.tanh(scores / softcap) * softcap


def test_install_covers_half_precision_on_cpu_and_leaves_float32_alone():
    full = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=3)
    assert full.batch_invariance.mode == "none"
    assert "forward" not in vars(full.model.lm_head)
    half = random_backend("tiny", SizedTokenizer(), "cpu", torch.bfloat16, seed=3)
    assert half.batch_invariance.mode == "fixed_row_chunks"
    linears = [m for m in half.model.modules() if isinstance(m, torch.nn.Linear)]
    assert f"{len(linears)} linear layers" in half.batch_invariance.reason
    x = torch.randn(5, 1, half.model.config.hidden_size).bfloat16()
    head = half.model.lm_head
    assert torch.equal(head(x), batch_invariant.linear(x, head.weight.float(), None))
    env = fingerprint(half.identity, {"id": "e"}, "transformers")
    assert env["batch_invariance"] == half.batch_invariance.to_dict()


def test_each_step_of_each_row_has_the_same_logits_alone_and_in_the_batch_in_bfloat16():
    """Bitwise: every row's raw log-probabilities at every step, in a batch of 12 and alone."""
    backend = random_backend("tiny", SizedTokenizer(), "cpu", torch.bfloat16, seed=11)
    spec = SamplingSpec(seeds=6, temperatures=[0.0, 1.1], max_new_tokens=8)
    prompt = list(range(5, 70))
    together = decode_rows(backend, prompt, rows_for(spec), spec)
    for trace in together[::3]:
        alone = decode_rows(backend, prompt, [trace.row], spec)[0]
        assert alone.tokens == trace.tokens
        assert [s.raw_logprob for s in alone.steps] == [s.raw_logprob for s in trace.steps]
