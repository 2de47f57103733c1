"""The whole pipeline with sampling on an OpenAI-compatible server (mock transport).

The server here is a hand-written MockTransport function (even seeds answer 1937,
odd seeds 1952), so the test checks the wiring: center pull from a remote's text,
null metrics the framework cannot report, the determinism probe and the
environment's framework semantics. The backend's parsing of a real server's
answers is covered by tests/sampling/test_remote.py (recorded llama.cpp exchange).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from diagnose.case_file import load_case
from diagnose.pipeline import Diagnoser
from diagnose.decode.remote import RemoteBackend
from diagnose.settings import Settings
from tests.contract import check_report

pytestmark = pytest.mark.models

CASE = Path("fixtures/cases/contradicting-years.yaml")


def _server(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    year = "1937" if body["seed"] % 2 == 0 else "1952"
    tokens = ["It", " opened", " in", f" {year}", "."]
    entries = [
        {"token": t, "logprob": -0.2, "bytes": list(t.encode()),
         "top_logprobs": [{"token": t, "logprob": -0.2, "bytes": list(t.encode())},
                          {"token": " x", "logprob": -2.0, "bytes": list(b" x")}]}
        for t in tokens
    ]
    return httpx.Response(200, json={
        "id": "c", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": entries},
                     "message": {"role": "assistant", "content": "".join(tokens)}}],
    })


def test_remote_sampling_through_the_whole_pipeline():
    client = httpx.Client(transport=httpx.MockTransport(_server))
    remote = RemoteBackend("http://llm.test/v1", "served", "ollama", client=client)
    case = load_case(CASE)
    report = Diagnoser.from_settings(Settings.from_env()).run(case, remote=remote)
    data = json.loads(json.dumps(report.to_dict()))
    case_data = {
        "id": case.id,
        "sampling": {"seeds": case.sampling.seeds, "temperatures": case.sampling.temperatures},
        "documents": [{"id": d.id} for d in case.documents],
    }
    check_report(data, case_data, sampled=True)
    for run in report.sampling.runs:
        assert run.unavailable == ["mean_entropy", "perplexity"]
        assert run.mean_entropy is None and run.perplexity is None
        assert run.center_pull == {"c1": 0.5, "c2": 0.5, "none": 0.0}
        assert run.semantic_entropy == pytest.approx(0.6931, abs=1e-4)  # two meanings, half each
    assert report.environment["backend"] == "remote-ollama"
    assert report.environment["framework"]["framework"] == "ollama"
    assert "sampling.split_center_pull" in {f.rule for f in report.findings}
    assert "environment.nondeterministic" not in {f.rule for f in report.findings}
    assert report.environment["reproducibility"] == "per_seed"
