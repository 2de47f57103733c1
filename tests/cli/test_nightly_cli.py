"""`diagnose nightly` from the command line: outputs, exit codes under --fail-on (fake pipeline)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diagnose.cli import _run, cli
from tests.nightly.test_runner import CHANGED, LIBRARY, fake_report


def invoke(args: list[str]) -> int:
    return _run(lambda: cli.main(args=args, prog_name="diagnose", standalone_mode=False), False)


@pytest.fixture(autouse=True)
def fake_pipeline(monkeypatch):
    """The CLI asks diagnose.pipeline for its factory at call time; hand it the fake."""
    from diagnose import pipeline

    monkeypatch.setattr(pipeline, "nightly_diagnose_factory", lambda reader=None: fake_report)


def test_nightly_passes_unchanged_and_fails_changed(tmp_path: Path, capsys):
    runs = tmp_path / "runs"
    assert invoke(["nightly", str(LIBRARY), "--runs-dir", str(runs)]) == 0
    assert invoke(["nightly", str(LIBRARY), "--runs-dir", str(runs)]) == 0
    first_run = sorted(p for p in runs.iterdir() if p.is_dir())[0]
    junit, markdown = tmp_path / "out" / "junit.xml", tmp_path / "out" / "summary.md"
    code = invoke(["nightly", str(CHANGED), "--runs-dir", str(runs), "--baseline", str(first_run),
                   "--junit", str(junit), "--markdown", str(markdown)])
    assert code == 3  # the gate reached --fail-on (default fail); 1 is kept for internal failures
    out = capsys.readouterr().out
    assert "fail canberra-capital" in out and "truncation_rate" in out
    cases = ET.parse(junit).getroot().iter("testcase")
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {"canberra-capital", "eiffel-tower-opening"}
    assert "canberra-capital" in markdown.read_text(encoding="utf-8")
    assert invoke(["nightly", str(CHANGED), "--runs-dir", str(runs), "--baseline", str(first_run),
                   "--fail-on", "never"]) == 0
    junit.unlink()
    assert invoke(["nightly", str(CHANGED), "--runs-dir", str(runs), "--baseline", str(first_run),
                   "--fail-on", "warn", "--junit", str(junit)]) == 3
    assert junit.is_file()  # the gate tripped, but the command ran: its outputs are complete


def test_nightly_with_an_unknown_baseline_is_a_usage_error(tmp_path: Path, capsys):
    assert invoke(["nightly", str(LIBRARY), "--runs-dir", str(tmp_path), "--baseline", "no-such-run"]) == 2
    assert "no-such-run" in capsys.readouterr().err


def test_nightly_with_a_malformed_variable_is_a_usage_error(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("RAG_DIAGNOSE_DTYPE", "fp8")
    assert invoke(["nightly", str(LIBRARY), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert "RAG_DIAGNOSE_DTYPE" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
