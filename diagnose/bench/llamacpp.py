"""llama.cpp on the same GGUF file, through llama-cpp-python (the optional ``bench`` extra).

What a CPU user who samples one prompt many times would run: one ``Llama``
context with flash attention and this process's thread count, the prompt
prefilled once (``Llama.eval``), then one
``create_completion`` per row with its own ``seed``. llama-cpp-python keeps the
evaluated tokens and reuses the longest common prefix of the next prompt, so
each row re-evaluates only the prompt's last token before it decodes. Rows run
one after another: the high-level API decodes one sequence at a time.

The sampling settings are passed as they are, with llama-cpp-python's own extra
filters turned off (``min_p`` 0, ``typical_p`` 1), and llama.cpp applies them in
its own order (temperature last): the samples differ from the engine's, the
work is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from diagnose.bench.measure import Phase, peak_rss
from diagnose.case import SamplingSpec
from diagnose.decode.engine import Row


@dataclass(frozen=True)
class Skipped:
    """Why the baseline did not run."""

    reason: str


def available() -> str | None:
    """The llama-cpp-python version, or None when it is not installed."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return str(getattr(llama_cpp, "__version__", "unknown"))


def llamacpp_generate(
    gguf: Path | None, prompt_ids: list[int], rows: list[Row], spec: SamplingSpec, threads: int
) -> Phase | Skipped:
    """Every row of the job on llama.cpp, after one prefill; or why it cannot run here."""
    version = available()
    if version is None:
        return Skipped("llama-cpp-python is not installed (pip install -e '.[bench]' compiles it, a few minutes)")
    if gguf is None or gguf.suffix != ".gguf":
        return Skipped("the benchmarked model is not a GGUF file")
    from llama_cpp import Llama

    context = len(prompt_ids) + spec.max_new_tokens + 8
    # Flash attention on, as llama.cpp's own default ("auto") has it: on an AVX-512 build
    # here it was faster in both prefill and decode (llama-cpp-python still defaults to off).
    llm = Llama(
        model_path=str(gguf), n_ctx=context, n_batch=512, n_threads=threads,
        n_threads_batch=threads, flash_attn=True, verbose=False,
    )
    tokens = 0
    with peak_rss() as peak:
        started = time.perf_counter()
        llm.eval(prompt_ids)
        prefill = time.perf_counter() - started
        for row in rows:
            done = llm.create_completion(
                prompt=list(prompt_ids), max_tokens=spec.max_new_tokens, temperature=row.temperature,
                top_k=spec.top_k, top_p=spec.top_p, min_p=0.0, typical_p=1.0,
                repeat_penalty=spec.repetition_penalty, seed=row.generator_seed & 0xFFFFFFFF,
            )
            tokens += int(done["usage"]["completion_tokens"])
        seconds = time.perf_counter() - started
    llm.close()
    return Phase(f"llama.cpp {version}, one prefill, rows in turn", seconds, len(rows), tokens, peak[0],
                 prefill_seconds=prefill, decode_seconds=seconds - prefill)
