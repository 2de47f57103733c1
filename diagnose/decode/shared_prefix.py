"""Attention over one shared prompt prefix plus a per-row suffix, without copying the prefix.

After a single prefill, the prompt's keys and values (1, kv_heads, P, d) are
kept once per layer, in a prompt tree (:class:`~diagnose.decode.prompt_tree.PromptTree`:
one prompt is its one branch; several share a root). Each decode step, every
row's query attends to

* the shared prefix (the tree's ``attend``: the :class:`Prefix` this function takes):
  one attention per kv head, with all rows' queries stacked along the query
  dimension, so the prefix is read once per step for the whole batch and never
  expanded to B copies (through PyTorch's fused attention kernels, which also
  return each query's log-sum-exp: the CPU flash kernel, or the memory-efficient
  one on CUDA);
* its own suffix (the tokens it generated so far, from an ordinary per-row cache).

Both blocks share one softmax, merged in float32: the prefix's normalised output
is weighted by its log-sum-exp against the suffix's scores (a joint max and
normaliser), so the result equals attention over the concatenated keys. In half
precision both blocks are computed in float32 too and the output is rounded once,
as a fused kernel over the whole sequence rounds it.

What the kernel implements (:data:`IMPLEMENTED`), beside plain causal attention:

* ``scaling``: the layer's own score scale;
* ``sliding_window``: keys at positions in (position - window, position], as
  transformers' sliding masks; the window is measured from each row's own
  position (the prompt tree's ``attend`` cuts the prompt's keys, this function
  the row's own);
* ``softcap``: scores become ``softcap * tanh(scores / softcap)`` (Gemma 2), on
  the prefix through two matrix products instead of the fused kernel;
* ``s_aux``: one sink logit per head that joins the softmax's normaliser and
  carries no value (gpt-oss).

Anything else a layer passes with a value (:func:`unsupported`) is refused, never
dropped: :mod:`diagnose.decode.attention_plan` reads it before choosing this
path, and a call that still carries one raises :class:`UnsupportedAttention`.

It plugs into transformers through ``AttentionInterface`` under one name per
stock implementation (:func:`registered_name`): prefill and any call without the
``shared_prefix`` keyword run the model's own attention (SDPA, or the model's
eager function where it needs one) unchanged.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import torch

from diagnose.decode import batch_invariant

NAME = "diagnose_shared_prefix"
"""The registered name when the model's stock attention is SDPA."""

STOCKS = ("sdpa", "eager")
"""Stock implementations the prefill may fall back to."""

IMPLEMENTED = ("scaling", "sliding_window", "softcap", "s_aux")
"""Keywords of the attention call that change the result and that this kernel implements."""

INERT = frozenset({
    "shared_prefix", "position_ids", "cache_position", "use_cache", "return_dict",
    "output_hidden_states", "output_router_logits", "is_causal",
})  # fmt: skip
"""Keywords that flow through the attention call without changing a decode step's result
(``is_causal`` only matters for several query positions; a decode step has one)."""


class UnsupportedAttention(RuntimeError):
    """The attention call carries something the shared-prefix kernel does not implement."""


def unsupported(kwargs: dict[str, Any]) -> list[str]:
    """Names of the keywords (with a value) that would change the result and are not implemented."""
    names = []
    for name, value in kwargs.items():
        if name in INERT or name in IMPLEMENTED or value is None or value is False:
            continue
        if name == "dropout" and value == 0:
            continue
        names.append(name)
    return sorted(names)


@dataclass(frozen=True)
class PrefixLayer:
    keys: torch.Tensor
    """(1, kv_heads, L, d): the prompt's keys that this layer's cache kept (any floating dtype;
    float32 spares a conversion per step)."""
    values: torch.Tensor
    start: int
    """Position of the first kept key: 0, or P - (window - 1) where a sliding cache dropped the rest."""


def prefix_layers(cache: Any, prompt: int) -> list[PrefixLayer]:
    """The prompt's keys and values of each layer of a prefilled cache, kept in float32: the
    prefix attention computes in float32 (:func:`_prefix_attention`), so half-precision keys are
    converted once per prompt here, not at every decode step."""
    return [PrefixLayer(layer.keys.float(), layer.values.float(), prompt - layer.keys.shape[2])
            for layer in cache.layers]


class Prefix(Protocol):
    """What the kernel needs of the prompt's stored keys and values: the rows' attention over them
    (:class:`~diagnose.decode.prompt_tree.PromptTree` is the one implementation)."""

    def attend(self, layer_index: int, q: torch.Tensor, scale: float, softcap: float | None,
               window: int | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention of the rows' queries (kv_heads, B*group, d) over this layer's prefix: normalised
        output (kv_heads, B*group, dv) and log-sum-exp (kv_heads, B*group, 1), as :func:`prefix_attention`."""


def registered_name(stock: str) -> str:
    return NAME if stock == "sdpa" else f"{NAME}_{stock}"


def stock_attention(module: torch.nn.Module, stock: str) -> Callable:
    """The model's own attention function: SDPA, or the eager function of the module's modeling file."""
    if stock == "sdpa":
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward
    return sys.modules[type(module).__module__].eager_attention_forward


def shared_prefix_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    shared_prefix: Prefix | None = None,
    stock: str = "sdpa",
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """query (B, H, 1, d); key/value: the suffix cache (B, kv_heads, S, d). Returns (B, 1, H, d)."""
    if shared_prefix is None:
        return stock_attention(module, stock)(module, query, key, value, attention_mask, **kwargs)
    refused = unsupported(kwargs)
    if refused:
        raise UnsupportedAttention(f"the attention layer passes {', '.join(refused)}: not implemented")
    batch, heads, q_len, dim = query.shape
    if q_len != 1:
        raise ValueError("shared-prefix attention decodes one position per step")
    scaling = kwargs.get("scaling")
    scale = scaling if scaling is not None else dim**-0.5
    softcap = kwargs.get("softcap")
    window = kwargs.get("sliding_window")
    if window is not None:  # the suffix ends at the query's own position
        key, value = key[:, :, -window:], value[:, :, -window:]
    kv_heads = key.shape[1]
    group = heads // kv_heads

    # (B, H, 1, d) -> (kv_heads, B*group, d): rows become the M dimension of one product per kv head.
    q = query.view(batch, kv_heads, group, dim).permute(1, 0, 2, 3).reshape(kv_heads, batch * group, dim)
    prefix_out, prefix_lse = shared_prefix.attend(module.layer_idx, q, scale, softcap, window)

    q_rows = query.view(batch, kv_heads, group, dim).float()
    suffix_scores = _capped(torch.matmul(q_rows, key.float().transpose(2, 3)) * scale, softcap)  # (B, kvh, g, S)
    suffix_scores = suffix_scores.permute(1, 0, 2, 3).reshape(kv_heads, batch * group, -1)

    # One softmax over both blocks (and the sinks): the prefix enters as its normalised
    # output weighted by its log-sum-exp, against a joint maximum, all in float32.
    top = torch.maximum(prefix_lse, suffix_scores.amax(dim=-1, keepdim=True))
    sinks = kwargs.get("s_aux")
    if sinks is not None:
        sink = sinks.float().view(kv_heads, 1, group).expand(kv_heads, batch, group).reshape(kv_heads, -1, 1)
        top = torch.maximum(top, sink)
    prefix_weight = torch.exp(prefix_lse - top)
    suffix_weights = torch.exp(suffix_scores - top)
    total = prefix_weight + suffix_weights.sum(dim=-1, keepdim=True)
    if sinks is not None:
        total = total + torch.exp(sink - top)
    out = prefix_out * prefix_weight  # (kvh, B*g, dv)
    dv = out.shape[-1]
    suffix_weights = suffix_weights.reshape(kv_heads, batch, group, -1).permute(1, 0, 2, 3)
    out_suffix = torch.matmul(suffix_weights, value.float())  # (B, kvh, g, dv)
    out = out.reshape(kv_heads, batch, group, dv).permute(1, 0, 2, 3) + out_suffix
    out = out / total.reshape(kv_heads, batch, group, 1).permute(1, 0, 2, 3)
    return out.reshape(batch, heads, 1, dv).transpose(1, 2).to(query.dtype).contiguous(), None


def _capped(scores: torch.Tensor, softcap: float | None) -> torch.Tensor:
    return scores if softcap is None else torch.tanh(scores / softcap) * softcap


#: PyTorch's fused CPU attention kernel (the one SDPA runs on CPU), called directly
#: because it also returns the log-sum-exp that joins the prefix with the suffix.
_CPU_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
#: PyTorch's memory-efficient CUDA kernel, asked for the log-sum-exp (untested on a GPU here).
_CUDA_EFFICIENT = getattr(torch.ops.aten, "_scaled_dot_product_efficient_attention", None)


def prefix_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, scale: float,
                      softcap: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of queries (kvh, M, d) over the prefix (1, kvh, L, d) alone.

    Returns the normalised output (kvh, M, dv) and each query's log-sum-exp of its
    scores (kvh, M, 1), both float32. An empty prefix (a window that starts past
    it) gives zeros and a log-sum-exp of -inf, which the merge weighs as nothing.
    Softcapping needs the scores themselves, so it takes the two-product path.

    Half-precision inputs are computed in float32: a kernel run in half precision
    rounds its output, and the merge would round it again (twice the stock
    attention's error, measured by ``diagnose check-engine --dtype bfloat16``);
    in float32 the attention output is rounded once, when the layer gets it back.
    Where products are batch-invariant (:mod:`diagnose.decode.batch_invariant`), the
    queries go to the kernel in chunks of a fixed count.
    """
    kv_heads, m = q.shape[0], q.shape[1]
    if keys.shape[2] == 0:
        return q.new_zeros(kv_heads, m, values.shape[-1], dtype=torch.float32), q.new_full(
            (kv_heads, m, 1), float("-inf"), dtype=torch.float32)
    invariant = batch_invariant.applies(q.dtype, q.device)
    q, keys, values = q.float(), keys.float(), values.float()
    if invariant:  # the kernels block their queries by the rows' count: a fixed count per call
        return batch_invariant.in_fixed_row_chunks(
            lambda chunk: _float32_prefix_attention(chunk, keys, values, scale, softcap), q, dim=1)
    return _float32_prefix_attention(q, keys, values, scale, softcap)


def _float32_prefix_attention(q, keys, values, scale, softcap) -> tuple[torch.Tensor, torch.Tensor]:
    if softcap is None:
        fused = _fused_prefix_attention(q, keys, values, scale)
        if fused is not None:
            return fused
    scores = _capped(torch.bmm(q, keys[0].transpose(1, 2)) * scale, softcap)  # (kvh, M, L)
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)
    return torch.bmm(torch.exp(scores - lse), values[0]), lse


def _fused_prefix_attention(q, keys, values, scale) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The fused kernel for the device, or None where none applies."""
    m = q.shape[1]
    if q.shape[-1] != values.shape[-1]:  # keys and values of other sizes (MLA): the fused kernels need one
        return None
    if q.device.type == "cpu" and _CPU_FLASH is not None:
        out, lse = _CPU_FLASH(q.unsqueeze(0), keys, values, 0.0, False, scale=scale)[:2]
        return out[0], lse[0].unsqueeze(-1)
    if q.device.type == "cuda" and _CUDA_EFFICIENT is not None and _cuda_efficient_ok(q.dtype, q.shape[-1], values.shape[-1]):
        out, lse = _CUDA_EFFICIENT(q.unsqueeze(0), keys, values, None, True, 0.0, False, scale=scale)[:2]
        # The kernel pads the log-sum-exp's query dimension (to a multiple of 32).
        return out[0], lse[0, :, :m].unsqueeze(-1)
    return None


@functools.cache
def _cuda_efficient_ok(dtype: torch.dtype, qk_dim: int, v_dim: int) -> bool:
    """Whether the memory-efficient kernel runs here for these head sizes: tried once on tiny inputs."""
    try:
        q = torch.zeros(1, 1, 2, qk_dim, dtype=dtype, device="cuda")
        v = torch.zeros(1, 1, 3, v_dim, dtype=dtype, device="cuda")
        _CUDA_EFFICIENT(q, q[:, :, :1].expand(1, 1, 3, qk_dim).contiguous(), v, None, True, 0.0, False, scale=1.0)
    except RuntimeError:
        return False
    return True


def install(model: Any, stock: str) -> str:
    """Register the attention function for ``stock`` and switch ``model`` to it; returns its name.

    Whether the model may use it is :func:`diagnose.decode.attention_plan.plan_attention`'s call.
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    name = registered_name(stock)
    AttentionInterface.register(name, functools.partial(shared_prefix_attention, stock=stock))
    AttentionMaskInterface.register(name, ALL_MASK_ATTENTION_FUNCTIONS[stock])
    model.set_attn_implementation(name)
    return name
