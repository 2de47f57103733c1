"""Sampling through an OpenAI-compatible HTTP server (vLLM, llama.cpp, Ollama ``/v1``, OpenAI).

The in-process engine (:func:`diagnose.sampling.engine.decode_rows`) draws every
token itself from the raw logits. A remote server samples on its own side, so
this backend sends one ``POST {base_url}/chat/completions`` per (temperature,
seed) row and turns each answer into a :class:`RemoteTrace`:

* ``token_texts``: the server's token strings, from ``choices[0].logprobs.content``;
* ``tokens``: one int id per distinct token, so that the token-level metrics
  (``first_token_divergence``, ``repetition_rate``) work unchanged. The ids are
  **local**: :class:`RemoteBackend` numbers each distinct token (its ``bytes``
  when the server sends them, else its string) in the order first seen, and keeps
  that table for its whole life, so the same token has the same id in every call
  of one backend, and :meth:`RemoteBackend.decode` maps ids back to text. They are
  not the server's vocabulary ids and mean nothing to another backend instance.
* ``steps``: one :class:`~diagnose.sampling.metrics.StepRecord` per returned token,
  ``raw_logprob`` = the server's logprob, ``entropy`` = NaN (a server returns no
  full distribution), ``top2_tokens``/``top2_probs`` from ``top_logprobs`` (2 asked);
* ``finish_reason``: ``"length"`` when the server says ``length``, else ``"stop"``;
* ``text``: the server's ``message.content`` (prefer it to ``decode(tokens)``:
  some servers return lossy per-token strings for multi-byte characters).

What each framework's logprobs are (so which contract metrics are exact) is in
:func:`unavailable_metrics`; how each samples is in :data:`FRAMEWORK_SEMANTICS`,
condensed from ``shared/reference/sampler-semantics.md``.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence, get_args

import httpx

from diagnose.case import SamplingSpec
from diagnose.errors import BackendError
from diagnose.sampling.engine import Row, Trace
from diagnose.sampling.metrics import StepRecord

__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_SEMANTICS",
    "Framework",
    "RemoteBackend",
    "RemoteTrace",
    "RowCallback",
    "unavailable_metrics",
]

Framework = Literal["vllm", "llamacpp", "ollama", "openai"]
FRAMEWORKS: tuple[str, ...] = get_args(Framework)

RowCallback = Callable[[int, int], None]
"""Called after each finished row with (rows done, rows in all)."""

Messages = Sequence[Mapping[str, str]]

#: Statuses worth another try: rate limiting and server-side failures.
RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
#: Longest wait between two tries, whatever ``Retry-After`` says.
MAX_BACKOFF_S = 30.0
#: How much of an error body goes into a BackendError message.
BODY_LIMIT = 500

NO_TOKEN = -1
"""``top2_tokens`` entry when the server returned fewer than two alternatives."""


# --------------------------------------------------------------------------- #
# What each framework does with the parameters (from sampler-semantics.md)
# --------------------------------------------------------------------------- #

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
        "accepts": ["top_k", "repetition_penalty"],
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
            "note": "min_p 0.05 stays active (this backend does not send min_p) unless "
            "extra_body overrides it; llama-cpp-python's server has its own request "
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
        "accepts": ["top_k", "repeat_penalty"],
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
    },
}
for _framework, _entry in FRAMEWORK_SEMANTICS.items():
    _entry["framework"] = _framework
    _entry["source"] = "shared/reference/sampler-semantics.md"


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


# --------------------------------------------------------------------------- #
# Traces
# --------------------------------------------------------------------------- #


@dataclass
class RemoteTrace(Trace):
    """A :class:`Trace` from a server: ``tokens`` are local ids of ``token_texts``."""

    token_texts: list[str] = field(default_factory=list)
    """The server's token strings, in order (one per ``tokens`` entry)."""
    text: str = ""
    """The server's ``message.content``."""
    server_finish_reason: str | None = None
    """``finish_reason`` exactly as the server sent it."""
    request: dict[str, Any] = field(default_factory=dict)
    """The JSON body that was sent (without credentials)."""


# --------------------------------------------------------------------------- #
# The backend
# --------------------------------------------------------------------------- #


class RemoteBackend:
    """An OpenAI-compatible ``/chat/completions`` endpoint as a sampling backend.

    ``base_url`` ends before ``/chat/completions`` (e.g. ``http://localhost:8000/v1``).
    ``framework`` decides which extra parameters are sent and how the results are
    read (see :data:`FRAMEWORK_SEMANTICS` and :func:`unavailable_metrics`).
    ``client`` may be given (tests pass one with an ``httpx.MockTransport``); a
    client made here is closed by :meth:`close`. ``extra_body`` is merged into
    every request (e.g. ``{"min_p": 0}`` to switch off llama.cpp's hidden min-p).
    ``concurrency`` > 1 sends that many rows at once; the traces, and the local
    token ids, are the same as with 1.
    """

    name = "remote"
    eos_token_ids: frozenset[int] = frozenset()
    """Servers strip end-of-sequence tokens from what they return."""

    def __init__(
        self,
        base_url: str,
        model: str,
        framework: Framework,
        api_key: str | None = None,
        timeout: float = 120,
        client: httpx.Client | None = None,
        *,
        max_retries: int = 3,
        backoff: float = 0.5,
        extra_body: Mapping[str, Any] | None = None,
        concurrency: int = 1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {framework!r}; expected one of {FRAMEWORKS}")
        if not base_url.strip():
            raise ValueError("base_url must not be empty")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.name = f"remote-{framework}"
        self.base_url = base_url.strip().rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.framework: str = framework
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.extra_body = dict(extra_body or {})
        self.concurrency = concurrency
        self._sleep = sleep
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout)
        # Local token ids: key (bytes or string) -> id; id -> (string, bytes).
        self._ids: dict[tuple[str, Any], int] = {}
        self._pieces: list[tuple[str, bytes]] = []
        self.identity: dict[str, Any] = {
            "id": model,
            "base_url": self.base_url,
            "framework": framework,
            "server_model": None,
            "system_fingerprint": None,
        }
        self.semantics: dict[str, Any] = dict(FRAMEWORK_SEMANTICS[framework])
        self.semantics["unavailable_metrics"] = unavailable_metrics(framework)
        self.unavailable = unavailable_metrics(framework)
        """Contract metrics reported as null for this backend."""
        self.eos_token_ids: frozenset[int] = frozenset()  # the server strips end tokens
        self.context_window = 0  # unknown to an OpenAI-compatible API
        self.dropped: dict[str, Any] = {}
        """Sampling fields of the last :meth:`sample` call that the framework cannot take."""
        self.sent: dict[str, Any] = {}
        """Sampling fields of the last :meth:`sample` call as sent (seed aside)."""

    # -- lifecycle ------------------------------------------------------------ #

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> "RemoteBackend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ------------------------------------------------------------- #

    def sampling_parameters(self, spec: SamplingSpec) -> tuple[dict[str, Any], dict[str, Any]]:
        """(sent, dropped): the spec's sampling fields as this framework's body fields.

        ``dropped`` holds the spec fields (with their values) that this framework's
        chat endpoint cannot take, whether or not the value would have been a no-op.
        """
        sent: dict[str, Any] = {"top_p": spec.top_p, "max_tokens": spec.max_new_tokens}
        dropped: dict[str, Any] = {}
        if self.framework == "vllm":
            sent["top_k"] = spec.top_k if spec.top_k > 0 else -1  # -1: off in every release
            sent["repetition_penalty"] = spec.repetition_penalty
        elif self.framework == "llamacpp":
            sent["top_k"] = spec.top_k  # <= 0 is off
            sent["repeat_penalty"] = spec.repetition_penalty
        else:
            dropped["top_k"] = spec.top_k
            dropped["repetition_penalty"] = spec.repetition_penalty
        return sent, dropped

    def request_body(self, messages: Messages, row: Row, spec: SamplingSpec) -> dict[str, Any]:
        """The JSON body of one row's ``/chat/completions`` request."""
        sent, _ = self.sampling_parameters(spec)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": row.temperature,
            **sent,
            "seed": row.seed,
            "n": 1,
            "stream": False,
            "logprobs": True,
            "top_logprobs": 2,
        }
        body.update(self.extra_body)
        return body

    def sample(
        self,
        messages: Messages,
        rows: Sequence[Row],
        spec: SamplingSpec,
        on_row: RowCallback | None = None,
    ) -> list[RemoteTrace]:
        """One request per row; traces in the order of ``rows``.

        Raises :class:`BackendError` (naming the URL, and the HTTP status and body
        where there is one) when a row fails after the retries.
        """
        self.sent, self.dropped = self.sampling_parameters(spec)
        self.semantics["dropped_parameters"] = dict(self.dropped)
        bodies = [self.request_body(messages, row, spec) for row in rows]
        total = len(rows)
        done = 0

        def finished() -> None:
            nonlocal done
            done += 1
            if on_row:
                on_row(done, total)

        responses: list[dict[str, Any]]
        if self.concurrency == 1 or total <= 1:
            responses = []
            for body in bodies:
                responses.append(self._post(body))
                finished()
        else:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                futures = [pool.submit(self._post, body) for body in bodies]
                responses = []
                for future in futures:  # in row order: ids are assigned deterministically
                    responses.append(future.result())
                    finished()
        return [
            self._trace(row, body, response)
            for row, body, response in zip(rows, bodies, responses)
        ]

    def complete(
        self, messages: Messages, max_tokens: int, top_logprobs: int = 0
    ) -> tuple[str, dict[str, float], dict[str, Any]]:
        """One greedy (temperature 0) request: (text, first token's top logprobs, usage).

        The logprobs map each token string of the first position (its ``top_logprobs``
        and the chosen token) to its logprob; empty unless ``top_logprobs`` > 0 and
        the server returned them. ``usage`` is the server's ``usage`` object or {}.
        Uses the same retries and errors as :meth:`sample`.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": 0.0,
            "max_tokens": max_tokens,
            "n": 1,
            "seed": 0,  # greedy already; a seed also pins servers that batch nondeterministically
            "stream": False,
        }
        if top_logprobs > 0:
            body.update(logprobs=True, top_logprobs=top_logprobs)
        body.update(self.extra_body)
        data = self._post(body)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise BackendError(f"POST {self.url} answered without choices: {_snippet(repr(data))}")
        choice = choices[0]
        text = (choice.get("message") or {}).get("content") or ""
        top: dict[str, float] = {}
        content = (choice.get("logprobs") or {}).get("content") if top_logprobs > 0 else None
        if content and isinstance(content[0], dict):
            first = content[0]
            for alt in first.get("top_logprobs") or []:
                if isinstance(alt, dict):
                    token = str(alt.get("token", ""))
                    top[token] = max(top.get(token, float("-inf")), _float(alt.get("logprob")))
            top.setdefault(str(first.get("token", "")), _float(first.get("logprob")))
        usage = data.get("usage")
        return str(text), top, usage if isinstance(usage, dict) else {}

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._client.post(
                    self.url, json=body, headers=self._headers, timeout=self.timeout
                )
            except httpx.TransportError as exc:
                if last:
                    raise BackendError(
                        f"{self.framework} server at {self.url} could not be reached after "
                        f"{attempts} attempt(s): {type(exc).__name__}: {exc}"
                    ) from exc
                self._sleep(self._delay(attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and not last:
                self._sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            if response.status_code >= 400:
                tries = f" after {attempt + 1} attempt(s)" if attempt else ""
                raise BackendError(
                    f"POST {self.url} failed with HTTP {response.status_code}{tries}: "
                    f"{_snippet(response.text)}"
                )
            try:
                data = response.json()
            except ValueError as exc:
                raise BackendError(
                    f"POST {self.url} answered HTTP {response.status_code} with a body that "
                    f"is not JSON: {_snippet(response.text)}"
                ) from exc
            if not isinstance(data, dict):
                raise BackendError(f"POST {self.url} answered JSON that is not an object: "
                                   f"{_snippet(response.text)}")
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), MAX_BACKOFF_S)
            except ValueError:
                pass  # an HTTP date: fall back to exponential backoff
        return min(self.backoff * (2**attempt), MAX_BACKOFF_S)

    # -- responses ------------------------------------------------------------ #

    def _trace(self, row: Row, body: dict[str, Any], data: dict[str, Any]) -> RemoteTrace:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise BackendError(
                f"POST {self.url} answered without choices: {_snippet(repr(data))}"
            )
        choice = choices[0]
        if data.get("model"):
            self.identity["server_model"] = data["model"]
        fingerprint = data.get("system_fingerprint")
        if fingerprint:
            seen = self.identity.setdefault("system_fingerprints", [])
            if fingerprint not in seen:
                seen.append(fingerprint)
            self.identity["system_fingerprint"] = fingerprint
        message = choice.get("message") or {}
        text = message.get("content") or ""
        server_reason = choice.get("finish_reason")
        trace = RemoteTrace(
            row,
            finish_reason="length" if server_reason == "length" else "stop",
            text=text,
            server_finish_reason=server_reason,
            request=dict(body),
        )
        content = (choice.get("logprobs") or {}).get("content")
        if not content:
            self.identity["logprobs_returned"] = False
            return trace
        self.identity["logprobs_returned"] = True
        for entry in content:
            token_text = str(entry.get("token", ""))
            token = self._token_id(token_text, entry.get("bytes"))
            logprob = _float(entry.get("logprob"))
            alternatives = sorted(
                (alt for alt in entry.get("top_logprobs") or [] if isinstance(alt, dict)),
                key=lambda alt: -_float(alt.get("logprob")),
            )[:2]
            top_ids = [self._token_id(str(a.get("token", "")), a.get("bytes")) for a in alternatives]
            top_probs = [math.exp(_float(a.get("logprob"))) for a in alternatives]
            while len(top_ids) < 2:
                top_ids.append(NO_TOKEN)
                top_probs.append(0.0)
            trace.tokens.append(token)
            trace.token_texts.append(token_text)
            trace.steps.append(
                StepRecord(
                    token=token,
                    raw_logprob=logprob,
                    entropy=float("nan"),
                    top2_tokens=(top_ids[0], top_ids[1]),
                    top2_probs=(top_probs[0], top_probs[1]),
                )
            )
        return trace

    def _token_id(self, text: str, raw: Any) -> int:
        if isinstance(raw, list) and all(isinstance(b, int) for b in raw):
            key: tuple[str, Any] = ("b", bytes(raw))
            piece = bytes(raw)
        else:
            key = ("s", text)
            piece = text.encode("utf-8")
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._pieces)
            self._pieces.append((text, piece))
        return found

    # -- tokens ---------------------------------------------------------------- #

    def token_text(self, token: int) -> str:
        """The server's string for a local token id."""
        return self._pieces[token][0]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of local token ids (their bytes joined, decoded as UTF-8)."""
        data = b"".join(self._pieces[i][1] for i in ids if 0 <= i < len(self._pieces))
        return data.decode("utf-8", errors="replace")


def _float(value: Any) -> float:
    """A logprob as float; ``None`` or junk is -inf (the server gave no probability)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("-inf")


def _snippet(text: str) -> str:
    text = text.strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= BODY_LIMIT else text[: BODY_LIMIT - 3] + "..."
