"""Sampling through an OpenAI-compatible HTTP server (vLLM, llama.cpp, Ollama ``/v1``, OpenAI).

The in-process engine (:func:`diagnose.decode.engine.decode_rows`) draws every
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
* ``steps``: one :class:`~diagnose.decode.steps.StepRecord` per returned token,
  ``raw_logprob`` = the server's logprob, ``entropy`` = NaN (a server returns no
  full distribution), ``top2_tokens``/``top2_probs`` from ``top_logprobs`` (2 asked);
* ``finish_reason``: ``"length"`` when the server says ``length``, else ``"stop"``;
* ``text``: the server's ``message.content`` (prefer it to ``decode(tokens)``:
  some servers return lossy per-token strings for multi-byte characters).

Three modules, one responsibility each: this one is the backend (request bodies,
concurrency, the server's identity); :mod:`~diagnose.decode.frameworks` holds
what each framework does with the parameters (:data:`FRAMEWORK_SEMANTICS`,
:func:`unavailable_metrics`, condensed from ``shared/reference/sampler-semantics.md``);
:mod:`~diagnose.decode.remote_http` the transport with its retries;
:mod:`~diagnose.decode.remote_trace` the reading of answers into traces.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence

import httpx

from diagnose.case import SamplingSpec
from diagnose.decode.engine import Row
from diagnose.decode.frameworks import (
    FRAMEWORK_SEMANTICS,
    FRAMEWORKS,
    Framework,
    sampling_parameters,
    unavailable_metrics,
)
from diagnose.decode.remote_http import JsonPoster
from diagnose.decode.remote_models import list_models, quantization_of, served_entry
from diagnose.decode.remote_trace import RemoteTrace, TokenTable, first_choice, logprob, read_choice

__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_SEMANTICS",
    "Framework",
    "RemoteBackend",
    "RemoteTrace",
    "RowCallback",
    "unavailable_metrics",
]

RowCallback = Callable[[int, int], None]
"""Called after each finished row with (rows done, rows in all)."""

Messages = Sequence[Mapping[str, str]]


class RemoteBackend:
    """An OpenAI-compatible ``/chat/completions`` endpoint as a sampling backend.

    ``base_url`` ends before ``/chat/completions`` (e.g. ``http://localhost:8000/v1``).
    ``framework`` decides which extra parameters are sent and how the results are
    read (see :data:`FRAMEWORK_SEMANTICS` and :func:`unavailable_metrics`).
    ``client`` may be given (tests pass one with an ``httpx.MockTransport``); a
    client made here is closed by :meth:`close`. ``extra_body`` is merged into
    every request (e.g. ``{"min_p": 0}`` to switch off llama.cpp's hidden min-p).
    ``concurrency`` > 1 sends that many rows at once; the traces, and the local
    token ids, are the same as with 1. ``min_p`` is sent where the framework takes
    it (vLLM, llama.cpp); None leaves the server's default, which the environment
    records (llama.cpp's is 0.05, on unless set). :meth:`check_server` asks the
    server what it serves and records the model's entry and quantization.
    """

    name = "remote"
    in_process = False
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
        min_p: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {framework!r}; expected one of {FRAMEWORKS}")
        if not base_url.strip():
            raise ValueError("base_url must not be empty")
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if min_p is not None and not 0.0 <= min_p <= 1.0:
            raise ValueError(f"min_p must be in [0, 1] (got {min_p})")
        self.name = f"remote-{framework}"
        self.base_url = base_url.strip().rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.framework: str = framework
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self.concurrency = concurrency
        self.min_p = min_p
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout)
        self._headers = headers
        self._http = JsonPoster(self.url, framework, self._client, headers, timeout, max_retries, backoff, sleep)
        self._tokens = TokenTable()
        self.identity: dict[str, Any] = {
            "id": model,
            "base_url": self.base_url,
            "framework": framework,
            "server_model": None,
            "system_fingerprint": None,
        }
        self.semantics: dict[str, Any] = dict(FRAMEWORK_SEMANTICS[framework])
        self.semantics["unavailable_metrics"] = unavailable_metrics(framework)
        self.semantics["min_p"] = self._min_p_in_effect()
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

    # -- the server ----------------------------------------------------------- #

    def check_server(self) -> dict[str, Any]:
        """``GET /models``: the served entry of this backend's model (also kept in ``identity``).

        Raises :class:`BackendError` at once for an unreachable server, a base URL
        that is not OpenAI-compatible (with a hint when ``/v1`` is missing), or a
        model the server does not serve (naming the ones it does).
        """
        entry = served_entry(list_models(self._client, self.base_url, self._headers), self.model, self.base_url)
        self.identity["served"] = entry
        self.identity["server_model"] = entry.get("id")
        self.identity["quantization"] = quantization_of(entry, self.model)
        return entry

    def _min_p_in_effect(self) -> dict[str, Any]:
        """The min-p the server applies: the one sent, else the framework's default."""
        if self.min_p is not None and "min_p" in FRAMEWORK_SEMANTICS[self.framework].get("accepts", []):
            return {"value": self.min_p, "set_by": "request"}
        default = FRAMEWORK_SEMANTICS[self.framework]["defaults"].get("min_p")
        return {"value": default if isinstance(default, (int, float)) else None, "set_by": "server default",
                **({"ignored_request_value": self.min_p} if self.min_p is not None else {})}

    # -- requests ------------------------------------------------------------- #

    def sampling_parameters(self, spec: SamplingSpec) -> tuple[dict[str, Any], dict[str, Any]]:
        """(sent, dropped) for this backend's framework: see :func:`frameworks.sampling_parameters`."""
        return sampling_parameters(self.framework, spec)

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
        if self.min_p is not None and "min_p" in FRAMEWORK_SEMANTICS[self.framework].get("accepts", []):
            body["min_p"] = self.min_p
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
                responses.append(self._http.post(body))
                finished()
        else:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                futures = [pool.submit(self._http.post, body) for body in bodies]
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
        data = self._http.post(body)
        choice = first_choice(self.url, data)
        text = (choice.get("message") or {}).get("content") or ""
        top: dict[str, float] = {}
        content = (choice.get("logprobs") or {}).get("content") if top_logprobs > 0 else None
        if content and isinstance(content[0], dict):
            first = content[0]
            for alt in first.get("top_logprobs") or []:
                if isinstance(alt, dict):
                    token = str(alt.get("token", ""))
                    top[token] = max(top.get(token, float("-inf")), logprob(alt.get("logprob")))
            top.setdefault(str(first.get("token", "")), logprob(first.get("logprob")))
        usage = data.get("usage")
        return str(text), top, usage if isinstance(usage, dict) else {}

    # -- responses ------------------------------------------------------------ #

    def _trace(self, row: Row, body: dict[str, Any], data: dict[str, Any]) -> RemoteTrace:
        choice = first_choice(self.url, data)
        if data.get("model"):
            self.identity["server_model"] = data["model"]
        fingerprint = data.get("system_fingerprint")
        if fingerprint:
            seen = self.identity.setdefault("system_fingerprints", [])
            if fingerprint not in seen:
                seen.append(fingerprint)
            self.identity["system_fingerprint"] = fingerprint
        self.identity["logprobs_returned"] = bool((choice.get("logprobs") or {}).get("content"))
        return read_choice(choice, row, body, self._tokens)

    # -- tokens ---------------------------------------------------------------- #

    def token_text(self, token: int) -> str:
        """The server's string for a local token id."""
        return self._tokens.text(token)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of local token ids (their bytes joined, decoded as UTF-8)."""
        return self._tokens.decode(ids)
