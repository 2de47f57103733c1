"""RAG_DIAGNOSE_THREADS reaches torch in every command that runs a model, `inputs` included."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from diagnose.models import ModelRegistry
from diagnose.pipeline import Diagnoser
from diagnose.settings import ModelSettings
from tests.cli.invoke import invoke
from tests.factories import make_report


@pytest.fixture
def thread_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    return calls


def test_a_registry_applies_the_thread_setting_before_any_model_loads(thread_calls):
    ModelRegistry(ModelSettings(threads=3))
    ModelRegistry(ModelSettings(threads=0))  # 0: torch's own choice, left alone
    assert thread_calls == [3]


def test_inputs_honours_the_thread_variable(thread_calls, monkeypatch, tmp_path: Path):
    case = tmp_path / "case.yaml"
    case.write_text("id: ferry\nquestion: When does the Maribo ferry leave?\ndocuments: []\n")
    monkeypatch.setenv("RAG_DIAGNOSE_THREADS", "2")
    monkeypatch.setattr(Diagnoser, "inputs", lambda self, parsed, read=False: make_report(case_id=parsed.id))
    assert invoke(["inputs", str(case), "--out", str(tmp_path / "r.json")]) == 0
    assert thread_calls == [2]
