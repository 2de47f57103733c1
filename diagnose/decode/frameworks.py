"""What each OpenAI-compatible framework does with the sampling parameters.

Condensed from ``shared/reference/sampler-semantics.md``: the order of each
framework's sampler chain, its defaults and special values
(:data:`FRAMEWORK_SEMANTICS`), which body fields carry the case's sampling spec
(:func:`sampling_parameters`), and which contract metrics its answers cannot give
exactly (:func:`unavailable_metrics`). Pure data and functions: no transport.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from diagnose.case import SamplingSpec

__all__ = ["FRAMEWORKS", "FRAMEWORK_SEMANTICS", "Framework", "sampling_parameters", "unavailable_metrics"]

Framework = Literal["vllm", "llamacpp", "ollama", "openai"]
FRAMEWORKS: tuple[str, ...] = get_args(Framework)

FRAMEWORK_SEMANTICS: dict[str, dict[str, Any]] = {
    "vllm": {
        "order": [
            "allowed/bad words", "logit_bias, min_tokens", "repetition_penalty",
            "frequency_penalty", "presence_penalty", "temperature", "min_p", "top_k", "top_p",
            "sample",
        ],
        "temperature_position": "before min_p/top_k/top_p (as Hugging Face)",
        "defaults": {
            "temperature": 1.0, "top_k": "0 (off; -1 in older releases)", "top_p": 1.0,
            "min_p": 0.0, "repetition_penalty": 1.0, "max_tokens": 16,
            "note": "unset request fields come from the model's generation_config.json "
            "(generation_config='auto')",
        },
        "special_values": "T<1e-5 is greedy and resets top_p/top_k/min_p; 0<T<0.01 is raised "
        "to 0.01; top_k 0 or -1 is off; top_p must be in (0, 1]",
        "repetition_window": "prompt + output, no window (HF-style divide/multiply)",
        "seed": "per-request torch.Generator: a seeded row does not depend on its batch",
        "logprobs": "raw model distribution by default (V1 engine, --logprobs-mode "
        "raw_logprobs); processed when the server runs a processed_* logprobs mode or the V0 engine",
        "accepts": ["top_k", "repetition_penalty", "min_p"],
        "reference": "https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html",
    },
    "llamacpp": {
        "order": [
            "logit_bias", "penalties (repeat/frequency/presence)", "DRY", "top_n_sigma",
            "top_k", "typical_p", "top_p", "min_p", "XTC", "temperature", "dist",
        ],
        "temperature_position": "last: top_k/top_p/min_p see the temperature-1 distribution",
        "defaults": {
            "temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05,
            "repeat_penalty": 1.0, "repeat_last_n": 64, "seed": "random", "n_predict": -1,
            "note": "min_p 0.05 stays active unless the request sets it (diagnose "
            "--min-p); llama-cpp-python's server has its own request "
            "defaults (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, repeat_penalty "
            "1.1: llama_cpp/server/types.py) and a repeat window fixed at model load "
            "(last_n_tokens_size 64)",
        },
        "special_values": "T<=0 keeps only the max logit (greedy); top_k<=0, top_p>=1, "
        "min_p<=0 are off",
        "repetition_window": "last 64 tokens (repeat_last_n), prompt tail included in "
        "llama-server",
        "seed": "one mt19937 per sampler, seeded per request; 0xFFFFFFFF means random",
        "logprobs": "raw softmax of the model logits (llama-server with "
        "post_sampling_probs=false, the default; llama-cpp-python from its raw scores)",
        "accepts": ["top_k", "repeat_penalty", "min_p"],
        "reference": "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md",
    },
    "ollama": {
        "order": [
            "penalties", "top_k", "top_p", "min_p", "temperature", "dist",
            "(llama.cpp chain through llama-server; the removed Go engine did "
            "top_k -> temperature -> top_p -> min_p)",
        ],
        "temperature_position": "last (llama.cpp chain)",
        "defaults": {
            "temperature": "1.0 on /v1 when unset (0.8 on the native API)",
            "top_p": "1.0 on /v1 when unset (0.9 native)", "top_k": 40, "min_p": 0.0,
            "repeat_penalty": 1.0, "repeat_last_n": 64, "seed": "-1 (random)",
            "note": "top_k 40 stays active on /v1: it cannot be set there",
        },
        "special_values": "T=0 is greedy; top_k 0 is off",
        "repetition_window": "last 64 tokens, prompt included (as llama.cpp)",
        "seed": "forwarded to llama-server (per request)",
        "logprobs": "softmax of the raw logits, in newer versions divided by the "
        "temperature first; never the truncated (top_k/top_p) distribution",
        "accepts": [],
        "reference": "https://github.com/ollama/ollama/blob/main/docs/openai.md",
    },
    "openai": {
        "order": "not published",
        "temperature_position": "not published",
        "defaults": {
            "temperature": 1.0, "top_p": 1.0, "frequency_penalty": 0.0,
            "presence_penalty": 0.0, "n": 1,
        },
        "special_values": "T range 0..2; what T=0 does is not published",
        "repetition_window": "no repetition_penalty; frequency/presence count sampled "
        "(output) tokens only",
        "seed": "best effort only (deprecated); compare system_fingerprint",
        "logprobs": "not documented which distribution",
        "accepts": [],
        "reference": "https://platform.openai.com/docs/api-reference/chat/create",
    },
}
for _framework, _entry in FRAMEWORK_SEMANTICS.items():
    _entry["framework"] = _framework
    _entry["source"] = _entry.pop("reference")


_UNAVAILABLE: dict[str, list[str]] = {
    "vllm": ["mean_entropy"],
    "llamacpp": ["mean_entropy"],
    "ollama": ["mean_entropy", "perplexity"],
    "openai": ["mean_entropy", "perplexity"],
}


def unavailable_metrics(framework: str) -> list[str]:
    """Contract metrics that cannot be computed exactly from this framework's answers.

    Every framework: ``mean_entropy`` needs the *processed* distribution (after
    penalty, temperature, top-k, top-p) at every position; a chat completion returns
    at most 20 alternatives per position, of some other distribution, so the
    entropy cannot be computed (the StepRecords carry NaN).

    ``perplexity`` needs the sampled tokens' log-probabilities under the *raw*
    model distribution. What each framework returns in ``logprobs``:

    * ``vllm``: raw. The V1 sampler records logprobs before any logits processing
      unless the server was started with a ``processed_*`` ``--logprobs-mode``
      (``vllm-project/vllm:vllm/v1/sample/sampler.py`` and
      ``v1/sample/ops/topk_topp_sampler.py``, ``TopKTopPSampler(logprobs_mode=
      "raw_logprobs")``; ``vllm/config/model.py`` ``LogprobsMode``). The old V0
      engine returned processed logprobs; a server with a processed mode makes
      perplexity wrong without this backend being able to tell. Available.
    * ``llamacpp``: raw. llama-server's ``populate_token_probs`` takes
      ``get_token_probabilities(ctx, idx)`` (softmax of the model logits) unless the
      request sets ``post_sampling_probs: true``, which this backend never does
      (``ggml-org/llama.cpp:tools/server/server-context.cpp``; the
      ``post_sampling_probs`` request field defaults to false in
      ``tools/server/server-task.cpp``). llama-cpp-python's server computes them as
      ``Llama.logits_to_logprobs(self._scores)`` from the raw logits that ``eval``
      stores when ``logits_all`` is on (its server's default; sampling happens in
      llama.cpp's sampler chain and does not touch them)
      (``abetlen/llama-cpp-python:llama_cpp/llama.py`` ``eval``, ``_create_completion``,
      read in 0.3.36).
      Builds from before the option existed returned post-sampling probabilities
      only. Available.
    * ``ollama``: not raw in current versions: ``runner/common/logprob.go``
      ``CalculateLogprobs`` divides the logits by the temperature before the
      softmax ("matching the distribution used during sampling"), but applies no
      top-k/top-p, so it is neither the raw nor the processed distribution (earlier
      versions used the raw logits). Unavailable.
    * ``openai``: the API reference (``openai/openai-openapi:openapi.yaml``) does not
      say which distribution ``logprobs`` describe. Unavailable (unverified).

    The token-level metrics (``first_token_divergence``, ``repetition_rate``) read
    the server's token *strings*, so they are exact as long as distinct tokens have
    distinct strings (true of byte-level vocabularies when the server sends
    ``bytes``); the text metrics read ``message.content`` and are unaffected.
    """
    if framework not in _UNAVAILABLE:
        raise ValueError(f"unknown framework {framework!r}; expected one of {FRAMEWORKS}")
    return list(_UNAVAILABLE[framework])


def sampling_parameters(framework: str, spec: SamplingSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """(sent, dropped): the spec's sampling fields as ``framework``'s body fields.

    ``dropped`` holds the spec fields (with their values) that this framework's
    chat endpoint cannot take, whether or not the value would have been a no-op.
    """
    sent: dict[str, Any] = {"top_p": spec.top_p, "max_tokens": spec.max_new_tokens}
    dropped: dict[str, Any] = {}
    if framework == "vllm":
        sent["top_k"] = spec.top_k if spec.top_k > 0 else -1  # -1: off in every release
        sent["repetition_penalty"] = spec.repetition_penalty
    elif framework == "llamacpp":
        sent["top_k"] = spec.top_k  # <= 0 is off
        sent["repeat_penalty"] = spec.repetition_penalty
    else:
        dropped["top_k"] = spec.top_k
        dropped["repetition_penalty"] = spec.repetition_penalty
    return sent, dropped
