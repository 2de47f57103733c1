"""Exit codes (contract section 2): 0 ran, 2 bad usage or an invalid case, 1 internal, 3 --fail-on.

The pipeline is faked: these tests are about the command line, not the models.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import diagnose.cli as cli_module
from diagnose.cli import verdict_exit
from diagnose.errors import EXIT_GATE, EXIT_INTERNAL, EXIT_USAGE, SettingError
from diagnose.report import Report
from diagnose.settings import Settings
from tests.cli.invoke import invoke
from tests.factories import make_report

CASE = """
id: exit-codes
question: What year?
documents:
  - {id: d1, text: "It happened in 1999."}
"""



def report_with(verdict: str) -> Report:
    return make_report(verdict, "exit-codes")


class FakeDiagnoser:
    def __init__(self, verdict: str = "ok", crash: Exception | None = None) -> None:
        self.verdict, self.crash = verdict, crash

    def _report(self) -> Report:
        if self.crash is not None:
            raise self.crash
        return report_with(self.verdict)

    def inputs(self, case, read: bool = False, reader: str | None = None) -> Report:
        return self._report()

    def run(self, case, **kwargs) -> Report:
        return self._report()


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text(CASE, encoding="utf-8")
    return path


def fake(monkeypatch, **kwargs) -> None:
    diagnoser = FakeDiagnoser(**kwargs)
    monkeypatch.setattr(cli_module, "_diagnoser", lambda progress, settings=None: diagnoser)


@pytest.mark.parametrize(
    "verdict, fail_on, code",
    [("ok", "warn", 0), ("warn", "warn", 3), ("fail", "warn", 3), ("warn", "fail", 0), ("fail", "fail", 3),
     ("fail", "never", 0)],
)
def test_verdict_exit_follows_fail_on(verdict: str, fail_on: str, code: int) -> None:
    assert verdict_exit(verdict, fail_on) == code
    assert EXIT_GATE == 3 and EXIT_INTERNAL == 1 and EXIT_USAGE == 2


@pytest.mark.parametrize("command", ["run", "inputs"])
def test_a_failing_verdict_exits_0_by_default_and_3_under_fail_on(command, case_file, tmp_path, monkeypatch):
    fake(monkeypatch, verdict="fail")
    out = tmp_path / "r.json"
    assert invoke([command, str(case_file), "--out", str(out)]) == 0
    assert invoke([command, str(case_file), "--out", str(out), "--fail-on", "never"]) == 0
    out.unlink()
    assert invoke([command, str(case_file), "--out", str(out), "--fail-on", "fail"]) == 3
    assert json.loads(out.read_text(encoding="utf-8"))["verdict"] == "fail"  # the report is complete


def test_run_writes_every_output_before_exit_3(case_file, tmp_path, monkeypatch):
    fake(monkeypatch, verdict="warn")
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    assert invoke(["run", str(case_file), "--out", str(out), "--html", str(page), "--fail-on", "warn"]) == 3
    assert json.loads(out.read_text(encoding="utf-8"))["verdict"] == "warn"
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert invoke(["run", str(case_file), "--out", str(out), "--fail-on", "fail"]) == 0  # warn < fail


def test_inputs_prints_the_report_and_still_exits_3(case_file, monkeypatch, capsys):
    fake(monkeypatch, verdict="warn")
    assert invoke(["inputs", str(case_file), "--fail-on", "warn"]) == 3
    assert json.loads(capsys.readouterr().out)["verdict"] == "warn"


@pytest.mark.parametrize("command", ["run", "inputs"])
def test_an_internal_failure_exits_1_and_writes_nothing(command, case_file, tmp_path, monkeypatch, capsys):
    fake(monkeypatch, crash=RuntimeError("boom"))
    out = tmp_path / "out" / "r.json"
    extra = ["--html", str(tmp_path / "out" / "r.html")] if command == "run" else []
    assert invoke([command, str(case_file), "--out", str(out), "--fail-on", "fail", *extra]) == 1
    assert "internal error: RuntimeError: boom" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_fail_on_takes_only_the_three_levels(case_file, monkeypatch, capsys):
    fake(monkeypatch)
    assert invoke(["run", str(case_file), "--fail-on", "sometimes"]) == 2
    assert "--fail-on" in capsys.readouterr().err


# --- environment variables -------------------------------------------------------------------


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        ("RAG_DIAGNOSE_THREADS", "abc", "whole number"),
        ("RAG_DIAGNOSE_THREADS", "-2", "whole number"),
        ("RAG_DIAGNOSE_THREADS", "1.5", "whole number"),
        ("RAG_DIAGNOSE_DEVICE", "gpu", "cuda:N"),
        ("RAG_DIAGNOSE_DTYPE", "fp8", "bfloat16"),
        ("RAG_DIAGNOSE_CACHE_DIR", "  ", "directory"),
        ("DATABASE_URL", "mysql://db/x", "postgresql://"),
    ],
)
@pytest.mark.parametrize("command", ["inputs", "run"])
def test_a_malformed_variable_is_a_usage_error_naming_it(command, variable, value, expected, case_file, tmp_path,
                                                          monkeypatch, capsys):
    monkeypatch.setenv(variable, value)
    out = tmp_path / "r.json"
    assert invoke([command, str(case_file), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {variable}: expected ") and expected in err and repr(value) in err
    assert "internal error" not in err and not out.exists()


def test_bench_reports_a_malformed_variable_as_usage(monkeypatch, capsys):
    monkeypatch.setenv("RAG_DIAGNOSE_THREADS", "abc")
    assert invoke(["bench", "sampling", "--seeds", "2"]) == 2
    assert "usage: RAG_DIAGNOSE_THREADS" in capsys.readouterr().err


def test_settings_parse_the_documented_forms():
    settings = Settings.from_env({
        "RAG_DIAGNOSE_THREADS": " 4 ", "RAG_DIAGNOSE_DEVICE": "cuda:1", "RAG_DIAGNOSE_DTYPE": "bfloat16",
        "RAG_DIAGNOSE_CACHE_DIR": "/tmp/rd-cache", "DATABASE_URL": "postgresql+psycopg://u@h:5432/db",
    })
    models = settings.models
    assert (models.threads, models.device, models.dtype, str(models.cache_dir)) == (4, "cuda:1", "bfloat16", "/tmp/rd-cache")
    assert settings.database.url == "postgresql+psycopg://u@h:5432/db"
    defaults = Settings.from_env({})
    assert defaults.models.threads == 0 and defaults.database.url == "sqlite:///rag-diagnose.db"
    with pytest.raises(SettingError) as info:
        Settings.from_env({"RAG_DIAGNOSE_THREADS": "abc"})
    assert info.value.variable == "RAG_DIAGNOSE_THREADS" and info.value.exit_code == 2


# --- options parsed by hand ------------------------------------------------------------------


@pytest.mark.parametrize("value, shown", [("0.5,abc", "'abc'"), ("nan", "finite"), (",", "at least one")])
def test_bench_temperatures_that_are_not_numbers_are_usage_errors(value, shown, capsys):
    assert invoke(["bench", "sampling", "--temperatures", value]) == 2
    err = capsys.readouterr().err
    assert "--temperatures" in err and shown in err and "invalid case" not in err


def test_bench_temperatures_out_of_range_name_the_option(capsys):
    assert invoke(["bench", "sampling", "--temperatures", "0.5,9"]) == 2
    err = capsys.readouterr().err
    assert "--temperatures" in err and "sampling.temperatures[1]" in err and "invalid case" not in err


def test_bench_model_that_does_not_exist_names_the_option(tmp_path, capsys):
    assert invoke(["bench", "sampling", "--model", str(tmp_path / "absent.gguf")]) == 2
    err = capsys.readouterr().err
    assert "--model" in err and "absent.gguf" in err and "invalid case" not in err


@pytest.mark.parametrize("url", ["", "localhost:8000", "ftp://h/v1"])
def test_run_rejects_a_server_that_is_not_a_url(url, case_file, monkeypatch, capsys):
    fake(monkeypatch)
    assert invoke(["run", str(case_file), "--server", url, "--server-model", "m"]) == 2
    assert "--server" in capsys.readouterr().err


@pytest.mark.parametrize("extra, named", [
    ([], "--read"),  # --server reads the documents: it needs --read
    (["--read", "--server-model", ""], "--server-model"),
])
def test_bench_inputs_server_needs_read_and_a_model(extra, named, tmp_path, capsys):
    (tmp_path / "c.yaml").write_text("id: c\nquestion: q?\ndocuments: []\n")
    assert invoke(["bench", "inputs", str(tmp_path), "--server", "http://127.0.0.1:9/v1", *extra]) == 2
    assert named in capsys.readouterr().err


def test_bench_prompts_beyond_the_case_documents_name_the_option(tmp_path, capsys):
    """--prompts K needs K - 1 documents to drop (checked before any model loads)."""
    assert invoke(["bench", "sampling", "--prompts", "60"]) == 2
    assert "--prompts 60: the case has 52 documents, so at most 53 prompts" in capsys.readouterr().err
