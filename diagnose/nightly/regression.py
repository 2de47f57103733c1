"""``run_nightly``: run a library, compare each case with the baseline run, report the gate.

Also ``compare_runs``, baseline resolution and the default (real) diagnose factory.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from diagnose.errors import EXIT_GATE, UsageError
from diagnose.report import reaches
from diagnose.nightly.library import discover
from diagnose.nightly.runner import (
    CaseRecord, DiagnoseFactory, RunRecord, load_run, new_run_id, run_library, seed_offset_for,
)

if TYPE_CHECKING:
    from diagnose.nightly.compare import CaseComparison, Change
    from diagnose.nightly.settings import GateSettings

FailOn = Literal["warn", "fail", "never"]
#: Exit status when the gate trips (``--fail-on``); 0 otherwise.
GATE_FAILED_EXIT = EXIT_GATE


def _gate(severity: str) -> str:
    """A change's severity on the gate's pass/warn/fail scale."""
    return "pass" if severity == "info" else severity



@dataclass
class NightlyResult:
    """One nightly run and its comparison with the baseline, case by case (current run order)."""

    run: RunRecord
    comparisons: list["CaseComparison"]
    baseline: RunRecord | None = None
    fail_on: FailOn = "fail"
    wall_seconds: float = 0.0
    """Wall time of the whole command (loading models included)."""

    def failing(self, fail_on: FailOn | None = None) -> list["CaseComparison"]:
        """Comparisons that trip the gate under ``fail_on`` (default: the result's own)."""
        level = fail_on or self.fail_on
        return [c for c in self.comparisons if reaches(c.status, level)]

    def exit_status(self, fail_on: FailOn | None = None) -> int:
        """0 when no case trips the gate, else :data:`GATE_FAILED_EXIT`."""
        return GATE_FAILED_EXIT if self.failing(fail_on) else 0

    def failing_reasons(self, fail_on: FailOn | None = None) -> dict[str, int]:
        """Of the cases that trip the gate: how many regressed against the baseline and how
        many have a failing verdict of their own (a case can count in both)."""
        level = fail_on or self.fail_on
        tripped = self.failing(level)
        return {
            "regressed": sum(1 for c in tripped if any(reaches(_gate(x.severity), level) for x in c.regressions)),
            "failing_verdict": sum(1 for c in tripped if c.failing_verdict is not None
                                   and reaches(_gate(c.failing_verdict.severity), level)),
        }

    def gate(self, fail_on: FailOn | None = None) -> Literal["pass", "warn", "fail"]:
        """``fail`` when a case reaches ``fail_on``; else ``warn`` when any case regressed or warns
        below it; else ``pass``. The service's run ``gate``, the Markdown headline and
        :meth:`gate_line` all say this one word."""
        if self.failing(fail_on):
            return "fail"
        return "warn" if any(c.status != "pass" for c in self.comparisons) else "pass"

    def gate_line(self, fail_on: FailOn | None = None) -> str:
        """"gate passed", "gate warn" or "gate failed" (:meth:`gate`), with how many cases regressed
        and how many fail on their own, or how many warn below ``fail_on``."""
        level = fail_on or self.fail_on
        gate = self.gate(level)
        if gate == "pass":
            return f"gate passed (fail on: {level})"
        if gate == "warn":
            below = sum(1 for c in self.comparisons if c.status != "pass")
            return f"gate warn (fail on: {level}): {below} case(s) changed or warn, none reaches {level}"
        reasons = self.failing_reasons(level)
        return (f"gate failed (fail on: {level}): {reasons['regressed']} case(s) regressed against the "
                f"baseline, {reasons['failing_verdict']} case(s) have a failing verdict of their own")

    def counts(self) -> dict[str, int]:
        """How many cases pass, warn and fail."""
        counts = {"pass": 0, "warn": 0, "fail": 0}
        for comparison in self.comparisons:
            counts[comparison.status] += 1
        return counts


def _note(kind: str, severity: str, message: str, baseline: Any = None, current: Any = None,
          evidence: dict | None = None) -> "Change":
    from diagnose.nightly.compare import Change

    return Change(kind=kind, severity=severity, temperature=None, baseline=baseline,  # type: ignore[arg-type]
                  current=current, evidence=evidence or {}, message=message)


def compare_runs(baseline: RunRecord | None, current: RunRecord,
                 settings: "GateSettings | None" = None) -> list["CaseComparison"]:
    """Pair the cases by id and compare each current report with its baseline report.

    A case that errored or did not run fails; a case the baseline lacks (or has no
    report for) gets an info note; a case whose content hash changed is compared
    anyway, with an info note saying so. Every case's own verdict is gated too
    (a ``verdict`` change of the verdict's severity), so a failing prompt fails
    whether or not it regressed, and a new case is judged by its verdict.
    """
    from diagnose.nightly.compare import CaseComparison, compare_reports, verdict_change
    from diagnose.nightly.settings import GateSettings

    settings = settings or GateSettings()
    comparisons: list[CaseComparison] = []
    for record in current.cases:
        report = current.report(record.case_id)
        if record.status == "error" or report is None:
            error = record.error or "no report was stored"
            kind = "case_error" if record.status == "error" else "not_run"
            note = _note(kind, "fail", f"the case did not produce a report: {error}",
                         current=error, evidence={"error": error, "path": record.path})
            comparisons.append(CaseComparison(case_id=record.case_id, changes=[note]))
            continue
        base = baseline.case(record.case_id) if baseline else None
        base_report = baseline.report(record.case_id) if baseline else None
        if base is None or base_report is None:
            why = "new case: not in the baseline" if base is None else (
                f"the baseline has no report for this case ({base.error or base.status})")
            kind = "new_case" if base is None else "no_baseline_report"
            own = verdict_change(report)
            comparisons.append(CaseComparison(case_id=record.case_id, changes=[
                _note(kind, "info", why, current=report.verdict), *([own] if own else [])]))
            continue
        comparison = compare_reports(base_report, report, settings)
        if base.content_hash and base.content_hash != record.content_hash:
            note = _note("case_changed", "info", "the case file changed since the baseline",
                         baseline=base.content_hash, current=record.content_hash,
                         evidence={"baseline_hash": base.content_hash, "current_hash": record.content_hash})
            comparison = dataclasses.replace(comparison, changes=[note, *comparison.changes])
        own = verdict_change(report)
        if own is not None:
            comparison = dataclasses.replace(comparison, changes=[*comparison.changes, own])
        comparisons.append(comparison)
    return comparisons


def find_runs(runs_dir: Path) -> list[RunRecord]:
    """Every stored run under ``runs_dir``, oldest first (by start time, then id)."""
    runs: list[RunRecord] = []
    if Path(runs_dir).is_dir():
        for manifest in Path(runs_dir).glob("*/manifest.json"):
            try:
                runs.append(load_run(manifest.parent))
            except (UsageError, KeyError, TypeError):
                continue  # not a run of ours
    return sorted(runs, key=lambda r: (r.started, r.run_id))


def resolve_baseline(baseline: Path | str | None, runs_dir: Path, library: str,
                     exclude: str | None = None) -> RunRecord | None:
    """The baseline run: a run directory, manifest or report file, or a run id under
    ``runs_dir``; None means the latest finished run of the same library (or none)."""
    if baseline is None:
        earlier = [r for r in find_runs(runs_dir)
                   if r.finished and r.library == library and r.run_id != exclude]
        return earlier[-1] if earlier else None
    path = Path(baseline)
    if path.exists():
        return load_run(path)
    if (Path(runs_dir) / str(baseline)).is_dir():
        return load_run(Path(runs_dir) / str(baseline))
    raise UsageError(f"--baseline {baseline}: no such run directory, report file or run id in {runs_dir}")


def run_nightly(
    library: Path,
    runs_dir: Path,
    baseline: Path | str | None = None,
    tags: Sequence[str] = (),
    workers: int = 1,
    seed_offset: int | None = None,
    on_case: Callable[[CaseRecord, int, int], None] | None = None,
    *,
    diagnose_factory: DiagnoseFactory,
    fail_on: FailOn = "fail",
    run_id: str | None = None,
    resume: bool = True,
    settings: "GateSettings | None" = None,
) -> NightlyResult:
    """Run every case of the library into ``runs_dir/<run_id>/`` and compare it with the baseline.

    ``run_id`` names the run (resumed when it exists). Without it, ``resume`` picks up
    the latest unfinished run of the same library and tags, else a new run starts.
    ``seed_offset`` defaults to one derived from the run id, so each run draws fresh
    samples and the gate sees real sampling noise. The baseline is resolved before
    the run (see :func:`resolve_baseline`). Raises UsageError/CaseError for a bad
    library or baseline; a case that fails to run is recorded, not raised.
    """
    start = time.perf_counter()
    if workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {workers})")
    cases = discover(library, tags)
    if not cases:
        raise UsageError(f"no cases under {library}" + (f" with tags {', '.join(tags)}" if tags else ""))
    root = str(Path(library).resolve())
    if run_id is None and resume:
        unfinished = [r for r in find_runs(runs_dir)
                      if not r.finished and r.library == root and r.tags == list(tags)]
        run_id = unfinished[-1].run_id if unfinished else None
    run_id = run_id or new_run_id()
    base = resolve_baseline(baseline, runs_dir, root, exclude=run_id)
    offset = seed_offset_for(run_id) if seed_offset is None else seed_offset
    run = run_library(cases, Path(runs_dir) / run_id, None, offset, on_case, workers=workers,
                      diagnose_factory=diagnose_factory, library=root, tags=tags)
    comparisons = compare_runs(base, run, settings)
    return NightlyResult(run, comparisons, base, fail_on, round(time.perf_counter() - start, 3))
