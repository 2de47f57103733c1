"""Decode several prompts, each with its own rows, in as few batches as memory allows.

:func:`decode_prompts` packs the prompts, in order, into batches whose key/value
cache fits a memory budget (:func:`kv_bytes_per_token` x the tokens a batch holds:
its root once, each branch once, each row's generated tokens, and while the
branches prefill, a root copy and a padded branch each), and decodes each batch as one prompt tree
(:mod:`diagnose.decode.prompt_tree`) with the engine's own loop
(:func:`~diagnose.decode.engine.decode_session`): every row gives what its
prompt decoded alone gives. A backend without shared-prefix attention (the
attention plan refused the model, a test double, a server) decodes the prompts
one by one with :func:`~diagnose.decode.engine.decode_rows`.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from diagnose.case import SamplingSpec
from diagnose.decode.engine import DecodeStats, Row, StepCallback, Trace, decode_rows, decode_session
from diagnose.decode.prompt_tree import TreeSession, prefill_tree, root_length

CPU_MEMORY_SHARE = 0.25
"""On CPU, the budget is this share of the memory available when the batch is packed."""
CUDA_MEMORY_SHARE = 0.5
"""On CUDA, this share of the device's free memory."""


@dataclass(frozen=True)
class PromptRows:
    prompt_ids: Sequence[int]
    rows: Sequence[Row]
    spec: SamplingSpec | None = None
    """This prompt's sampling settings (None: the batch's); its temperatures are its rows'."""


def tree_capable(backend: Any) -> bool:
    """Whether the backend decodes in-process with shared-prefix attention (a prompt tree then applies)."""
    return bool(getattr(backend, "shared_prefix", False)) and getattr(backend, "model", None) is not None


def decode_prompts(
    backend: Any,
    prompts: Sequence[PromptRows],
    spec: SamplingSpec,
    on_step: StepCallback | None = None,
    stats: DecodeStats | None = None,
    budget_bytes: int | None = None,
) -> list[list[Trace]]:
    """Each prompt's traces, in its rows' order (see the module docstring); ``spec``: the sampling
    settings of the prompts that carry none of their own."""
    stats = stats if stats is not None else DecodeStats()
    out: list[list[Trace]] = [[] for _ in prompts]
    todo = [i for i, p in enumerate(prompts) if p.rows]
    specs = [p.spec or spec for p in prompts]
    if not tree_capable(backend):
        for i in todo:
            out[i] = decode_rows(backend, prompts[i].prompt_ids, prompts[i].rows, specs[i], on_step, stats)
        return out
    budget = budget_bytes if budget_bytes is not None else default_budget(backend.device)
    per_token = kv_bytes_per_token(backend.model)
    longest = max((specs[i].max_new_tokens for i in todo), default=0)
    for batch in pack([prompts[i] for i in todo], longest, budget // per_token):
        chosen = [prompts[todo[i]] for i in batch]
        chosen_specs = [specs[todo[i]] for i in batch]
        if len(chosen) == 1:
            traces = decode_rows(backend, chosen[0].prompt_ids, chosen[0].rows, chosen_specs[0], on_step, stats)
        else:
            started = time.perf_counter()
            tree, logits = prefill_tree(backend.model, [p.prompt_ids for p in chosen], [len(p.rows) for p in chosen],
                                        backend.device)
            stats.prefill_seconds += time.perf_counter() - started
            traces = decode_session(TreeSession(backend.model, tree, backend.device), logits,
                                    [(p.prompt_ids, p.rows) for p in chosen], chosen_specs, backend.eos_token_ids,
                                    on_step, stats)
        for i, prompt in zip(batch, chosen):
            out[todo[i]], traces = traces[: len(prompt.rows)], traces[len(prompt.rows):]
    return out


@torch.inference_mode()
def first_logits(backend: Any, prompts: Sequence[Sequence[int]], budget_bytes: int | None = None) -> list[torch.Tensor]:
    """Each prompt's next-token logits (FloatTensor[V]) after its prefill: the branches of a
    batch in as few forwards as :func:`~diagnose.decode.prompt_tree.branch_chunks` allows."""
    out: list[torch.Tensor] = []
    if not tree_capable(backend):
        return [backend.start(ids, 1)[1][0] for ids in prompts]
    budget = budget_bytes if budget_bytes is not None else default_budget(backend.device)
    alone = [PromptRows(ids, [Row(0.0, 0)]) for ids in prompts]
    for batch in pack(alone, 0, budget // kv_bytes_per_token(backend.model)):
        if len(batch) == 1:
            out.append(backend.start(prompts[batch[0]], 1)[1][0])
            continue
        _, logits = prefill_tree(backend.model, [prompts[i] for i in batch], [1] * len(batch), backend.device)
        out.extend(logits)
    return out


def batch_tokens(prompts: Sequence[PromptRows], max_new_tokens: int) -> int:
    """Cache tokens a batch of these prompts holds at most (see the module docstring)."""
    ids = [p.prompt_ids for p in prompts]
    root = root_length(ids)
    branches = sum(len(p) - root for p in ids)
    suffixes = sum(len(p.rows) for p in prompts) * max_new_tokens
    prefill = len(ids) * max(len(p) for p in ids)  # the root copied per branch, branches padded
    return root + branches + suffixes + prefill


def pack(prompts: Sequence[PromptRows], max_new_tokens: int, token_budget: int) -> list[list[int]]:
    """Indices of consecutive prompts per batch, each batch within ``token_budget`` tokens
    (a prompt that alone exceeds it still gets a batch of its own)."""
    batches: list[list[int]] = []
    for i in range(len(prompts)):
        if batches and batch_tokens([prompts[j] for j in batches[-1]] + [prompts[i]], max_new_tokens) <= token_budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def default_budget(device: str) -> int:
    """Bytes of key/value cache one batch may hold on ``device``."""
    if str(device).startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free * CUDA_MEMORY_SHARE)
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * CPU_MEMORY_SHARE)


@functools.lru_cache(maxsize=8)
def kv_bytes_per_token(model: Any) -> int:
    """Bytes the model's cache stores per token, all layers' keys and values: measured on a one-token forward."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=torch.zeros((1, 1), dtype=torch.long, device=next(model.parameters()).device),
              cache=cache, use_cache=True, logits_to_keep=1)
    return max(1, sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values)))
