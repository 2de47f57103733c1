"""Shared-prefix attention equals ordinary attention over the concatenated keys."""

from __future__ import annotations

import types

import pytest
import torch

from diagnose.decode.prompt_tree import PromptTree
from diagnose.decode.shared_prefix import PrefixLayer, shared_prefix_attention


def _prompt(layers: list[PrefixLayer | None], length: int, rows: int, generated: int) -> PromptTree:
    """A prompt of ``length`` tokens prefilled whole (a tree of one branch) whose ``rows`` rows have
    generated ``generated`` tokens before this step: they decode position ``length + generated``."""
    tree = PromptTree.whole(layers, length, rows)
    tree.step = generated
    return tree


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
    from diagnose.decode import shared_prefix

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
    shared = _prompt([None, PrefixLayer(prefix_k, prefix_v, 0)], prefix, batch, suffix - 1)
    got, _ = shared_prefix_attention(module, query, suffix_k, suffix_v, None, scaling=0.25, shared_prefix=shared)
    full_k = torch.cat([prefix_k.expand(batch, -1, -1, -1), suffix_k], dim=2)
    full_v = torch.cat([prefix_v.expand(batch, -1, -1, -1), suffix_v], dim=2)
    assert got.shape == (batch, 1, heads, dim)
    torch.testing.assert_close(got, _reference(query, full_k, full_v, 0.25), atol=1e-5, rtol=1e-5)


def test_each_row_depends_only_on_its_own_suffix():
    gen = torch.Generator().manual_seed(1)
    query = torch.randn(3, 4, 1, 8, generator=gen)
    layers = [PrefixLayer(torch.randn(1, 2, 10, 8, generator=gen), torch.randn(1, 2, 10, 8, generator=gen), 0)]
    suffix_k, suffix_v = torch.randn(3, 2, 4, 8, generator=gen), torch.randn(3, 2, 4, 8, generator=gen)
    module = types.SimpleNamespace(layer_idx=0)
    batch_out, _ = shared_prefix_attention(module, query, suffix_k, suffix_v, None,
                                           shared_prefix=_prompt(layers, 10, 3, 3))
    alone, _ = shared_prefix_attention(module, query[1:2], suffix_k[1:2], suffix_v[1:2], None,
                                       shared_prefix=_prompt(layers, 10, 1, 3))
    torch.testing.assert_close(batch_out[1:2], alone, atol=1e-6, rtol=1e-6)


@pytest.mark.models
def test_real_model_gives_the_same_tokens_with_and_without_prefix_copies():
    from diagnose.case import SamplingSpec
    from diagnose.models import ModelRegistry
    from diagnose.decode.engine import decode_rows, rows_for
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


def _masked_reference(query, keys, values, scale, window=None, softcap=None, sinks=None):
    """Eager attention of the last position over all keys, with a window, softcapping and sinks."""
    group = query.shape[1] // keys.shape[1]
    keys = keys.repeat_interleave(group, dim=1)
    values = values.repeat_interleave(group, dim=1)
    scores = (query @ keys.transpose(2, 3)) * scale
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if window is not None:
        positions = torch.arange(keys.shape[2])
        scores = scores.masked_fill(positions <= keys.shape[2] - 1 - window, float("-inf"))
    if sinks is not None:
        scores = torch.cat([scores, sinks.view(1, -1, 1, 1).expand(query.shape[0], -1, 1, 1)], dim=-1)
    weights = torch.softmax(scores, dim=-1)[..., : values.shape[2]]
    return (weights @ values).transpose(1, 2)


@pytest.mark.parametrize("fused", [True, False], ids=["fused-cpu-kernel", "two-products"])
@pytest.mark.parametrize(
    ("window", "softcap", "with_sinks", "kept"),
    [(5, None, False, None), (12, None, False, None), (30, None, False, None), (6, None, False, 5),
     (None, 2.0, False, None), (7, 3.0, True, None), (None, None, True, None)],
    ids=["window-in-suffix", "window-across-both", "window-past-prompt", "sliding-cache",
         "softcap", "window-softcap-sinks", "sinks"],
)
def test_windows_softcapping_and_sinks_match_eager_attention(window, softcap, with_sinks, kept, fused, monkeypatch):
    """The query sits at position prompt + suffix - 1; a window keeps keys at positions above
    position - window, in the prompt and the suffix alike. ``kept``: a sliding cache holds only the
    prompt's last keys, starting at P - kept."""
    from diagnose.decode import shared_prefix

    if not fused:
        monkeypatch.setattr(shared_prefix, "_CPU_FLASH", None)
    gen = torch.Generator().manual_seed(3)
    batch, heads, kv_heads, prompt, suffix, dim = 3, 6, 2, 20, 8, 8
    query = torch.randn(batch, heads, 1, dim, generator=gen)
    prefix_k = torch.randn(1, kv_heads, prompt, dim, generator=gen)
    prefix_v = torch.randn(1, kv_heads, prompt, dim, generator=gen)
    suffix_k = torch.randn(batch, kv_heads, suffix, dim, generator=gen)
    suffix_v = torch.randn(batch, kv_heads, suffix, dim, generator=gen)
    sinks = torch.randn(heads, generator=gen) if with_sinks else None
    start = prompt - kept if kept else 0
    layer = PrefixLayer(prefix_k[:, :, start:], prefix_v[:, :, start:], start)
    shared = _prompt([layer], prompt, batch, suffix - 1)
    module = types.SimpleNamespace(layer_idx=0)
    got, _ = shared_prefix_attention(module, query, suffix_k, suffix_v, None, shared_prefix=shared, scaling=0.3,
                                     sliding_window=window, softcap=softcap, s_aux=sinks)
    full_k = torch.cat([prefix_k.expand(batch, -1, -1, -1), suffix_k], dim=2)
    full_v = torch.cat([prefix_v.expand(batch, -1, -1, -1), suffix_v], dim=2)
    want = _masked_reference(query, full_k, full_v, 0.3, window, softcap, sinks)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_a_keyword_it_does_not_implement_is_refused_not_dropped():
    from diagnose.decode.shared_prefix import UnsupportedAttention, unsupported

    assert unsupported({"position_bias": torch.ones(1), "dropout": 0.0, "sliding_window": None,
                        "use_cache": True, "output_attentions": False}) == ["position_bias"]
    assert unsupported({"dropout": 0.1, "output_attentions": True}) == ["dropout", "output_attentions"]
    gen = torch.Generator().manual_seed(4)
    query, keys = torch.randn(1, 2, 1, 4, generator=gen), torch.randn(1, 2, 3, 4, generator=gen)
    shared = _prompt([PrefixLayer(keys, keys, 0)], 3, 1, 0)
    with pytest.raises(UnsupportedAttention, match="position_bias"):
        shared_prefix_attention(types.SimpleNamespace(layer_idx=0), query, keys, keys, None,
                                shared_prefix=shared, position_bias=torch.zeros(1))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("fused", [True, False], ids=["fused-cpu-kernel", "two-products"])
def test_half_precision_output_is_rounded_once(dtype, fused, monkeypatch):
    """In half precision the result is exact arithmetic rounded once: at most half a unit in the
    last place (plus float32's own error) from float64 on the same inputs, as a fused kernel's."""
    from diagnose.decode import shared_prefix

    if not fused:
        monkeypatch.setattr(shared_prefix, "_CPU_FLASH", None)
    gen = torch.Generator().manual_seed(5)
    batch, heads, kv_heads, prompt, suffix, dim = 4, 8, 2, 300, 6, 32
    parts = [torch.randn(1, kv_heads, prompt, dim, generator=gen), torch.randn(1, kv_heads, prompt, dim, generator=gen),
             torch.randn(batch, kv_heads, suffix, dim, generator=gen), torch.randn(batch, kv_heads, suffix, dim, generator=gen)]
    prefix_k, prefix_v, suffix_k, suffix_v = (p.to(dtype) for p in parts)
    query = torch.randn(batch, heads, 1, dim, generator=gen).to(dtype)
    shared = _prompt([PrefixLayer(prefix_k, prefix_v, 0)], prompt, batch, suffix - 1)
    got, _ = shared_prefix_attention(types.SimpleNamespace(layer_idx=0), query, suffix_k, suffix_v, None,
                                     shared_prefix=shared, scaling=0.2)
    full_k = torch.cat([prefix_k.expand(batch, -1, -1, -1), suffix_k], dim=2).double()
    full_v = torch.cat([prefix_v.expand(batch, -1, -1, -1), suffix_v], dim=2).double()
    exact = _reference(query.double(), full_k, full_v, 0.2)
    half_unit = torch.finfo(dtype).eps / 2 * 2.0 ** torch.floor(torch.log2(exact.abs()))
    assert got.dtype == dtype
    assert ((got.double() - exact).abs() <= half_unit * 1.01 + 1e-7).all()
