"""Random-initialised Llama models of realistic shape, for benchmarks where no weights can be fetched.

A GPU host without a model hub can still measure the engine at a realistic size:
``diagnose bench sampling --random-model 1b`` builds a TinyLlama-shaped 1.1B model
with seeded random weights and the embedded tokenizer. Its text is gibberish;
its speed and memory are those of a real model of that shape.
"""

from __future__ import annotations

from typing import Any

import torch

from diagnose.decode.backend import TransformersBackend

PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2},
    "1b": {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
           "num_attention_heads": 32, "num_key_value_heads": 4},
}  # fmt: skip


def random_backend(preset: str, tokenizer: Any, device: str, dtype: torch.dtype, seed: int = 0) -> TransformersBackend:
    """A ``TransformersBackend`` over a seeded random Llama of the given preset."""
    from transformers import LlamaConfig, LlamaForCausalLM


    if preset not in PRESETS:
        raise ValueError(f"unknown random model preset {preset!r}; choose from {sorted(PRESETS)}")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=8192,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
        **PRESETS[preset],
    )
    with torch.random.fork_rng(devices=[]):  # seeded weights without touching the global stream
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model = model.to(device=device, dtype=dtype).eval()
    backend = TransformersBackend(model, tokenizer, device)
    backend.choose_attention()
    parameters = sum(p.numel() for p in model.parameters())
    backend.identity = {
        "id": f"random-init llama-{preset} ({parameters / 1e9:.2f}B parameters, seed {seed})",
        "sha256": None,
        "format": "random-init",
        "quantization": None,
        "device": device,
        "dtype": str(dtype).removeprefix("torch."),
        **backend.engine_environment(),
    }
    return backend
