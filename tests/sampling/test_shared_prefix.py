"""Shared-prefix attention equals ordinary attention over the concatenated keys."""

from __future__ import annotations

import types

import pytest
import torch

from diagnose.sampling.shared_prefix import shared_prefix_attention


def _reference(query, keys, values, scale):
    """Plain attention, kv heads repeated for grouped queries: (B, H, 1, d) -> (B, 1, H, d)."""
    group = query.shape[1] // keys.shape[1]
    keys = keys.repeat_interleave(group, dim=1)
    values = values.repeat_interleave(group, dim=1)
    weights = torch.softmax((query @ keys.transpose(2, 3)) * scale, dim=-1)
    return (weights @ values).transpose(1, 2)


@pytest.mark.parametrize("fused", [True, False], ids=["fused-cpu-kernel", "two-products"])
@pytest.mark.parametrize(("batch", "heads", "kv_heads", "prefix", "suffix"), [(5, 9, 3, 40, 7), (1, 4, 4, 3, 1)])
def test_matches_attention_over_concatenated_keys(batch, heads, kv_heads, prefix, suffix, fused, monkeypatch):
    from diagnose.sampling import shared_prefix

    if not fused:
        monkeypatch.setattr(shared_prefix, "_CPU_FLASH", None)
    elif shared_prefix._CPU_FLASH is None:
        pytest.skip("this torch build has no fused CPU attention kernel")
    gen = torch.Generator().manual_seed(0)
    dim = 16
    query = torch.randn(batch, heads, 1, dim, generator=gen)
    prefix_k = torch.randn(1, kv_heads, prefix, dim, generator=gen)
    prefix_v = torch.randn(1, kv_heads, prefix, dim, generator=gen)
    suffix_k = torch.randn(batch, kv_heads, suffix, dim, generator=gen)
    suffix_v = torch.randn(batch, kv_heads, suffix, dim, generator=gen)
    module = types.SimpleNamespace(layer_idx=1)
    shared = [None, (prefix_k, prefix_v)]
    got, _ = shared_prefix_attention(module, query, suffix_k, suffix_v, None, scaling=0.25, shared_prefix=shared)
    full_k = torch.cat([prefix_k.expand(batch, -1, -1, -1), suffix_k], dim=2)
    full_v = torch.cat([prefix_v.expand(batch, -1, -1, -1), suffix_v], dim=2)
    assert got.shape == (batch, 1, heads, dim)
    torch.testing.assert_close(got, _reference(query, full_k, full_v, 0.25), atol=1e-5, rtol=1e-5)


def test_each_row_depends_only_on_its_own_suffix():
    gen = torch.Generator().manual_seed(1)
    query = torch.randn(3, 4, 1, 8, generator=gen)
    prefix = [(torch.randn(1, 2, 10, 8, generator=gen), torch.randn(1, 2, 10, 8, generator=gen))]
    suffix_k, suffix_v = torch.randn(3, 2, 4, 8, generator=gen), torch.randn(3, 2, 4, 8, generator=gen)
    module = types.SimpleNamespace(layer_idx=0)
    batch_out, _ = shared_prefix_attention(module, query, suffix_k, suffix_v, None, shared_prefix=prefix)
    alone, _ = shared_prefix_attention(module, query[1:2], suffix_k[1:2], suffix_v[1:2], None, shared_prefix=prefix)
    torch.testing.assert_close(batch_out[1:2], alone, atol=1e-6, rtol=1e-6)


@pytest.mark.models
def test_real_model_gives_the_same_tokens_with_and_without_prefix_copies():
    from diagnose.case import SamplingSpec
    from diagnose.models import ModelRegistry
    from diagnose.sampling.engine import decode_rows, rows_for
    from diagnose.settings import ModelSettings

    backend = ModelRegistry(ModelSettings()).generator()
    assert backend.shared_prefix, "the embedded Llama-family model supports the attention interface"
    prompt = backend.chat_ids([{"role": "user", "content": "Document: The bridge opened in 1937.\nWhen did the bridge open?"}])
    spec = SamplingSpec(seeds=3, temperatures=[0.0, 0.9], max_new_tokens=12)
    shared = decode_rows(backend, prompt, rows_for(spec), spec)
    backend.shared_prefix = False
    try:
        copied = decode_rows(backend, prompt, rows_for(spec), spec)
    finally:
        backend.shared_prefix = True
    assert [t.tokens for t in shared] == [t.tokens for t in copied]
    for a, b in zip(shared, copied):
        for x, y in zip(a.steps, b.steps):
            assert x.raw_logprob == pytest.approx(y.raw_logprob, abs=1e-4)
