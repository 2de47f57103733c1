"""Bad input exits 2 with a message naming the field, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.invoke import invoke

GOOD = """
id: ok-case
question: What year?
documents:
  - {id: d1, text: "It happened in 1999."}
"""



@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: s.replace("What year?", '""'), "question"),
        (lambda s: s + '  - {id: d1, text: "again"}\n', "documents[1].id"),
        (lambda s: s + "sampling: {temperatures: [0.5, 3.0]}\n", "sampling.temperatures[1]"),
        (lambda s: s + "sampling: {seeds: 100000}\n", "sampling.seeds"),
        (lambda s: s + "constraints: [{type: sentiment}]\n", "constraints[0].type"),
        (lambda s: s + "model: no-such-model\n", "model"),
        (lambda s: s + "reader: oracle\n", "reader"),
    ],
)
@pytest.mark.parametrize("command", ["inputs", "run"])
def test_invalid_case_exits_2_naming_the_field(tmp_path: Path, capsys, edit, field, command):
    case = tmp_path / "case.yaml"
    case.write_text(edit(GOOD), encoding="utf-8")
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    args = [command, str(case), "--out", str(out)] + (["--html", str(page)] if command == "run" else [])
    assert invoke(args) == 2
    err = capsys.readouterr().err
    assert f"{field}:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml"]


def test_non_utf8_document_text_names_the_field(tmp_path: Path, capsys):
    case = tmp_path / "case.yaml"
    case.write_bytes(GOOD.replace("It happened", "It \xff happened").encode("latin-1"))
    assert invoke(["inputs", str(case), "--out", str(tmp_path / "r.json")]) == 2
    assert "documents[0].text" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_missing_case_file_is_a_usage_error(tmp_path: Path, capsys):
    assert invoke(["run", str(tmp_path / "absent.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_help_lists_the_commands(capsys):
    assert invoke(["--help"]) == 0
    text = capsys.readouterr().out
    assert "inputs" in text and "run" in text


def test_python_dash_m_runs_the_same_command_line(tmp_path: Path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "diagnose", "run", str(tmp_path / "absent.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not found" in done.stderr


def test_outputs_are_all_or_nothing(tmp_path: Path, monkeypatch):
    """If the second of two outputs cannot be written, the first is not written either."""
    import os

    from diagnose import report as report_module

    real_fdopen, opened = os.fdopen, []

    def fdopen_failing_second(fd, *args, **kwargs):
        opened.append(fd)
        if len(opened) == 2:
            os.close(fd)
            raise OSError("disk full")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(report_module.os, "fdopen", fdopen_failing_second)
    first, second = tmp_path / "a.json", tmp_path / "sub" / "b.html"
    with pytest.raises(OSError, match="disk full"):
        report_module.write_all_atomic({first: "one", second: "two"})
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_bench_rejects_out_of_range_temperatures(capsys):
    assert invoke(["bench", "sampling", "--temperatures", "0.5,9"]) == 2
    assert "sampling.temperatures[1]" in capsys.readouterr().err
    assert invoke(["bench", "sampling", "--temperatures", "0"]) == 2
    assert "--temperatures" in capsys.readouterr().err


def test_outputs_get_the_usual_file_permissions(tmp_path: Path):
    import os
    import stat

    from diagnose.report import write_atomic

    mask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "r.json", "{}")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644


@pytest.mark.parametrize("command", ["inputs", "run", "nightly"])
def test_an_unknown_reader_option_exits_2_listing_the_choices(tmp_path: Path, capsys, command):
    case = tmp_path / "case.yaml"
    case.write_text(GOOD, encoding="utf-8")
    assert invoke([command, str(case if command != "nightly" else tmp_path), "--reader", "ftp://reader"]) == 2
    err = capsys.readouterr().err
    assert "--reader" in err and "static, reference, sampled" in err


def test_inputs_help_says_who_reads_as_run_does(capsys):
    """`inputs --help` used to call the read tier "the default in `run`"; both now default to the reader."""
    assert invoke(["inputs", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "reference when installed, else static" in shown and "the default in `run`)" not in shown
