"""Attention over one shared prompt prefix plus a per-row suffix, without copying the prefix.

After a single prefill, the prompt's keys and values (1, kv_heads, P, d) are
kept once per layer. Each decode step, every row's query attends to

* the shared prefix: one matrix product per kv head, with all rows' queries
  stacked along the M dimension, so the prefix is read once per step for the
  whole batch and never expanded to B copies;
* its own suffix (the tokens it generated so far, from an ordinary per-row cache).

Both score blocks share one softmax (joint max and normaliser), so the result
equals attention over the concatenated keys.

It plugs into transformers through ``AttentionInterface``: models whose
attention layers dispatch on ``config._attn_implementation`` (Llama, Qwen,
Mistral, Gemma, ... in transformers 5) get it by name. Prefill and any call
without the ``shared_prefix`` keyword fall back to SDPA unchanged.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

NAME = "diagnose_shared_prefix"

PrefixKV = Sequence[tuple[torch.Tensor, torch.Tensor]]
"""Per layer: keys and values of the prompt, each (1, kv_heads, P, head_dim)."""


def shared_prefix_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    shared_prefix: PrefixKV | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """query (B, H, 1, d); key/value: the suffix cache (B, kv_heads, S, d). Returns (B, 1, H, d)."""
    if shared_prefix is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    prefix_keys, prefix_values = shared_prefix[module.layer_idx]
    batch, heads, q_len, dim = query.shape
    if q_len != 1:
        raise ValueError("shared-prefix attention decodes one position per step")
    kv_heads = prefix_keys.shape[1]
    group = heads // kv_heads
    scale = scaling if scaling is not None else dim**-0.5

    # (B, H, 1, d) -> (kv_heads, B*group, d): rows become the M dimension of one bmm per kv head.
    q = query.view(batch, kv_heads, group, dim).permute(1, 0, 2, 3).reshape(kv_heads, batch * group, dim)
    prefix_scores = torch.bmm(q, prefix_keys[0].transpose(1, 2)) * scale  # (kvh, B*g, P)

    q_rows = query.view(batch, kv_heads, group, dim)
    suffix_scores = torch.matmul(q_rows, key.transpose(2, 3)) * scale  # (B, kvh, g, S)
    suffix_scores = suffix_scores.permute(1, 0, 2, 3).reshape(kv_heads, batch * group, -1)

    # One softmax over both blocks, without concatenating them: a joint max and normaliser.
    top = torch.maximum(prefix_scores.amax(dim=-1, keepdim=True), suffix_scores.amax(dim=-1, keepdim=True))
    prefix_weights = torch.exp(prefix_scores - top)
    suffix_weights = torch.exp(suffix_scores - top)
    total = prefix_weights.sum(dim=-1, keepdim=True) + suffix_weights.sum(dim=-1, keepdim=True)
    out = torch.bmm(prefix_weights, prefix_values[0])  # (kvh, B*g, d)
    suffix_weights = suffix_weights.reshape(kv_heads, batch, group, -1).permute(1, 0, 2, 3)
    out_suffix = torch.matmul(suffix_weights, value)  # (B, kvh, g, d)
    out = out.reshape(kv_heads, batch, group, dim).permute(1, 0, 2, 3) + out_suffix
    out = out / total.reshape(kv_heads, batch, group, 1).permute(1, 0, 2, 3)
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


def install(model: Any) -> bool:
    """Register the attention function and switch ``model`` to it; False when unsupported."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    if getattr(model.config, "_attn_implementation", None) not in ("sdpa", "eager", NAME):
        return False
    AttentionInterface.register(NAME, shared_prefix_attention)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, AttributeError, NotImplementedError):
        return False
    return model.config._attn_implementation == NAME
