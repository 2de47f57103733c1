"""The backend seam: what the decoding engine needs from a model.

A backend turns chat messages into prompt ids, runs one shared prefill of the
prompt, and then advances a batch of rows one token at a time. The engine does
all sampling itself, so every backend gets exactly the same sampler.

``TransformersBackend`` is the adapter for Hugging Face causal LMs (CPU or CUDA);
``diagnose.decode.fake.FakeBackend`` is a deterministic tiny-vocabulary twin
for unit tests.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

import torch

from diagnose.errors import ModelError
from diagnose.decode.attention_plan import AttentionPlan, plan_attention, stock_implementation
from diagnose.decode.batch_invariant import BatchInvariance, decoding, install as install_batch_invariance
from diagnose.decode.prompt_tree import PromptTree, TreeSession
from diagnose.decode.shared_prefix import install, prefix_layers

Messages = list[dict[str, str]]


class DecodeSession(Protocol):
    """Rows that share one prompt prefix and advance together."""

    def advance(self, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one token per row (LongTensor[B]); return next-token logits FloatTensor[B, V]."""

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only these row indices (LongTensor[B']), in this order; drop the rest."""


class Backend(Protocol):
    name: str
    in_process: bool
    """True: the model runs here and decodes every row of a prompt in one batch (:meth:`start`);
    False: a server samples each row as its own request (``sample``, ``complete``)."""
    identity: dict[str, Any]
    """Model facts for the report's environment (id, sha256, dtype, device...)."""
    eos_token_ids: frozenset[int]
    context_window: int

    def chat_ids(self, messages: Messages) -> list[int]:
        """Prompt token ids for chat messages, ending with the assistant turn's opening."""

    def count_tokens(self, text: str) -> int: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def start(self, prompt_ids: Sequence[int], rows: int) -> tuple[DecodeSession, torch.Tensor]:
        """Prefill the prompt once; return a session of ``rows`` rows and logits FloatTensor[rows, V]."""


class _TransformersSession:
    """Rows with a copy of the prompt's cache each (models the shared-prefix kernel refuses)."""

    def __init__(self, model: Any, cache: Any, device: str) -> None:
        self._model = model
        self._cache = cache
        self._device = device

    @torch.inference_mode()
    def advance(self, tokens: torch.Tensor) -> torch.Tensor:
        with decoding():
            out = self._model(
                input_ids=tokens.to(self._device).view(-1, 1), cache=self._cache, use_cache=True
            )
        self._cache = out.cache
        return out.logits[:, -1, :].float().cpu()

    def keep(self, rows: torch.Tensor) -> None:
        # reorder_cache (beam search's) selects rows in every kind of cache layer, recurrent
        # states included; batch_select_indices only in key/value layers.
        self._cache.reorder_cache(rows.to(self._device))


@dataclass(frozen=True)
class PromptCounter:
    """A tokenizer and its model's context window: counts tokens as the model will see them."""

    tokenizer: Any
    context_window: int

    def chat_ids(self, messages: Messages) -> list[int]:
        if self.tokenizer.chat_template:
            encoded = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True
            )
            return list(encoded["input_ids"])
        text = "\n\n".join(m["content"] for m in messages) + "\n\nAnswer:"
        return list(self.tokenizer(text)["input_ids"])

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def text(self, ids: Sequence[int]) -> str:
        """Token ids as the model sees them: the chat template's special tokens kept."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)


class TransformersBackend:
    """A Hugging Face causal LM and its tokenizer, on one device."""

    name = "transformers"
    in_process = True

    def __init__(self, model: Any, tokenizer: Any, device: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.identity: dict[str, Any] = {}
        eos = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        configured = getattr(model.generation_config, "eos_token_id", None)
        if isinstance(configured, int):
            eos.add(configured)
        elif configured:
            eos.update(configured)
        self.eos_token_ids = frozenset(eos)
        self.context_window = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        self.counter = PromptCounter(tokenizer, self.context_window)
        self.stock_attention: str = getattr(model.config, "_attn_implementation", None) or "sdpa"
        """The attention implementation the model was loaded with (its own, for baselines and copies)."""
        self.attention = AttentionPlan("prompt_copies", "shared-prefix attention not chosen for this backend")
        """The path the engine decodes with and why (the report's ``environment.attention``)."""
        self.shared_prefix = False
        """True when the model decodes with shared-prefix attention (no per-row prompt copies)."""
        self.batch_invariance: BatchInvariance = install_batch_invariance(model)
        """Whether half-precision products run batch-invariantly (the report's ``environment.batch_invariance``)."""

    def engine_environment(self) -> dict[str, Any]:
        """How this backend decodes, for the report's ``environment`` (``attention``, ``batch_invariance``)."""
        return {"attention": self.attention.to_dict(), "batch_invariance": self.batch_invariance.to_dict()}

    def choose_attention(self) -> AttentionPlan:
        """Switch to shared-prefix attention when :func:`plan_attention` allows it; keep the stock one otherwise."""
        self.attention = plan_attention(self.model)
        self.shared_prefix = self.attention.path == "shared_prefix"
        if self.shared_prefix:
            install(self.model, self.stock_attention)
        return self.attention

    @classmethod
    def load(cls, directory: Path, device: str, dtype: torch.dtype) -> "TransformersBackend":
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
        config = AutoConfig.from_pretrained(directory, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            directory, dtype=dtype, local_files_only=True, attn_implementation=stock_implementation(config)
        ).to(device)
        model.eval()
        backend = cls(model, tokenizer, device)
        backend.choose_attention()
        return backend

    @contextmanager
    def plain_attention(self) -> Iterator[None]:
        """Temporarily use the model's stock attention (for baselines such as HF ``generate``)."""
        current = self.model.config._attn_implementation
        if current == self.stock_attention:
            yield
            return
        self.model.set_attn_implementation(self.stock_attention)
        try:
            yield
        finally:
            self.model.set_attn_implementation(current)

    def chat_ids(self, messages: Messages) -> list[int]:
        return self.counter.chat_ids(messages)

    def count_tokens(self, text: str) -> int:
        return self.counter.count_tokens(text)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    @torch.inference_mode()
    def start(self, prompt_ids: Sequence[int], rows: int) -> tuple[DecodeSession, torch.Tensor]:
        from transformers import DynamicCache

        ids = torch.tensor([list(prompt_ids)], dtype=torch.long, device=self.device)
        cache = DynamicCache(config=self.model.config)
        # logits_to_keep=1: the vocabulary projection only for the last prompt position.
        out = self.model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1)
        cache = getattr(out, "cache", None)
        if cache is None:
            raise ModelError(f"cannot sample {self.model.config.model_type}: its forward returns no cache "
                             "(it keeps a state of its own), so rows cannot be decoded a token at a time")
        logits = out.logits[:, -1, :].float().cpu().expand(rows, -1)
        if self.shared_prefix:  # the prompt is a tree of one branch, attended once for every row
            tree = PromptTree.whole(prefix_layers(cache, len(prompt_ids)), len(prompt_ids), rows)
            return TreeSession(self.model, tree, self.device), logits
        if rows > 1:
            # Fallback for models without the attention interface: one prefix copy per row
            # (selecting row 0 of the cache again and again copies every kind of layer).
            cache.reorder_cache(torch.zeros(rows, dtype=torch.long, device=self.device))
        return _TransformersSession(self.model, cache, self.device), logits
