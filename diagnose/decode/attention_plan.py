"""Which attention path a model decodes with: the shared prefix, or per-row prompt copies.

The shared-prefix kernel (:mod:`diagnose.decode.shared_prefix`) states what it
implements; this module reads what the model's layers need and picks the path,
with the reason, for the report's ``environment.attention`` (contract section 7):

1. the stock attention is one the prefill can fall back to (SDPA or eager);
2. the cache keeps plain keys and values per layer (full or sliding window), not
   a recurrent, compressed, chunked or shared state;
3. a two-token probe forward records what every layer passes to its attention
   function: every layer must attend through transformers' attention interface
   and receive the keywords of the model call (the shared prefix travels as one),
   call it once per step with exactly the keys and values its cache holds,
   a sliding cache's window must be the one its layer passes, and every keyword
   with a value must be one the kernel implements. An unknown keyword refuses the
   shared path; it is never dropped.

Refused, the model decodes with prompt copies and its own attention, exactly as
transformers runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch

from diagnose.decode.shared_prefix import STOCKS, stock_attention, unsupported

Path = Literal["shared_prefix", "prompt_copies"]


@dataclass(frozen=True)
class AttentionPlan:
    path: Path
    reason: str

    def to_dict(self) -> dict[str, str]:
        """The report's ``environment.attention``."""
        return {"path": self.path, "reason": self.reason}


def stock_implementation(config: Any) -> str | None:
    """The attention implementation to load a model with: eager where its layers softcap their
    scores (SDPA cannot), else None (transformers' own choice)."""
    text = getattr(config, "get_text_config", lambda: config)()
    return "eager" if getattr(text, "attn_logit_softcapping", None) is not None else None


def plan_attention(model: Any) -> AttentionPlan:
    """The path ``model`` may decode with, and why."""
    stock = getattr(model.config, "_attn_implementation", None)
    if stock not in STOCKS:
        return _copies(f"the model runs {stock!r} attention; the shared-prefix kernel stands in for sdpa or eager only")
    try:
        calls, cache = _probe(model, stock)
    except TypeError as exc:  # a forward that takes no extra keywords cannot carry the shared prefix
        return _copies(f"the model's forward does not pass keywords on to its layers ({exc})")
    plain = _plain_cache_layers(cache)
    if isinstance(plain, str):
        return _copies(plain)
    missing = sorted(set(range(len(cache.layers))) - set(calls))
    if missing:
        return _copies(f"layers {_span(missing)} do not attend through transformers' attention interface "
                       "with the model call's keywords")
    windows: dict[int, int] = {}
    features: set[str] = set()
    for layer, made in sorted(calls.items()):
        if len(made) != 1:
            return _copies(f"layer {layer} calls its attention {len(made)} times per step")
        kwargs = made[0].kwargs
        if not made[0].sees(cache.layers[layer]):
            return _copies(f"layer {layer} attends to other keys or values than its cache holds "
                           "(it transforms them after the cache)")
        refused = unsupported(kwargs)
        if refused:
            return _copies(f"layer {layer} passes {', '.join(refused)} to its attention, "
                           "which the shared-prefix kernel does not implement")
        window = kwargs.get("sliding_window")
        kept = plain.get(layer)
        if kept is not None and kept != window:
            return _copies(f"layer {layer}'s cache keeps a {kept}-token window but the layer passes {window!r}")
        if window is not None:
            windows[layer] = int(window)
        if kwargs.get("softcap") is not None:
            features.add(f"logit softcapping {kwargs['softcap']:g}")
        if kwargs.get("s_aux") is not None:
            features.add("attention sinks")
    if windows:
        sizes = ", ".join(str(w) for w in sorted(set(windows.values())))
        features.add(f"sliding windows ({sizes} tokens) on {len(windows)} of {len(cache.layers)} layers")
    needs = "; ".join(sorted(features)) or "plain causal attention"
    return AttentionPlan("shared_prefix", f"the kernel implements what every layer passes: {needs}")


@dataclass(frozen=True)
class Call:
    """One call of a layer's attention in the probe."""

    kwargs: dict[str, Any]
    key: torch.Tensor
    value: torch.Tensor

    def sees(self, cached: Any) -> bool:
        """Whether the call attended to exactly the keys and values its cache layer holds
        (the shared prefix is taken from the cache)."""
        return all(a.shape == b.shape and torch.equal(a, b)
                   for a, b in ((self.key, cached.keys), (self.value, cached.values)))


def _copies(reason: str) -> AttentionPlan:
    return AttentionPlan("prompt_copies", reason)


def _span(layers: list[int]) -> str:
    return ", ".join(map(str, layers[:6])) + (" ..." if len(layers) > 6 else "")


def _plain_cache_layers(cache: Any) -> dict[int, int | None] | str:
    """Per layer, the window its cache keeps (None: all); or why the cache is not plain keys and values."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    windows: dict[int, int | None] = {}
    for index, layer in enumerate(getattr(cache, "layers", None) or []):
        if type(layer) is DynamicSlidingWindowLayer:
            windows[index] = int(layer.sliding_window)
        elif type(layer) is DynamicLayer:
            windows[index] = None
        else:
            return f"layer {index}'s cache is a {type(layer).__name__}, not plain keys and values"
    if not windows:
        return f"the model's cache ({type(cache).__name__}) holds no per-layer keys and values"
    return windows


@torch.inference_mode()
def _probe(model: Any, stock: str) -> tuple[dict[int, list["Call"]], Any]:
    """One two-token forward with a recording attention function that runs the stock one.

    Returns each layer's calls (by ``layer_idx``), and the cache the forward filled.
    """
    from transformers import AttentionInterface, DynamicCache
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    calls: dict[int, list[Call]] = {}
    mark = object()  # stands for the shared prefix: a layer that does not receive it is not reached

    def record(module, query, key, value, attention_mask, shared_prefix=None, **kwargs):
        if shared_prefix is mark:
            calls.setdefault(getattr(module, "layer_idx", -1), []).append(Call(kwargs, key, value))
        return stock_attention(module, stock)(module, query, key, value, attention_mask, **kwargs)

    name = f"diagnose_probe_{stock}"
    AttentionInterface.register(name, record)
    AttentionMaskInterface.register(name, ALL_MASK_ATTENTION_FUNCTIONS[stock])
    device = next(model.parameters()).device
    cache = DynamicCache(config=model.config)
    model.set_attn_implementation(name)
    try:
        model(input_ids=torch.zeros((1, 2), dtype=torch.long, device=device), cache=cache, use_cache=True,
              shared_prefix=mark)
    finally:
        model.set_attn_implementation(stock)
    return calls, cache
