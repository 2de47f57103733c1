"""Hugging Face baselines: what a user of ``transformers`` would write to sample one prompt many times.

Both run the model with stock SDPA attention and Hugging Face's own sampling
loop and logits processors (repetition penalty, temperature, top-k, top-p), one
``generate`` call per temperature with the process-wide seed set to 0 first.

* :func:`plain_generate`: ``generate(num_return_sequences=seeds)``, which
  prefills the prompt once for every returned sequence;
* :func:`shared_prefill_generate`: the prompt (all but its last token) is
  prefilled once; each temperature gets a copy of that cache expanded to its
  rows and passed as ``generate(cache=...)``, so only the last prompt token and
  the new tokens are computed per row. Each row still carries its own copy of
  the prompt's keys and values, which every decode step reads.
"""

from __future__ import annotations

import copy
import time

import torch

from diagnose.bench.measure import Phase, device_peak, peak_rss
from diagnose.case import SamplingSpec
from diagnose.decode.backend import TransformersBackend


def _pad_id(backend: TransformersBackend) -> int:
    pad = backend.tokenizer.pad_token_id
    return pad if pad is not None else next(iter(backend.eos_token_ids))


def _sample(model, ids: torch.Tensor, spec: SamplingSpec, temperature: float, pad: int, **kwargs) -> torch.Tensor:
    torch.manual_seed(0)  # the baseline's own global-seed convention
    return model.generate(
        ids, attention_mask=torch.ones_like(ids), do_sample=True,
        temperature=temperature, top_k=spec.top_k, top_p=spec.top_p,
        repetition_penalty=spec.repetition_penalty, max_new_tokens=spec.max_new_tokens,
        pad_token_id=pad, **kwargs,
    )


def _generated(out: torch.Tensor, prompt_tokens: int, pad: int) -> list[tuple[int, ...]]:
    """Each row's new ids, padding (and an end token that doubles as padding) removed."""
    return [tuple(t for t in row if t != pad) for row in out[:, prompt_tokens:].tolist()]


def plain_generate(backend: TransformersBackend, prompt_ids: list[int], spec: SamplingSpec) -> Phase:
    """One ``generate(num_return_sequences=seeds)`` call per temperature."""
    ids = torch.tensor([prompt_ids], device=backend.device)
    pad = _pad_id(backend)
    generated: list[tuple[int, ...]] = []
    with backend.plain_attention(), peak_rss(backend.device) as peak, torch.inference_mode():
        started = time.perf_counter()
        for temperature in spec.temperatures:
            out = _sample(backend.model, ids, spec, temperature, pad, num_return_sequences=spec.seeds)
            generated += _generated(out, ids.shape[1], pad)
        seconds = time.perf_counter() - started
    name = f"HF generate x{len(spec.temperatures)} (n={spec.seeds})"
    return Phase(name, seconds, len(generated), sum(map(len, generated)), peak[0],
                 peak_device_mb=device_peak(peak), generated=tuple(generated))


def shared_prefill_generate(backend: TransformersBackend, prompt_ids: list[int], spec: SamplingSpec) -> Phase:
    """One prefill; per temperature, its cache copied to ``seeds`` rows and ``generate(cache=...)``."""
    from transformers import DynamicCache

    model = backend.model
    ids = torch.tensor([prompt_ids], device=backend.device)
    rows = ids.expand(spec.seeds, -1)
    pad = _pad_id(backend)
    generated: list[tuple[int, ...]] = []
    with backend.plain_attention(), peak_rss(backend.device) as peak, torch.inference_mode():
        started = time.perf_counter()
        prefix = DynamicCache(config=model.config)
        model(input_ids=ids[:, :-1], cache=prefix, use_cache=True, logits_to_keep=1)
        prefill = time.perf_counter() - started
        for temperature in spec.temperatures:
            cache = copy.deepcopy(prefix)
            cache.batch_repeat_interleave(spec.seeds)
            out = _sample(model, rows, spec, temperature, pad, cache=cache)
            generated += _generated(out, ids.shape[1], pad)
            del cache, out
        seconds = time.perf_counter() - started
    name = f"HF shared prefill, generate x{len(spec.temperatures)}"
    return Phase(name, seconds, len(generated), sum(map(len, generated)), peak[0], prefill_seconds=prefill,
                 decode_seconds=seconds - prefill, peak_device_mb=device_peak(peak), generated=tuple(generated))
