"""The OpenAI-compatible HTTP sampling backend (``diagnose.decode.remote``).

Three kinds of test, labelled in each docstring:

* **recorded**: replays ``tests/data/recorded/llamacpp-chat.json``, a recorded
  exchange of a real llama.cpp server (llama-cpp-python, version in the file's
  header), not a live server, through ``httpx.MockTransport``;
* **mock**: MockTransport unit tests with hand-written responses (retries, errors,
  per-framework request bodies, parsing);
* **live**: ``@pytest.mark.live_server``, skipped unless ``DIAGNOSE_OPENAI_URL``
  points at a running server (``DIAGNOSE_OPENAI_MODEL``, default ``default``;
  ``DIAGNOSE_OPENAI_FRAMEWORK``, default ``llamacpp``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from diagnose.case import SamplingSpec
from diagnose.errors import BackendError
from diagnose.sampling import metrics
from diagnose.decode.engine import Row
from diagnose.decode.remote import (
    FRAMEWORK_SEMANTICS,
    FRAMEWORKS,
    RemoteBackend,
    RemoteTrace,
    unavailable_metrics,
)

RECORDING = Path(__file__).resolve().parents[1] / "data" / "recorded" / "llamacpp-chat.json"
BASE = "http://llm.test/v1"
URL = f"{BASE}/chat/completions"
MESSAGES = [{"role": "user", "content": "Which number is right?"}]
SPEC = SamplingSpec(seeds=2, temperatures=[0.7], top_p=0.9, top_k=50, max_new_tokens=8)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #


def _entry(token: str, logprob: float, alternatives: list[tuple[str, float]]) -> dict[str, Any]:
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives
        ],
    }


def _completion(
    tokens: list[str], finish_reason: str = "stop", model: str = "served-model", **extra: Any
) -> dict[str, Any]:
    content = [_entry(t, -0.5, [(t, -0.5), ("zz", -1.5)]) for t in tokens]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(tokens)},
                "logprobs": {"content": content},
                "finish_reason": finish_reason,
            }
        ],
        **extra,
    }


class Recorder:
    """A MockTransport handler that answers from a list and keeps every request."""

    def __init__(self, answers: list[httpx.Response | Exception | Callable[[dict], Any]]):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return httpx.Response(200, json=answer(json.loads(request.content)))
        return answer

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def _backend(
    handler: Any, framework: str = "llamacpp", model: str = "test-model", **kwargs: Any
) -> tuple[RemoteBackend, list[float]]:
    sleeps: list[float] = []
    backend = RemoteBackend(
        BASE,
        model,
        framework,  # type: ignore[arg-type]
        client=httpx.Client(transport=httpx.MockTransport(handler)),
        sleep=sleeps.append,
        **kwargs,
    )
    return backend, sleeps


# --------------------------------------------------------------------------- #
# recorded: a real llama.cpp server's answers, replayed
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def recording() -> dict[str, Any]:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


def _replay(recording: dict[str, Any]) -> Recorder:
    """Answer each request with the recorded response to the identical request body."""
    table = [(e["request"]["body"], e["response"]) for e in recording["exchanges"]]

    def handler(body: dict[str, Any]) -> Any:
        for request, response in table:
            if request == body:
                return response["body"]
        raise AssertionError(f"no recorded exchange for request body {body}")

    return Recorder([handler])


def _recorded_spec(recording: dict[str, Any], seeds: int) -> SamplingSpec:
    s = recording["case"]["sampling"]
    temperatures = sorted({e["row"]["temperature"] for e in recording["exchanges"]})
    return SamplingSpec(
        seeds=seeds,
        temperatures=temperatures,
        top_p=s["top_p"],
        top_k=s["top_k"],
        repetition_penalty=s["repetition_penalty"],
        max_new_tokens=s["max_new_tokens"],
    )


def _recorded_rows(recording: dict[str, Any], kind: str = "sample") -> list[Row]:
    return [
        Row(e["row"]["temperature"], e["row"]["seed"])
        for e in recording["exchanges"]
        if e["kind"] == kind
    ]


def test_recorded_header_names_server_version_and_model(recording):
    """recorded exchange of a real llama.cpp server (llama-cpp-python), not a live server."""
    header = recording["header"]
    assert header["framework"] == "llamacpp"
    assert header["server"] == "llama-cpp-python"
    assert header["server_version"]
    assert header["model_file"].endswith(".gguf")
    assert header["recorded_at"]


def test_recorded_requests_are_what_the_backend_sends(recording):
    """recorded exchange of a real llama.cpp server (llama-cpp-python), not a live server.

    The backend rebuilds byte-identical request bodies, and they carry the seed,
    temperature, top_p, max_tokens and logprobs settings.
    """
    handler = _replay(recording)
    backend, _ = _backend(handler, model=recording["header"]["model"])
    rows = _recorded_rows(recording)
    spec = _recorded_spec(recording, seeds=2)
    backend.sample(recording["case"]["messages"], rows, spec)
    assert len(handler.bodies) == len(rows)
    for row, body in zip(rows, handler.bodies):
        assert body["seed"] == row.seed
        assert body["temperature"] == row.temperature
        assert body["top_p"] == spec.top_p
        assert body["max_tokens"] == spec.max_new_tokens
        assert body["logprobs"] is True and body["top_logprobs"] == 2
        assert body["top_k"] == spec.top_k and body["repeat_penalty"] == spec.repetition_penalty
        assert body["n"] == 1


def test_recorded_traces_parse(recording):
    """recorded exchange of a real llama.cpp server (llama-cpp-python), not a live server."""
    backend, _ = _backend(_replay(recording), model=recording["header"]["model"])
    rows = _recorded_rows(recording)
    traces = backend.sample(recording["case"]["messages"], rows, _recorded_spec(recording, 2))
    recorded = [e for e in recording["exchanges"] if e["kind"] == "sample"]
    for trace, exchange in zip(traces, recorded):
        choice = exchange["response"]["body"]["choices"][0]
        assert isinstance(trace, RemoteTrace)
        assert trace.text == choice["message"]["content"]
        assert trace.server_finish_reason == choice["finish_reason"]
        assert trace.finish_reason == ("length" if choice["finish_reason"] == "length" else "stop")
        content = choice["logprobs"]["content"]
        assert trace.token_texts == [c["token"] for c in content]
        assert len(trace.tokens) == len(trace.steps) == len(content)
        for step, c in zip(trace.steps, content):
            assert step.raw_logprob == pytest.approx(c["logprob"])
            assert math.isnan(step.entropy)
            assert 1.0 >= step.top2_probs[0] >= step.top2_probs[1] >= 0.0
            assert step.raw_logprob <= 0.0
        # 16 new tokens asked for: every sample either hit the budget or stopped.
        assert len(trace.tokens) <= recording["case"]["sampling"]["max_new_tokens"]
        if trace.finish_reason == "length":
            assert len(trace.tokens) == recording["case"]["sampling"]["max_new_tokens"]
    # The token-level metrics and perplexity run on the parsed traces.
    assert 0.0 < metrics.first_token_divergence([t.steps[0].token for t in traces]) <= 1.0
    assert 0.0 <= metrics.repetition_rate([t.tokens for t in traces]) <= 1.0
    assert math.isfinite(metrics.perplexity([[s.raw_logprob for s in t.steps] for t in traces]))
    assert backend.identity["server_model"] == recording["exchanges"][0]["response"]["body"]["model"]


def test_recorded_same_seed_same_text(recording):
    """recorded exchange of a real llama.cpp server (llama-cpp-python), not a live server.

    The recording asked seeds 0 and 1 at T=0.7 twice; the server gave the same text
    both times, and the backend parses both to the same local token ids.
    """
    backend, _ = _backend(_replay(recording), model=recording["header"]["model"])
    spec = _recorded_spec(recording, 2)
    first = backend.sample(recording["case"]["messages"], _recorded_rows(recording), spec)
    again = backend.sample(recording["case"]["messages"], _recorded_rows(recording, "repeat"), spec)
    by_row = {t.row: t for t in first}
    assert again
    for trace in again:
        assert trace.text == by_row[trace.row].text
        assert trace.tokens == by_row[trace.row].tokens


def test_recorded_decode_matches_the_server_text(recording):
    """recorded exchange of a real llama.cpp server (llama-cpp-python), not a live server."""
    backend, _ = _backend(_replay(recording), model=recording["header"]["model"])
    traces = backend.sample(
        recording["case"]["messages"], _recorded_rows(recording), _recorded_spec(recording, 2)
    )
    for trace in traces:
        assert backend.decode(trace.tokens).strip() == trace.text.strip()


# --------------------------------------------------------------------------- #
# mock: request bodies per framework
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_request_body_carries_the_row_and_spec(framework):
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, framework)
    backend.sample(MESSAGES, [Row(0.7, 0), Row(1.2, 5)], SPEC)
    first, second = handler.bodies
    assert handler.requests[0].url == URL
    assert first["model"] == "test-model" and first["messages"] == MESSAGES
    assert (first["seed"], first["temperature"]) == (0, 0.7)
    assert (second["seed"], second["temperature"]) == (5, 1.2)
    for body in handler.bodies:
        assert body["top_p"] == 0.9 and body["max_tokens"] == 8
        assert body["n"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 2


def test_vllm_gets_top_k_and_repetition_penalty():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, "vllm")
    spec = SamplingSpec(seeds=1, temperatures=[0.7], top_k=0, repetition_penalty=1.3)
    backend.sample(MESSAGES, [Row(0.7, 0)], spec)
    body = handler.bodies[0]
    assert body["top_k"] == -1  # off, in old and new releases alike
    assert body["repetition_penalty"] == 1.3
    assert backend.dropped == {}


def test_llamacpp_gets_top_k_and_repeat_penalty():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, "llamacpp")
    backend.sample(MESSAGES, [Row(0.7, 0)], SamplingSpec(top_k=30, repetition_penalty=1.1))
    body = handler.bodies[0]
    assert body["top_k"] == 30 and body["repeat_penalty"] == 1.1
    assert "repetition_penalty" not in body
    assert backend.dropped == {}


@pytest.mark.parametrize("framework", ["openai", "ollama"])
def test_unsupported_parameters_are_dropped_and_recorded(framework):
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, framework)
    backend.sample(MESSAGES, [Row(0.7, 0)], SamplingSpec(top_k=50, repetition_penalty=1.2))
    body = handler.bodies[0]
    assert "top_k" not in body and "repetition_penalty" not in body and "repeat_penalty" not in body
    assert backend.dropped == {"top_k": 50, "repetition_penalty": 1.2}
    assert backend.semantics["dropped_parameters"] == backend.dropped


def test_api_key_goes_in_the_authorization_header_only():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, "openai", api_key="sk-test")
    backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert handler.requests[0].headers["authorization"] == "Bearer sk-test"
    assert "sk-test" not in json.dumps(backend.identity) + json.dumps(handler.bodies)
    anonymous, _ = _backend(handler, "vllm")
    anonymous.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert "authorization" not in handler.requests[-1].headers


def test_extra_body_is_merged_into_every_request():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, "llamacpp", extra_body={"min_p": 0.0})
    backend.sample(MESSAGES, [Row(0.7, 0), Row(0.7, 1)], SPEC)
    assert [b["min_p"] for b in handler.bodies] == [0.0, 0.0]


# --------------------------------------------------------------------------- #
# mock: parsing
# --------------------------------------------------------------------------- #


def test_tokens_get_stable_local_ids_and_decode_back():
    """mock: MockTransport unit test, no server."""
    answers = {0: ["The", " answer", " is", " 4", ",", "120"], 1: ["The", " answer", " is", " 3"]}
    handler = Recorder([lambda body: _completion(answers[body["seed"]],
                                                 "length" if body["seed"] == 0 else "stop")])
    backend, _ = _backend(handler)
    first, second = backend.sample(MESSAGES, [Row(0.7, 0), Row(0.7, 1)], SPEC)
    assert first.tokens[:3] == second.tokens[:3]  # same strings, same ids
    assert first.tokens[3] != second.tokens[3]
    assert backend.decode(first.tokens) == "The answer is 4,120" == first.text
    assert backend.token_text(first.tokens[1]) == " answer"
    assert (first.finish_reason, second.finish_reason) == ("length", "stop")
    step = first.steps[0]
    assert step.token == first.tokens[0]
    assert step.raw_logprob == -0.5 and math.isnan(step.entropy)
    assert step.top2_tokens[0] == first.tokens[0]
    assert backend.token_text(step.top2_tokens[1]) == "zz"
    assert step.top2_probs == pytest.approx((math.exp(-0.5), math.exp(-1.5)))
    # a later call keeps the same ids
    (again,) = backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert again.tokens == first.tokens
    assert metrics.first_token_divergence([first.steps[0].token, second.steps[0].token]) == 0.5


def test_finish_reasons_other_than_length_are_stop():
    """mock: MockTransport unit test, no server."""
    reasons = iter(["length", "stop", "content_filter", None])
    handler = Recorder([lambda body: _completion(["x"], next(reasons))])
    backend, _ = _backend(handler)
    traces = backend.sample(MESSAGES, [Row(0.7, s) for s in range(4)], SPEC)
    assert [t.finish_reason for t in traces] == ["length", "stop", "stop", "stop"]
    assert [t.server_finish_reason for t in traces] == ["length", "stop", "content_filter", None]


def test_identity_records_server_model_and_fingerprints():
    """mock: MockTransport unit test, no server."""
    prints = iter(["fp_a", "fp_a", "fp_b"])
    handler = Recorder([lambda body: _completion(["x"], system_fingerprint=next(prints))])
    backend, _ = _backend(handler, "openai")
    backend.sample(MESSAGES, [Row(0.7, s) for s in range(3)], SPEC)
    identity = backend.identity
    assert identity["id"] == "test-model" and identity["base_url"] == BASE
    assert identity["framework"] == "openai" and identity["server_model"] == "served-model"
    assert identity["system_fingerprint"] == "fp_b"
    assert identity["system_fingerprints"] == ["fp_a", "fp_b"]


def test_missing_logprobs_leave_text_but_no_tokens():
    """mock: MockTransport unit test, no server."""
    answer = _completion(["hi"])
    answer["choices"][0]["logprobs"] = None
    backend, _ = _backend(Recorder([httpx.Response(200, json=answer)]))
    (trace,) = backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert trace.text == "hi" and trace.tokens == [] and trace.steps == []
    assert backend.identity["logprobs_returned"] is False


def test_a_single_alternative_pads_top2():
    """mock: MockTransport unit test, no server."""
    answer = _completion(["a"])
    answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = [
        {"token": "a", "logprob": 0.0, "bytes": [97]}
    ]
    backend, _ = _backend(Recorder([httpx.Response(200, json=answer)]))
    (trace,) = backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert trace.steps[0].top2_tokens[1] == -1 and trace.steps[0].top2_probs == (1.0, 0.0)


def test_on_row_reports_progress_and_concurrency_keeps_order():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([lambda body: _completion([f"s{body['seed']}", " end"])])
    backend, _ = _backend(handler)
    seen: list[tuple[int, int]] = []
    rows = [Row(0.7, s) for s in range(5)]
    serial = backend.sample(MESSAGES, rows, SPEC, on_row=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 5) for i in range(1, 6)]
    parallel_backend, _ = _backend(handler, concurrency=3)
    parallel = parallel_backend.sample(MESSAGES, rows, SPEC)
    assert [t.text for t in parallel] == [t.text for t in serial]
    assert [t.tokens for t in parallel] == [t.tokens for t in serial]


# --------------------------------------------------------------------------- #
# mock: retries and errors
# --------------------------------------------------------------------------- #


def test_500_then_200_is_retried():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([httpx.Response(500, text="boom"), httpx.Response(200, json=_completion(["ok"]))])
    backend, sleeps = _backend(handler, backoff=0.25)
    (trace,) = backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert trace.text == "ok"
    assert len(handler.requests) == 2
    assert handler.bodies[0] == handler.bodies[1]
    assert sleeps == [0.25]


def test_429_honours_retry_after():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([
        httpx.Response(429, headers={"Retry-After": "2"}, text="slow down"),
        httpx.Response(200, json=_completion(["ok"])),
    ])
    backend, sleeps = _backend(handler)
    backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert sleeps == [2.0]


def test_400_is_not_retried_and_names_status_url_and_body():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([httpx.Response(400, json={"error": {"message": "top_logprobs too large"}})])
    backend, sleeps = _backend(handler)
    with pytest.raises(BackendError) as raised:
        backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    message = str(raised.value)
    assert "HTTP 400" in message and URL in message and "top_logprobs too large" in message
    assert len(handler.requests) == 1 and sleeps == []


def test_persistent_503_gives_up_after_the_retries():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([httpx.Response(503, text="overloaded")])
    backend, sleeps = _backend(handler, max_retries=2, backoff=0.5)
    with pytest.raises(BackendError, match=r"HTTP 503 after 3 attempt\(s\): overloaded") as raised:
        backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert URL in str(raised.value)
    assert len(handler.requests) == 3 and sleeps == [0.5, 1.0]


def test_connection_errors_are_retried_then_reported():
    """mock: MockTransport unit test, no server."""
    handler = Recorder([httpx.ConnectError("refused")])
    backend, sleeps = _backend(handler, max_retries=1)
    with pytest.raises(BackendError, match="could not be reached after 2 attempt") as raised:
        backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert URL in str(raised.value) and "ConnectError" in str(raised.value)
    assert len(handler.requests) == 2


@pytest.mark.parametrize(
    "response, fragment",
    [
        (httpx.Response(200, text="<html>proxy</html>"), "not JSON"),
        (httpx.Response(200, json={"choices": []}), "without choices"),
        (httpx.Response(200, json=[1, 2]), "not an object"),
    ],
)
def test_malformed_answers_raise_backend_error(response, fragment):
    """mock: MockTransport unit test, no server."""
    backend, _ = _backend(Recorder([response]))
    with pytest.raises(BackendError, match=fragment) as raised:
        backend.sample(MESSAGES, [Row(0.7, 0)], SPEC)
    assert URL in str(raised.value)


def test_constructor_rejects_bad_arguments():
    with pytest.raises(ValueError, match="framework"):
        RemoteBackend(BASE, "m", "tgi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="base_url"):
        RemoteBackend(" ", "m", "vllm")


# --------------------------------------------------------------------------- #
# semantics and metric availability
# --------------------------------------------------------------------------- #


def test_unavailable_metrics_per_framework():
    assert unavailable_metrics("vllm") == ["mean_entropy"]
    assert unavailable_metrics("llamacpp") == ["mean_entropy"]
    assert unavailable_metrics("ollama") == ["mean_entropy", "perplexity"]
    assert unavailable_metrics("openai") == ["mean_entropy", "perplexity"]
    with pytest.raises(ValueError):
        unavailable_metrics("tgi")


def test_semantics_describe_each_framework():
    llama = FRAMEWORK_SEMANTICS["llamacpp"]
    assert llama["order"][-2:] == ["temperature", "dist"]
    assert llama["defaults"]["top_k"] == 40 and llama["defaults"]["repeat_last_n"] == 64
    assert "last" in llama["temperature_position"]
    assert FRAMEWORK_SEMANTICS["vllm"]["order"].index("temperature") < FRAMEWORK_SEMANTICS["vllm"][
        "order"
    ].index("top_p")
    for framework in FRAMEWORKS:
        assert FRAMEWORK_SEMANTICS[framework]["framework"] == framework
    backend = RemoteBackend(BASE, "m", "ollama")
    assert backend.semantics["unavailable_metrics"] == ["mean_entropy", "perplexity"]
    backend.close()


# --------------------------------------------------------------------------- #
# live: a running server
# --------------------------------------------------------------------------- #


@pytest.mark.live_server
@pytest.mark.skipif(not os.environ.get("DIAGNOSE_OPENAI_URL"), reason="DIAGNOSE_OPENAI_URL is not set")
def test_live_server_same_seed_same_text():
    """live: samples through the server at DIAGNOSE_OPENAI_URL."""
    backend = RemoteBackend(
        os.environ["DIAGNOSE_OPENAI_URL"],
        os.environ.get("DIAGNOSE_OPENAI_MODEL", "default"),
        os.environ.get("DIAGNOSE_OPENAI_FRAMEWORK", "llamacpp"),  # type: ignore[arg-type]
        timeout=300,
    )
    messages = [
        {"role": "system", "content": "Answer only from the documents."},
        {"role": "user", "content": "Document [1] (id: d1)\nThe bridge opened in 1931.\n\n"
                                    "Document [2] (id: d2)\nThe bridge opened in 1937.\n\n"
                                    "Question: When did the bridge open?"},
    ]
    spec = SamplingSpec(seeds=1, temperatures=[1.0], top_p=0.95, top_k=40, max_new_tokens=12)
    with backend:
        rows = [Row(1.0, 7), Row(1.0, 7), Row(1.0, 8)]
        first, again, other = backend.sample(messages, rows, spec)
    assert first.text and first.tokens
    assert again.text == first.text
    assert again.tokens == first.tokens
    assert all(math.isfinite(s.raw_logprob) for s in first.steps)
    assert first.finish_reason in ("stop", "length") and other.finish_reason in ("stop", "length")
