"""Attention over one shared prompt prefix plus a per-row suffix, without copying the prefix.

After a single prefill, the prompt's keys and values (1, kv_heads, P, d) are
kept once per layer. Each decode step, every row's query attends to

* the shared prefix: one attention per kv head, with all rows' queries stacked
  along the query dimension, so the prefix is read once per step for the whole
  batch and never expanded to B copies (on CPU through PyTorch's fused attention
  kernel, which also returns each query's log-sum-exp);
* its own suffix (the tokens it generated so far, from an ordinary per-row cache).

Both blocks share one softmax: the prefix's normalised output is weighted by its
log-sum-exp against the suffix's scores (a joint max and normaliser), so the
result equals attention over the concatenated keys.

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

    # (B, H, 1, d) -> (kv_heads, B*group, d): rows become the M dimension of one product per kv head.
    q = query.view(batch, kv_heads, group, dim).permute(1, 0, 2, 3).reshape(kv_heads, batch * group, dim)
    prefix_out, prefix_lse = _prefix_attention(q, prefix_keys, prefix_values, scale)  # (kvh, B*g, d), (kvh, B*g, 1)

    q_rows = query.view(batch, kv_heads, group, dim)
    suffix_scores = torch.matmul(q_rows, key.transpose(2, 3)) * scale  # (B, kvh, g, S)
    suffix_scores = suffix_scores.permute(1, 0, 2, 3).reshape(kv_heads, batch * group, -1)

    # One softmax over both blocks: the prefix enters as its normalised output
    # weighted by its log-sum-exp, against a joint maximum.
    top = torch.maximum(prefix_lse, suffix_scores.amax(dim=-1, keepdim=True))
    prefix_weight = torch.exp(prefix_lse - top)
    suffix_weights = torch.exp(suffix_scores - top)
    total = prefix_weight + suffix_weights.sum(dim=-1, keepdim=True)
    out = prefix_out * prefix_weight  # (kvh, B*g, d)
    suffix_weights = suffix_weights.reshape(kv_heads, batch, group, -1).permute(1, 0, 2, 3)
    out_suffix = torch.matmul(suffix_weights, value)  # (B, kvh, g, d)
    out = out.reshape(kv_heads, batch, group, dim).permute(1, 0, 2, 3) + out_suffix
    out = out / total.reshape(kv_heads, batch, group, 1).permute(1, 0, 2, 3)
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


#: PyTorch's fused CPU attention kernel (the one SDPA runs on CPU), called directly
#: because it also returns the log-sum-exp that joins the prefix with the suffix.
#: Absent from a build, or off the CPU, the same result comes from two matrix products.
_CPU_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)


def _prefix_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, scale: float):
    """Attention of queries (kvh, M, d) over the prefix (1, kvh, P, d) alone.

    Returns the normalised output (kvh, M, d) and each query's log-sum-exp of
    its scores (kvh, M, 1), in float32 or the inputs' dtype.
    """
    if _CPU_FLASH is not None and q.device.type == "cpu" and q.dtype == keys.dtype:
        out, lse = _CPU_FLASH(q.unsqueeze(0), keys, values, 0.0, False, scale=scale)[:2]
        return out[0], lse[0].unsqueeze(-1).to(out.dtype)
    scores = torch.bmm(q, keys[0].transpose(1, 2)) * scale  # (kvh, M, P)
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)
    return torch.bmm(torch.exp(scores - lse), values[0]), lse


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
