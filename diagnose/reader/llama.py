"""The reader's in-process engine: llama.cpp (``llama-cpp-python``) on the GGUF as it is.

Why llama.cpp: it runs the Q4_K_M weights without de-quantizing them (about 1.2 GB
resident with the cache, against 6.8 GB for transformers in float32; this CPU has no
bfloat16 instructions), and keeps its key/value cache between prompts, so a prompt that
starts like the previous one (the system message and the question: the prompt tree's
root) evaluates only what differs. :meth:`LlamaEngine.reply` is greedy (the argmax at
every step), so a reading is a function of the weights, the prompt and the instructions
llama.cpp was compiled for (an AVX-512 build sums in another order than an AVX2 one, and a
near-tied token can flip): the Makefile builds it for every AVX2 CPU alike.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from diagnose.errors import ModelError
from diagnose.reader.readings import ReadingStats

__all__ = ["LlamaEngine", "Reply", "build_kernels", "refuse_amx"]


@dataclass(frozen=True)
class Reply:
    text: str
    first_logprobs: dict[str, float] = field(default_factory=dict)
    """Log-probabilities at the first answer position of the tokens asked for by text."""
    prompt_tokens: int = 0


def refuse_amx(system_info: str) -> None:
    """Raise a ModelError when llama.cpp was built with its AMX kernels (``system_info``: its
    ``llama_print_system_info()`` line): on the Q4_K weights they segfault on the first decode
    (ggml-org/llama.cpp#20824), which would end the process without a word."""
    if re.search(r"\bAMX_INT8\s*=\s*1", system_info):
        raise ModelError("llama-cpp-python was built with AMX kernels, which crash on the reader's Q4_K "
                         "weights: rebuild it with `make reader` (it compiles without AMX)")


def build_kernels(system_info: str) -> str:
    """What a llama.cpp build computes with, from its ``llama_print_system_info()`` line: the
    CPU features it was compiled for, in that line's order (``"SSE3 SSSE3 AVX AVX2 F16C FMA BMI2
    LLAMAFILE OPENMP REPACK"`` for `make reader`'s portable build). Two builds with the same
    string run the same kernels and read alike."""
    _, found, cpu = system_info.partition("CPU :")
    return " ".join(re.findall(r"\b([A-Z][A-Z0-9_]*)\s*=\s*1\b", cpu if found else system_info))


class LlamaEngine:
    """One loaded GGUF; :meth:`reply` answers one chat prompt greedily."""

    def __init__(self, path: Path, threads: int = 0, context: int = 2048, reuse_prefix: bool = True) -> None:
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise ModelError("the reference reader needs llama-cpp-python: `make setup` installs it "
                             "(or `pip install llama-cpp-python`)") from None
        import os

        from llama_cpp import llama_print_system_info

        system_info = llama_print_system_info().decode(errors="replace")
        refuse_amx(system_info)
        self.kernels = build_kernels(system_info)
        """The build's CPU features (:func:`build_kernels`): the report's ``input.reader.kernels``."""
        n_threads = threads or os.cpu_count() or 1
        self.path = path
        self.reuse_prefix = reuse_prefix
        self.llm = Llama(model_path=str(path), n_ctx=context, n_threads=n_threads, n_threads_batch=n_threads,
                         n_batch=512, logits_all=False, verbose=False, seed=0)
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{path} has no chat template")
        self._format = Jinja2ChatFormatter(template=template, eos_token="", bos_token="")
        self._vocab = self.llm.n_vocab()
        self._eog = {self.llm.token_eos()}
        for piece in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>"):
            ids = self.llm.tokenize(piece.encode(), add_bos=False, special=True)
            if len(ids) == 1:
                self._eog.add(ids[0])
        self.stats = ReadingStats()

    @property
    def context(self) -> int:
        return self.llm.n_ctx()

    def count_tokens(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode(), add_bos=False, special=False))

    def truncate(self, text: str, limit: int) -> str:
        """The start of ``text`` that is at most ``limit`` tokens."""
        ids = self.llm.tokenize(text[: limit * 16].encode(), add_bos=False, special=False)
        if len(ids) <= limit:
            return text[: limit * 16]
        return self.llm.detokenize(ids[:limit]).decode("utf-8", errors="ignore")

    def reply(self, chat: list[dict[str, str]], max_tokens: int, first_tokens: tuple[str, ...] = (),
              stop_lines: int = 0) -> Reply:
        """The greedy reply to ``chat`` (at most ``max_tokens``; after ``stop_lines`` lines when
        given), with the log-probabilities of ``first_tokens`` (those that are one token) at the
        first answer position."""
        prompt = self._format(messages=chat).prompt
        ids = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
        if len(ids) + max_tokens > self.context:
            raise ModelError(f"reader prompt of {len(ids)} tokens does not fit the reader's context ({self.context})")
        started = time.perf_counter()
        logits = self._prefill(ids)
        self.stats.prefill_s += time.perf_counter() - started
        first = self._logprobs(logits, first_tokens) if first_tokens else {}
        started = time.perf_counter()
        out: list[int] = []
        text = ""
        for _ in range(max_tokens):
            token = int(np.argmax(logits))
            if token in self._eog:
                break
            out.append(token)
            text = self.llm.detokenize(out).decode("utf-8", errors="ignore")
            if stop_lines and text.count("\n") >= stop_lines:
                break
            self.llm.eval([token])
            logits = self._last_logits()
        self.stats.decode_s += time.perf_counter() - started
        self.stats.generated_tokens += len(out)
        return Reply(text, first, len(ids))

    def forget(self) -> None:
        """Drop the cached prompt: the next one is evaluated from its first token."""
        self.llm.n_tokens = 0

    def _prefill(self, ids: list[int]) -> np.ndarray:
        """Evaluate ``ids``, reusing the cached head they share with the last prompt; the logits
        of the last position."""
        self.stats.prompt_tokens += len(ids)
        cached = self.llm.input_ids[: self.llm.n_tokens].tolist() if self.reuse_prefix else []
        common = 0
        for a, b in zip(cached, ids):
            if a != b:
                break
            common += 1
        common = min(common, len(ids) - 1)  # the last position is evaluated again for its logits
        self.llm.n_tokens = common
        self.llm.eval(ids[common:])
        self.stats.evaluated_tokens += len(ids) - common
        return self._last_logits()

    def _last_logits(self) -> np.ndarray:
        """The logits of the last evaluated position (llama-cpp-python keeps none of its own
        unless every position's are kept)."""
        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self._vocab,)).copy()

    def _logprobs(self, logits: np.ndarray, pieces: tuple[str, ...]) -> dict[str, float]:
        shifted = logits.astype(np.float64) - float(np.max(logits))
        log_norm = float(np.log(np.exp(shifted).sum()))
        out: dict[str, float] = {}
        for piece in pieces:
            ids = self.llm.tokenize(piece.encode(), add_bos=False, special=False)
            if len(ids) == 1:
                out[piece] = float(shifted[ids[0]] - log_norm)
        return out
