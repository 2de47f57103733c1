"""What an OpenAI-compatible server says it serves: ``GET {base_url}/models``.

Read once, before any model loads, so a wrong URL, a missing ``/v1`` or a model
name the server does not serve is reported in a second, not after the local
models have loaded. The entry of the asked model is recorded as it was answered
(vLLM adds ``root`` and ``max_model_len``, llama.cpp a ``meta`` object, Ollama
``owned_by``), and its quantization is read from the names the server gives it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import regex

from diagnose.errors import BackendError
from diagnose.decode.remote_trace import snippet

__all__ = ["PROBE_TIMEOUT_S", "list_models", "quantization_of", "served_entry"]

#: Seconds the model list may take: a live server answers it at once.
PROBE_TIMEOUT_S = 5.0

# Quantization as model files and repositories name it: GGUF types (Q4_K_M, IQ3_XS,
# Q8_0), the post-training methods (AWQ, GPTQ, EXL2, bitsandbytes) and low-bit
# number formats (FP8, INT4, NF4, 4bit). Plain F16/BF16/F32 are dtypes, not quantization.
_QUANT = regex.compile(
    r"(?<![A-Za-z0-9])(I?Q[1-8](?:_[0-9A-Z]+)*|AWQ|GPTQ|EXL2|bnb|FP8|FP4|INT[48]|W[48]A(?:8|16)|NF4|[248]-?bit)"
    r"(?![A-Za-z0-9])",
    regex.IGNORECASE,
)


def list_models(client: httpx.Client, base_url: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    """The server's model entries; :class:`BackendError` saying what is wrong otherwise."""
    url = f"{base_url}/models"
    try:
        response = client.get(url, headers=headers, timeout=PROBE_TIMEOUT_S)
    except httpx.TransportError as exc:
        raise BackendError(f"no OpenAI-compatible server answers at {base_url}: {type(exc).__name__}: {exc}") from exc
    if response.status_code == 404:
        raise BackendError(f"GET {url} answered 404: {base_url} is not an OpenAI-compatible base URL"
                           + _v1_hint(base_url))
    if response.status_code >= 400:
        raise BackendError(f"GET {url} failed with HTTP {response.status_code}: {snippet(response.text)}")
    try:
        data = response.json()
    except ValueError:
        raise BackendError(f"GET {url} answered something that is not JSON: {snippet(response.text)}"
                           + _v1_hint(base_url)) from None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BackendError(f"GET {url} answered JSON without a model list (data): {snippet(response.text)}")
    return [e for e in entries if isinstance(e, dict)]


def served_entry(entries: list[dict[str, Any]], model: str, base_url: str) -> dict[str, Any]:
    """The entry of ``model`` (by id, or by a vLLM ``root``); BackendError naming what is served."""
    for entry in entries:
        if model in (entry.get("id"), entry.get("root")):
            return entry
    served = ", ".join(str(e.get("id")) for e in entries) or "nothing"
    raise BackendError(f"the server at {base_url} does not serve the model {model!r}; it serves: {served}")


def quantization_of(entry: dict[str, Any], model: str) -> str | None:
    """The quantization named by the model's id, root, path or metadata strings, if any."""
    names = [model, *(str(v) for v in _strings(entry))]
    for name in names:
        found = _QUANT.search(name.replace("/", " ").replace(".", " "))
        if found:
            return found.group(1)
    return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _v1_hint(base_url: str) -> str:
    path = urlsplit(base_url).path.rstrip("/")
    return "" if path.endswith("/v1") else f" (OpenAI-compatible servers serve under /v1: try {base_url}/v1)"
