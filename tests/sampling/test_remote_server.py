"""What the server says it serves (``GET /models``), checked before anything loads; min-p as it
is in effect; the server recorded in the report (mock transport, no server)."""

from __future__ import annotations

import time

import httpx
import pytest

from diagnose.case import SamplingSpec
from diagnose.errors import BackendError
from diagnose.decode.engine import Row
from diagnose.decode.remote import RemoteBackend
from diagnose.decode.remote_models import quantization_of
from tests.cli.invoke import invoke
from tests.sampling.test_remote import MESSAGES, Recorder, _backend, _completion

GGUF_ID = "/models/smollm2-135m-instruct-q8_0.gguf"


def _models(*ids: str, **extra) -> httpx.Response:
    return httpx.Response(200, json={"object": "list", "data": [{"id": i, "object": "model", **extra} for i in ids]})


def test_the_served_entry_and_its_quantization_are_recorded():
    backend, _ = _backend(Recorder([_models(GGUF_ID, meta={"n_params": 134515008})]), model=GGUF_ID)
    entry = backend.check_server()
    assert entry["meta"] == {"n_params": 134515008}
    assert backend.identity["served"] == entry and backend.identity["quantization"] == "q8_0"


@pytest.mark.parametrize("name, expected", [
    ("TheBloke/Llama-2-7B-Chat-AWQ", "AWQ"), ("llama3.1:8b-instruct-q4_K_M", "q4_K_M"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "GPTQ"), ("neuralmagic/Meta-Llama-3-8B-Instruct-FP8", "FP8"),
    ("meta-llama/Llama-3.1-8B-Instruct", None), ("google/gemma-2-9b-it-bf16", None), ("qwen2-7b", None),
])
def test_quantization_is_read_from_the_names_a_server_gives(name, expected):
    assert quantization_of({"id": name}, name) == expected


def test_a_model_the_server_does_not_serve_is_named_with_what_it_serves():
    backend, _ = _backend(Recorder([_models("llama-3-8b", "qwen-7b")]), model="gemma")
    with pytest.raises(BackendError, match=r"does not serve the model 'gemma'; it serves: llama-3-8b, qwen-7b"):
        backend.check_server()


def test_a_base_url_without_v1_gets_a_hint():
    backend = RemoteBackend("http://llm.test:8080", "m", "llamacpp",
                            client=httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(404))))
    with pytest.raises(BackendError, match=r"try http://llm.test:8080/v1"):
        backend.check_server()


def test_an_unreachable_server_is_reported_without_retries():
    handler = Recorder([httpx.ConnectError("connection refused")])
    backend, sleeps = _backend(handler)
    with pytest.raises(BackendError, match="no OpenAI-compatible server answers"):
        backend.check_server()
    assert len(handler.requests) == 1 and sleeps == []


def test_min_p_is_sent_where_the_framework_takes_it_and_recorded_either_way():
    handler = Recorder([lambda body: _completion(["a"])])
    backend, _ = _backend(handler, "llamacpp", min_p=0.0)
    backend.sample(MESSAGES, [Row(0.7, 0)], SamplingSpec())
    assert handler.bodies[0]["min_p"] == 0.0 and backend.semantics["min_p"] == {"value": 0.0, "set_by": "request"}
    default, _ = _backend(Recorder([lambda body: _completion(["a"])]), "llamacpp")
    assert default.semantics["min_p"] == {"value": 0.05, "set_by": "server default"}
    ollama, _ = _backend(Recorder([lambda body: _completion(["a"])]), "ollama", min_p=0.1)
    assert "min_p" not in ollama.request_body(MESSAGES, Row(0.7, 0), SamplingSpec())
    assert ollama.semantics["min_p"]["ignored_request_value"] == 0.1


def test_a_wrong_server_is_a_usage_error_before_any_model_loads(capsys):
    started = time.perf_counter()
    code = invoke(["run", "fixtures/cases/contradicting-years.yaml", "--server", "http://127.0.0.1:9/v1",
                   "--server-model", "m"])
    assert code == 2 and time.perf_counter() - started < 10
    assert "no OpenAI-compatible server answers at http://127.0.0.1:9/v1" in capsys.readouterr().err


def test_min_p_without_a_server_is_a_usage_error(capsys):
    assert invoke(["run", "fixtures/cases/contradicting-years.yaml", "--min-p", "0"]) == 2
    assert "--min-p and --server-concurrency need --server" in capsys.readouterr().err
