"""Terminal output: progress on stderr and the readable summary on stdout.

On a terminal, progress is a live bar; anywhere else (CI logs, a redirected
stderr) it is plain lines: one when a phase starts and one at most every
:data:`LINE_INTERVAL_S` seconds while it runs, so a long run shows it is alive.
The summary fits 80 columns: short table headings with a legend, center pull by
label on a line per temperature, wrapped lines indented under what they belong to.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, TextIO

from rich import box
from rich.console import Console as RichConsole
from rich.padding import Padding
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from diagnose.report import Report
from diagnose.display import fixed
from diagnose.verdict_lines import basis_lines

_VERDICT_STYLE = {"ok": "bold green", "warn": "bold yellow", "fail": "bold red"}
_SEVERITY_STYLE = {"info": "cyan", "warn": "yellow", "fail": "red"}


class _BarProgress:
    """Adapts rich's Progress to the pipeline's Progress protocol."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._task: int | None = None

    def phase(self, description: str, total: int | None = None) -> None:
        self.finish()
        self._task = self._progress.add_task(description, total=total or 1)

    def finish(self) -> None:
        """Mark the current phase complete (its work may have ended early, e.g. all rows stopped)."""
        if self._task is not None:
            task = next(t for t in self._progress.tasks if t.id == self._task)
            self._progress.update(self._task, completed=task.total or 1)
            self._progress.stop_task(self._task)
            self._task = None

    def update(self, completed: int, description: str | None = None) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=completed, description=description)


#: Seconds between two plain progress lines of one phase.
LINE_INTERVAL_S = 15.0


class LineProgress:
    """The pipeline's Progress protocol as plain, timestamped lines (off a terminal)."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic,
                 interval: float = LINE_INTERVAL_S) -> None:
        self._stream, self._clock, self._interval = stream, clock, interval
        self._start = clock()
        self._description = ""
        self._total: int | None = None
        self._last = float("-inf")

    def phase(self, description: str, total: int | None = None) -> None:
        self._description, self._total = description, total
        self._last = float("-inf")
        self._line(f"{description} ..." if not total else f"{description}: 0/{total}")

    def update(self, completed: int, description: str | None = None) -> None:
        self._description = description or self._description
        if self._clock() - self._last >= self._interval or (self._total and completed >= self._total):
            self._line(f"{self._description}: {completed}/{self._total}" if self._total
                       else f"{self._description}: {completed}")

    def finish(self) -> None:
        """Nothing to close: every line is already written."""

    def _line(self, text: str) -> None:
        now = self._clock()
        self._last = now
        elapsed = int(now - self._start)
        self._stream.write(f"[{elapsed // 60:02d}:{elapsed % 60:02d}] {text}\n")
        self._stream.flush()


def reader_line(inp) -> str:
    """Who read the documents, for the summary: ``reference reader Qwen… (sha256 cc324af0…)``."""
    reader = inp.reader
    if reader.kind == "static":
        return "nobody: the text alone" + (f" ({inp.reader_note})" if inp.reader_note else "")
    digest = f" (sha256 {reader.sha256[:12]}…)" if reader.sha256 else ""
    build = ", built for other CPU features than its calibration read" if reader.calibrated is False else ""
    return f"{reader.kind} reader {reader.name}{digest}{build}"


class Console:
    def __init__(self) -> None:
        self.out = RichConsole()
        self.err = RichConsole(stderr=True)

    @contextlib.contextmanager
    def progress(self) -> Iterator[_BarProgress | LineProgress]:
        if not self.err.is_terminal:
            yield LineProgress(sys.stderr)
            return
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=self.err,
            transient=False,
        )
        with bar:
            adapter = _BarProgress(bar)
            yield adapter
            adapter.finish()

    def wrote(self, paths: list[Path]) -> None:
        for path in paths:
            self.out.print(f"wrote {path}")

    def summary(self, report: Report) -> None:
        o = self.out
        style = _VERDICT_STYLE[report.verdict]
        o.print(f"\n[bold]{report.case_id}[/]  verdict: [{style}]{report.verdict.upper()}[/]")
        for line in basis_lines(report):
            o.print(line, markup=False, highlight=False)
        inp = report.input
        conflict = inp.conflict
        o.print(
            f"input: {len(inp.gravity_centers)} gravity center(s), "
            f"{len(inp.noise_documents)} noise document(s), conflict "
            f"{'DETECTED' if conflict.detected else conflict.state} (probability {conflict.score:.2f})"
        )
        if inp.reader is not None:
            o.print(f"read by: {reader_line(inp)}", markup=False)
        for center in inp.gravity_centers:
            o.print(
                f"  {center.id}  mass {center.mass:.2f}  {center.label!r}  docs: "
                f"{', '.join(center.documents)}" + (f"  ({center.standing})" if center.standing else ""),
                markup=False,
            )
        for pair in conflict.pairs[:5]:
            o.print(f"  {pair.kind}: {pair.a} vs {pair.b}  {pair.evidence}", markup=False)
        if report.sampling:
            o.print(self._runs_table(report))
            o.print(Padding(Text(_RUNS_LEGEND), (0, 0, 0, 2)))
            labels = {c.id: c.label for c in inp.gravity_centers}
            for run in report.sampling.runs:
                o.print(Padding(Text(f"pull at T={run.temperature:g}: {pull_cell(run.center_pull, labels)}"),
                                (0, 0, 0, 2)))
        if report.findings:
            o.print("[bold]findings[/] (checklist order: input → sampling → length → environment → framework)")
        for finding in report.findings:
            sev = _SEVERITY_STYLE[finding.severity]
            o.print(f"  [{sev}]{finding.severity:>4}[/] {finding.stage:<11} {finding.rule}")
            o.print(Padding(Text(finding.advice), (0, 0, 0, 7)))
        o.print(f"environment: {environment_line(report.environment)}", markup=False)

    @staticmethod
    def _runs_table(report: Report) -> Table:
        table = Table(title="sampling", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1),
                      pad_edge=False)
        for column, _ in _RUNS_COLUMNS:
            table.add_column(column, justify="right", no_wrap=True)
        for run in report.sampling.runs if report.sampling else []:
            table.add_row(
                f"{run.temperature:g}", str(run.n), f"{run.first_token_divergence:.2f}",
                fixed(run.mean_entropy, 2), fixed(run.perplexity, 1), f"{run.repetition_rate:.2f}",
                f"{run.semantic_entropy:.2f}", f"{run.compliance_rate:.2f}", f"{run.truncation_rate:.2f}",
                _answers(run.answer_kinds),
            )
        return table


_RUNS_COLUMNS = (
    ("T", "temperature"), ("n", "samples"), ("div", "first-token divergence"), ("H", "mean entropy (nats)"),
    ("ppl", "perplexity"), ("rep", "repetition rate"), ("semH", "semantic entropy (nats)"),
    ("ok", "compliance rate"), ("trunc", "truncation rate"), ("ans", "samples that answer (other: answer something else)"),
)
_RUNS_LEGEND = ", ".join(f"{short}: {long}" for short, long in _RUNS_COLUMNS[2:])

#: Longest center label shown in a pull line.
PULL_LABEL_CHARS = 32


def pull_cell(pull: dict[str, float], labels: dict[str, str], top: int = 3) -> str:
    """The leading centers by label with their shares ("none" for samples that follow none),
    the rest summed, e.g. ``1937 .62 · 1952 .31 · +1 .07``."""
    ranked = sorted(((share, center) for center, share in pull.items() if share > 0), reverse=True)
    parts = [f"{_clip(labels.get(center, center))} {_share(share)}" for share, center in ranked[:top]]
    rest = ranked[top:]
    if rest:
        parts.append(f"+{len(rest)} {_share(sum(share for share, _ in rest))}")
    return " · ".join(parts)


def _clip(label: str) -> str:
    label = " ".join(str(label).split())
    return label if len(label) <= PULL_LABEL_CHARS else label[: PULL_LABEL_CHARS - 1] + "…"


def _share(share: float) -> str:
    return "1" if share >= 0.995 else f"{share:.2f}".lstrip("0")


def _answers(kinds: dict[str, int]) -> str:
    """How many samples answer, and how many answer something else (``TemperatureRun.answer_kinds``)."""
    if not kinds:
        return "-"
    return f"{kinds.get('answer', 0)}" + (f" ({kinds['other']} other)" if kinds.get("other") else "")





def environment_line(env: dict) -> str:
    """Where the samples came from: the server and its model for a remote run, else the local device."""
    server = env.get("server") or {}
    if server.get("base_url"):
        quant = f" · {env['quantization']}" if env.get("quantization") else ""
        framework = (env.get("framework") or {}).get("framework") or "a server"
        return f"{env.get('model_id')} served by {framework} at {server['base_url']}{quant}"
    return (f"{env.get('model_id') or 'no generator'} · {env.get('device') or '-'} · "
            f"{env.get('dtype') or '-'} · torch threads {env.get('threads')}")
