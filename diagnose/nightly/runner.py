"""Run a prompt library, store the run as files, resume it, and compare it with a baseline.

Layout of one run (``RUNS/<run_id>/``)::

    manifest.json            run_id, started, finished (null while running), library,
                             tags, seed_offset, environment, one entry per case
    reports/<case_id>.json   the case's report (contract section 3), read back with
                             :func:`~diagnose.report.read_report`

Each report and then the manifest are written atomically after every case, so an
interruption loses at most the case in progress. Running into the same run
directory again skips every case whose report exists and whose manifest entry is
``done`` with the same content hash; errored, missing and changed cases run again.

``workers > 1`` diagnoses cases in a process pool (spawned processes, each
building one diagnoser, so models are loaded once per process). Each process
needs its own copy of the models and its own cores: on a 2-core machine
``workers=1`` is right (torch already uses both cores within one case).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import os
import platform
import secrets
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import msgspec

from diagnose.case import Case
from diagnose.errors import UsageError
from diagnose.nightly.library import LibraryCase
from diagnose.report import Report, read_report, write_atomic

DiagnoseFn = Callable[[Case, int], Report]
"""Diagnose one case with a seed offset; return its report."""
DiagnoseFactory = Callable[[], DiagnoseFn]
"""Builds a DiagnoseFn (loading models once); must be picklable for ``workers > 1``."""
CaseStatus = Literal["pending", "done", "error"]
FORMAT = 1  # manifest format version


@dataclass
class CaseRecord:
    case_id: str
    path: str
    content_hash: str | None
    status: CaseStatus = "pending"
    seconds: float | None = None
    verdict: str | None = None
    error: str | None = None
    reused: bool = False
    """Done in an earlier attempt of this run and skipped on resume."""


@dataclass
class RunRecord:
    run_id: str
    run_dir: Path | None
    """None for a baseline read from a single report file."""
    library: str
    seed_offset: int | None
    started: str
    finished: str | None = None
    tags: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    cases: list[CaseRecord] = field(default_factory=list)
    inline_reports: dict[str, Report] = field(default_factory=dict, repr=False)

    def case(self, case_id: str) -> CaseRecord | None:
        return next((c for c in self.cases if c.case_id == case_id), None)

    def report(self, case_id: str) -> Report | None:
        """The case's report, or None when it has none (pending, error, unknown, unreadable)."""
        if case_id in self.inline_reports:
            return self.inline_reports[case_id]
        record = self.case(case_id)
        if self.run_dir is None or record is None or record.status != "done":
            return None
        try:
            return read_report(report_path(self.run_dir, case_id).read_bytes())
        except (OSError, ValueError):  # ValueError: not JSON, or not a report (msgspec.ValidationError)
            return None

    def to_manifest(self) -> dict[str, Any]:
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("run_dir", "inline_reports")}
        return {"format": FORMAT, **data}

    @property
    def diagnosed_seconds(self) -> list[float]:
        """Wall time of each case diagnosed in this attempt (not reused, not errored)."""
        return [c.seconds for c in self.cases if c.status == "done" and not c.reused and c.seconds]


def report_path(run_dir: Path, case_id: str) -> Path:
    return run_dir / "reports" / f"{case_id}.json"


def new_run_id(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def seed_offset_for(run_id: str) -> int:
    """A seed offset derived from the run id: each run draws fresh samples."""
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4], "big") % 1_000_000_000


def environment_summary(workers: int = 1) -> dict[str, Any]:
    """Where the run ran (no model loaded); the first report adds the model's fingerprint."""
    from diagnose.environment import library_versions

    return {"python": sys.version.split()[0], "platform": platform.platform(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "workers": workers, "libraries": library_versions()}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _write_manifest(run: RunRecord) -> None:
    assert run.run_dir is not None
    write_atomic(run.run_dir / "manifest.json", json.dumps(run.to_manifest(), indent=2, ensure_ascii=False))


def _model_summary(report: Report) -> dict[str, Any]:
    env = report.environment
    keys = ("backend", "model_id", "model_hash", "dtype", "device", "embedder", "embedder_hash", "threads")
    return {k: env.get(k) for k in keys if k in env}


def run_library(
    cases: Sequence[LibraryCase],
    run_dir: Path,
    diagnose: DiagnoseFn | None,
    seed_offset: int,
    on_case: Callable[[CaseRecord, int, int], None] | None = None,
    *,
    workers: int = 1,
    diagnose_factory: DiagnoseFactory | None = None,
    library: str = "",
    tags: Sequence[str] = (),
) -> RunRecord:
    """Diagnose every case into ``run_dir`` (created, or resumed when it has a manifest).

    ``diagnose`` is called in this process (``workers == 1``; it may be None when
    ``diagnose_factory`` is given, which is then called only if a case needs
    diagnosing). ``workers > 1`` needs ``diagnose_factory``. A case that raises
    ``Exception`` is recorded as ``error`` and the run continues; ``KeyboardInterrupt``
    stops the run with every finished case stored. ``on_case(record, done, total)``
    follows each case, reused ones included. A resumed run keeps its seed offset.
    """
    run_dir = Path(run_dir)
    previous = load_run(run_dir) if (run_dir / "manifest.json").is_file() else None
    if previous is not None and previous.seed_offset is not None:
        seed_offset = previous.seed_offset
    run = RunRecord(
        run_id=run_dir.name,
        run_dir=run_dir,
        library=library or (previous.library if previous else ""),
        seed_offset=seed_offset,
        started=previous.started if previous else _now(),
        tags=list(tags),
        environment=environment_summary(workers),
    )
    if previous and "model" in previous.environment:
        run.environment["model"] = previous.environment["model"]
    todo: list[tuple[CaseRecord, LibraryCase]] = []
    for item in cases:
        old = previous.case(item.case_id) if previous else None
        record = CaseRecord(item.case_id, item.relative_path or str(item.path), item.content_hash)
        if (old and old.status == "done" and old.content_hash == item.content_hash
                and report_path(run_dir, item.case_id).is_file()):
            record = dataclasses.replace(old, path=record.path, reused=True)
        else:
            todo.append((record, item))
        run.cases.append(record)
    _write_manifest(run)
    total, done = len(run.cases), 0
    for record in run.cases:
        if record.reused:
            done += 1
            if on_case:
                on_case(record, done, total)

    def finish(record: CaseRecord, outcome: tuple[str, Any, float]) -> None:
        nonlocal done
        kind, payload, seconds = outcome
        record.seconds = round(seconds, 3)
        if kind == "done":
            record.status, record.verdict, record.error = "done", payload.verdict, None
            write_atomic(report_path(run_dir, record.case_id),
                         json.dumps(payload.to_dict(), indent=2, ensure_ascii=False))
            run.environment.setdefault("model", _model_summary(payload))
        else:
            record.status, record.verdict, record.error = "error", None, payload
            report_path(run_dir, record.case_id).unlink(missing_ok=True)
        _write_manifest(run)
        done += 1
        if on_case:
            on_case(record, done, total)

    if todo and workers > 1:
        if diagnose_factory is None:
            raise UsageError("workers > 1 needs a picklable diagnose_factory")
        _run_pool(todo, seed_offset, diagnose_factory, workers, finish)
    elif todo:
        fn = diagnose or (diagnose_factory() if diagnose_factory else None)
        if fn is None:
            raise UsageError("run_library needs diagnose or diagnose_factory")
        for record, item in todo:
            finish(record, _diagnose_one(fn, item.case, seed_offset))
    run.finished = _now()
    _write_manifest(run)
    return run


def _diagnose_one(fn: DiagnoseFn, case: Case, seed_offset: int) -> tuple[str, Any, float]:
    start = time.perf_counter()
    try:
        report = fn(case, seed_offset)
    except Exception as exc:  # one bad case must not stop the run
        return "error", f"{type(exc).__name__}: {exc}", time.perf_counter() - start
    return "done", report, time.perf_counter() - start


_WORKER_FN: DiagnoseFn | None = None


def _init_worker(factory: DiagnoseFactory, threads: int) -> None:
    global _WORKER_FN
    os.environ.setdefault("RAG_DIAGNOSE_THREADS", str(threads))
    _WORKER_FN = factory()  # one diagnoser (and one copy of the models) per process


def _work(case: Case, seed_offset: int) -> tuple[str, Any, float]:
    assert _WORKER_FN is not None
    return _diagnose_one(_WORKER_FN, case, seed_offset)


def _run_pool(todo: list[tuple[CaseRecord, LibraryCase]], seed_offset: int, factory: DiagnoseFactory,
              workers: int, finish: Callable[[CaseRecord, tuple[str, Any, float]], None]) -> None:
    threads = max(1, (os.cpu_count() or 1) // workers)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(factory, threads))
    try:
        pending: dict[Future, CaseRecord] = {
            pool.submit(_work, item.case, seed_offset): record for record, item in todo
        }
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                record = pending.pop(future)
                try:
                    outcome = future.result()
                except Exception as exc:  # a worker died (e.g. out of memory)
                    outcome = ("error", f"{type(exc).__name__}: {exc}", 0.0)
                finish(record, outcome)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def load_run(path: Path) -> RunRecord:
    """A stored run (its directory or its manifest.json), or a single report JSON as a one-case run."""
    path = Path(path)
    manifest = path / "manifest.json" if path.is_dir() else path
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"no run or report found at {path}") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{manifest}: not a readable run manifest or report ({exc})") from None
    if isinstance(data, dict) and "run_id" in data and "cases" in data:
        fields = {f.name for f in dataclasses.fields(CaseRecord)}
        cases = [CaseRecord(**{k: v for k, v in c.items() if k in fields}) for c in data["cases"]]
        return RunRecord(
            run_id=data["run_id"], run_dir=manifest.parent, library=data.get("library", ""),
            seed_offset=data.get("seed_offset"), started=data.get("started", ""),
            finished=data.get("finished"), tags=data.get("tags", []),
            environment=data.get("environment", {}), cases=cases,
        )
    if isinstance(data, dict) and isinstance(data.get("case_id"), str):
        try:
            report = read_report(data)
        except msgspec.ValidationError as exc:
            raise UsageError(f"{path}: not a readable report ({exc})") from None
        record = CaseRecord(report.case_id, str(path), None, "done", verdict=report.verdict)
        return RunRecord(
            run_id=f"file:{path.name}", run_dir=None, library=str(path.parent), seed_offset=None,
            started="", cases=[record], inline_reports={report.case_id: report},
        )
    raise UsageError(f"{path}: neither a run manifest nor a report JSON (no run_id/case_id)")
