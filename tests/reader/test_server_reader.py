"""``--reader URL``: llama-cpp-python's own OpenAI-compatible server serving the reference GGUF
reads made-up documents as the in-process reader does (same prompts, greedy)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from diagnose.reader.prompt import NOT_STATED, states_nothing
from diagnose.reader.structured import reference_reader, server_reader

pytestmark = [pytest.mark.reader, pytest.mark.models]

QUESTION = "How long is the warranty on the Korimako kettle?"
DOCUMENTS = [
    "The Korimako electric kettle comes with a two-year warranty covering the heating element.",
    "Korimako kettle, model K2. Warranty: 24 months from the date of purchase.",
    "Our cafe on Quay Street serves tea from 7 am. The kettles are refilled hourly.",
]
YES_NO = "Is the Korimako kettle dishwasher safe?"


@pytest.fixture(scope="module")
def engine():
    from diagnose.models import ModelRegistry
    from diagnose.settings import Settings

    registry = ModelRegistry(Settings.from_env().models)
    if not registry.reference_installed():
        pytest.skip("the reference reader is not installed (make setup installs it)")
    return registry.reference_engine()


@pytest.fixture(scope="module")
def server_url(engine):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    threads = str(os.cpu_count() or 1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(engine.path), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--n_threads", threads, "--n_threads_batch", threads,
         "--logits_all", "true", "--seed", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        else:
            pytest.fail("llama_cpp.server did not answer within 180 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_server_serving_the_same_weights_reads_as_the_in_process_reader(engine, server_url):
    local = reference_reader(engine).read(QUESTION, DOCUMENTS, False)
    remote = server_reader(server_url).read(QUESTION, DOCUMENTS, False)
    # Greedy decoding on two engines (the in-process one reuses the shared head's key/value cache)
    # may word a reply in two ways where two tokens are near-tied: "... not mentioned in this
    # document" / "in the document", "a kitchen appliance" / "a kettle". What the stage reads must
    # be the same: each answer (or that there is none) and the name of the thing it is about.
    assert [_as_read(r.answer) for r in remote] == [_as_read(r.answer) for r in local]
    assert [_name(r.about) for r in remote] == [_name(r.about) for r in local]


def _as_read(answer: str) -> str:
    return NOT_STATED if states_nothing(answer) else answer


def _name(about: str | None) -> str | None:
    return about.split(",")[0].strip() if about else None


def test_a_server_gives_the_same_yes_no_margins(engine, server_url):
    texts = ["Korimako kettle care: wipe with a damp cloth. Never put the kettle in a dishwasher.",
             "The Korimako kettle's lid and body are dishwasher safe on the top rack."]
    local = reference_reader(engine).read(YES_NO, texts, True)
    remote = server_reader(server_url).read(YES_NO, texts, True)
    assert [r.answer for r in remote] == [r.answer for r in local]
    for a, b in zip(local, remote):
        assert b.yes_margin == pytest.approx(a.yes_margin, abs=0.25)
