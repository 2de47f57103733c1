"""Rows for the page tests, written through the models (and ``record_report`` for reports)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from api.db.models import Diagnosis, LibraryCase, NightlyItem, NightlyRun, utcnow
from api.db.session import Database
from api.db.store import finish, record_report, sha256_of
from diagnose.nightly.compare import compare_reports
from diagnose.report import read_report

MARKUP = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
"""Markup that would run if any page put document or sample text into the HTML unescaped."""


def at(minutes: int) -> dt.datetime:
    """A fixed moment ``minutes`` after a base time, so that ordering is explicit."""
    return dt.datetime(2025, 3, 1, 8, 0, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=minutes)


def store_diagnosis(db: Database, case: dict[str, Any], report: dict[str, Any] | None = None, *,
                    status: str = "done", mode: str = "run", created_at: dt.datetime | None = None,
                    progress: dict[str, Any] | None = None, error: dict[str, Any] | None = None) -> str:
    with db.session() as session:
        diagnosis = Diagnosis(status=status, mode=mode, case_id=case["id"], case=case,
                              request_key=sha256_of({"case": case, "at": str(created_at), "status": status}),
                              seed_offset=0, created_at=created_at or utcnow(), progress=progress)
        session.add(diagnosis)
        session.flush()
        if report is not None:
            record_report(session, diagnosis, report)
        elif status in ("failed", "cancelled"):
            finish(diagnosis, status, error)
        if diagnosis.finished_at is not None and created_at is not None:
            diagnosis.finished_at = created_at + dt.timedelta(minutes=2)
        return diagnosis.id


def store_library_case(db: Database, case: dict[str, Any], tags: list[str], *, current: bool = True,
                       created_at: dt.datetime | None = None) -> int:
    with db.session() as session:
        row = LibraryCase(case_id=case["id"], content_hash=sha256_of(case), tags=tags, case=case, current=current,
                          created_at=created_at or utcnow())
        session.add(row)
        session.flush()
        return row.id


def store_run(db: Database, items: list[tuple[int, str]], *, summary: dict[str, Any] | None = None,
              baseline_id: str | None = None, created_at: dt.datetime | None = None, fail_on: str = "fail",
              tags: list[str] | None = None) -> str:
    """A nightly run over ``(library_case_id, diagnosis_id)`` items; done when it has a summary."""
    with db.session() as session:
        run = NightlyRun(status="done" if summary is not None else "running", tags=tags or [], fail_on=fail_on,
                         baseline_id=baseline_id, summary=summary, created_at=created_at or utcnow(),
                         finished_at=(created_at or utcnow()) + dt.timedelta(minutes=5) if summary else None)
        session.add(run)
        session.flush()
        session.add_all(NightlyItem(run_id=run.id, library_case_id=case, diagnosis_id=diagnosis)
                        for case, diagnosis in items)
        return run.id


def gate_summary(cases: list[dict[str, Any]], fail_on: str = "fail") -> dict[str, Any]:
    """The summary the nightly service writes, with each case compared by the engine's gate.

    ``cases``: ``{baseline, current, diagnosis_id, baseline_diagnosis_id}`` with the two reports.
    """
    rank = {"pass": 0, "warn": 1, "fail": 2}
    compared = []
    for case in cases:
        comparison = compare_reports(read_report(case["baseline"]), read_report(case["current"]))
        compared.append({**comparison.to_dict(), "diagnosis_id": case["diagnosis_id"],
                         "baseline_diagnosis_id": case["baseline_diagnosis_id"]})
    counts = {state: sum(1 for c in compared if c["status"] == state) for state in rank}
    worst = max((rank[c["status"]] for c in compared), default=0)
    gate = "fail" if worst >= rank[fail_on] else ("warn" if worst else "pass")
    summary = {"counts": counts, "fail_on": fail_on, "gate": gate, "cases": compared}
    return json.loads(json.dumps(summary, default=lambda v: v.item() if hasattr(v, "item") else str(v)))
