"""The terminal summary at 80 columns and the plain progress lines written off a terminal."""

from __future__ import annotations

import io

import msgspec
from rich.console import Console as RichConsole

from diagnose.console import Console, LineProgress, pull_cell
from diagnose.report import Report
from tests.pages.reports import report, run

LONG_ADVICE = "word " * 60


def _summary(width: int, data: dict) -> str:
    console = Console()
    buffer = io.StringIO()
    console.out = RichConsole(file=buffer, width=width, color_system=None)
    console.summary(msgspec.convert(data, Report))
    return buffer.getvalue()


def _two_center_report() -> dict:
    runs = [run(t, semantic_entropy=0.69, pull={"c0": 0.5, "c1": 0.375, "none": 0.125}) for t in (0.2, 0.8)]
    return report(centers={"c0": "opened in 1937", "c1": "a much longer label about 1952"}, runs=runs,
                  documents=[("d1", "c0"), ("d2", "c1")], findings=[("input", "input.competing_centers", "warn")],
                  text=LONG_ADVICE)


def test_the_summary_fits_80_columns_with_whole_headings_and_one_line_rows():
    text = _summary(80, _two_center_report())
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if line.lstrip().startswith("T "))
    assert header.split() == ["T", "n", "div", "H", "ppl", "rep", "semH", "ok", "trunc", "ans"]
    rows = [line.split() for line in text.splitlines() if line.lstrip().startswith(("0.2 ", "0.8 "))]
    assert [len(row) for row in rows] == [10, 10]  # one line per run, nothing wrapped
    flat = " ".join(text.split())
    assert "pull at T=0.2: opened in 1937 .50 · a much longer label about 1952 .38 · none .12" in flat


def test_wrapped_advice_stays_indented_under_its_finding():
    lines = _summary(80, _two_center_report()).splitlines()
    start = next(i for i, line in enumerate(lines) if "input.competing_centers" in line) + 1
    advice = [line for line in lines[start:] if line.strip().startswith(("Advice", "word"))]
    assert len(advice) > 1 and all(line.startswith(" " * 7) for line in advice)


def test_pull_cell_ranks_by_share_and_sums_the_rest():
    cell = pull_cell({"c1": 0.25, "c0": 0.5, "c2": 0.15, "none": 0.1}, {"c0": "1937", "c1": "1952", "c2": "x"}, top=2)
    assert cell == "1937 .50 · 1952 .25 · +2 .25"
    assert pull_cell({"c0": 1.0}, {"c0": "a label far longer than thirty-two characters"}) == \
        "a label far longer than thirty-… 1"


def test_plain_progress_lines_are_timestamped_and_spaced_out():
    now = [0.0]
    out = io.StringIO()
    progress = LineProgress(out, clock=lambda: now[0], interval=10)
    progress.phase("sampling", total=48)
    for done in range(1, 49):
        now[0] += 1.0
        progress.update(done)
    lines = out.getvalue().splitlines()
    assert lines[0] == "[00:00] sampling: 0/48"
    assert lines[-1] == "[00:48] sampling: 48/48"
    assert 5 <= len(lines) <= 7  # one every ten seconds, plus the start and the end


def test_the_reader_line_says_when_its_build_is_not_the_one_the_calibration_read():
    from diagnose.console import reader_line
    from diagnose.report import ReaderInfo

    def line(calibrated):
        reader = ReaderInfo(name="q", kind="reference", sha256="cc324af0" * 8, kernels="AVX2 AVX512",
                            calibrated=calibrated)
        return reader_line(msgspec.structs.replace(msgspec.convert(report(), Report).input, reader=reader))

    assert line(False) == "reference reader q (sha256 cc324af0cc32…), built for other CPU features than its calibration read"
    assert line(True) == line(None) == "reference reader q (sha256 cc324af0cc32…)"
