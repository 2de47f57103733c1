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
    monkeypatch.setattr(Diagnoser, "inputs", lambda self, parsed, read=False, reader=None: make_report(case_id=parsed.id))
    assert invoke(["inputs", str(case), "--out", str(tmp_path / "r.json")]) == 0
    assert thread_calls == [2]


@pytest.mark.models
def test_an_inputs_report_records_the_thread_count_it_ran_with(monkeypatch, tmp_path: Path):
    """With the real embedder: the report's environment says the threads the variable asked for."""
    import json

    case = tmp_path / "case.yaml"
    case.write_text("id: ferry\nquestion: When does the Maribo ferry leave?\ndocuments:\n"
                    "  - {id: m1, text: The Maribo ferry leaves at 7:40 on weekdays.}\n"
                    "  - {id: m2, text: On weekdays the first Maribo ferry leaves at 8:15.}\n")
    before = torch.get_num_threads()
    wanted = 1 if before != 1 else 2
    monkeypatch.setenv("RAG_DIAGNOSE_THREADS", str(wanted))
    try:
        assert invoke(["inputs", str(case), "--out", str(tmp_path / "r.json")]) == 0
    finally:
        torch.set_num_threads(before)
    assert json.loads((tmp_path / "r.json").read_text())["environment"]["threads"] == wanted
