"""Terminal output: the progress bar on stderr and the readable summary on stdout."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from rich.console import Console as RichConsole
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from diagnose.report import Report
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


class Console:
    def __init__(self) -> None:
        self.out = RichConsole()
        self.err = RichConsole(stderr=True)

    @contextlib.contextmanager
    def progress(self) -> Iterator[_BarProgress]:
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
        for line in basis_lines(report.to_dict()):
            o.print(line, markup=False, highlight=False)
        inp = report.input
        conflict = inp.conflict
        o.print(
            f"input: {len(inp.gravity_centers)} gravity center(s), "
            f"{len(inp.noise_documents)} noise document(s), conflict "
            f"{'DETECTED' if conflict.detected else 'none'} (score {conflict.score:.2f})"
        )
        for center in inp.gravity_centers:
            o.print(
                f"  {center.id}  mass {center.mass:.2f}  {center.label!r}  docs: "
                f"{', '.join(center.documents)}",
                markup=False,
            )
        for pair in conflict.pairs[:5]:
            o.print(f"  {pair.kind}: {pair.a} vs {pair.b}  {pair.evidence}", markup=False)
        if report.sampling:
            o.print(self._runs_table(report))
        if report.findings:
            o.print("[bold]findings[/] (checklist order: input → sampling → length → environment → framework)")
        for finding in report.findings:
            sev = _SEVERITY_STYLE[finding.severity]
            o.print(f"  [{sev}]{finding.severity:>4}[/] {finding.stage:<11} {finding.rule}")
            o.print(f"       {finding.advice}", markup=False, highlight=False)
        env = report.environment
        o.print(
            f"environment: {env.get('model_id') or 'no generator'} · {env.get('device') or '-'} · "
            f"{env.get('dtype') or '-'} · torch threads {env.get('threads')}",
            markup=False,
        )

    @staticmethod
    def _runs_table(report: Report) -> Table:
        table = Table(title="sampling", title_justify="left")
        for column in ("T", "n", "1st-tok div", "entropy", "ppl", "repeat", "sem. entropy",
                       "comply", "trunc", "answers", "center pull"):
            table.add_column(column, justify="right" if column != "center pull" else "left")
        for run in report.sampling.runs if report.sampling else []:
            pull = ", ".join(f"{c} {f:.2f}" for c, f in run.center_pull.items() if f > 0)
            table.add_row(
                f"{run.temperature:g}", str(run.n), f"{run.first_token_divergence:.2f}",
                _num(run.mean_entropy, ".2f"), _num(run.perplexity, ".1f"), f"{run.repetition_rate:.2f}",
                f"{run.semantic_entropy:.2f}", f"{run.compliance_rate:.2f}",
                f"{run.truncation_rate:.2f}", _answers(run.answer_kinds), pull,
            )
        return table


def _answers(kinds: dict[str, int]) -> str:
    """How many samples answer, and how many answer something else (``TemperatureRun.answer_kinds``)."""
    if not kinds:
        return "-"
    return f"{kinds.get('answer', 0)}" + (f" ({kinds['other']} other)" if kinds.get("other") else "")


def _num(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)
