"""The stored prompt library: cases versioned by content hash, one current version per case id.

Pushing a case whose content (:func:`diagnose.nightly.library.content_hash`, which
leaves tags out) is new adds a version and makes it current; pushing the current
content again changes nothing, or only its tags; pushing an older version's
content makes that version current again. Old versions stay: past nightly runs
point at them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import msgspec
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.db.models import Diagnosis, LibraryCase, NightlyItem, iso_utc
from api.db.session import Database
from api.db.store import advisory_xact_lock
from api.services.errors import InvalidCase, ServiceError
from api.services.limits import check_case_size
from api.settings import Limits
from diagnose.case import Case, case_from_dict
from diagnose.errors import CaseError
from diagnose.nightly.library import content_hash

_PUSH_LOCK = 0x6C6962  # any constant: pushes take turns on PostgreSQL, so one version stays current


class LibraryService:
    def __init__(self, db: Database, limits: Limits | None = None) -> None:
        self.db = db
        self.limits = limits or Limits()

    def push_body(self, body: Any) -> dict[str, Any]:
        """``{"cases": [case, ...]}`` from the API: every case is validated before any is stored."""
        return self.push(parse_cases(body, self.limits))

    def push(self, cases: Sequence[Case]) -> dict[str, Any]:
        """Store each case (see the module docstring); ``{counts, cases: [{case_id, version, status, ...}]}``."""
        with self.db.session() as session:
            advisory_xact_lock(session, _PUSH_LOCK)
            results = [_push_one(session, case) for case in cases]
        return {"counts": dict(Counter(r["status"] for r in results)), "cases": results}

    def list(self, tags: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Current versions carrying every tag in ``tags``, with the latest nightly verdict of each."""
        with self.db.session() as session:
            rows = current_cases(session, tags)
            versions = dict(session.execute(
                select(LibraryCase.case_id, func.count()).group_by(LibraryCase.case_id)).all())
            latest = _latest_results(session, [r.id for r in rows])
            return [{
                "case_id": r.case_id, "content_hash": r.content_hash, "tags": list(r.tags),
                "versions": versions.get(r.case_id, 1), "created_at": iso_utc(r.created_at),
                "latest": latest.get(r.id),
            } for r in rows]


def current_cases(session: Session, tags: Sequence[str] = ()) -> list[LibraryCase]:
    """The current version of every case carrying all of ``tags``, by case id."""
    rows = session.scalars(
        select(LibraryCase).where(LibraryCase.current.is_(True)).order_by(LibraryCase.case_id)).all()
    wanted = set(tags)
    return [r for r in rows if wanted.issubset(r.tags)]  # tags are JSON: filtered here, on both databases


def parse_cases(body: Any, limits: Limits) -> list[Case]:
    """Validate ``{"cases": [...]}``; errors name ``cases[i].<field>``."""
    items = body.get("cases") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        raise InvalidCase("`cases` must be a non-empty list of cases", "cases")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        try:
            case = case_from_dict(item)
        except CaseError as exc:
            field = f"cases[{i}]" if exc.field == "$" else f"cases[{i}].{exc.field}"
            raise InvalidCase(f"cases[{i}].{exc}", field) from None
        try:
            check_case_size(case, limits, None)
        except ServiceError as exc:
            raise type(exc)(f"cases[{i}]: {exc.detail}", f"cases[{i}].{exc.field}") from None
        if case.id in seen:
            raise InvalidCase(f"cases[{i}].id: {case.id!r} is also cases[{seen[case.id]}].id", f"cases[{i}].id")
        seen[case.id] = i
        cases.append(case)
    return cases


def _push_one(session: Session, case: Case) -> dict[str, Any]:
    digest, tags = content_hash(case), sorted(set(case.tags))
    data = msgspec.to_builtins(case)
    versions = list(session.scalars(
        select(LibraryCase).where(LibraryCase.case_id == case.id).order_by(LibraryCase.id)))
    match = next((v for v in versions if v.content_hash == digest), None)
    if match is None:
        status = "added" if not versions else "updated"
        match = LibraryCase(case_id=case.id, content_hash=digest, tags=tags, case=data, current=True)
        session.add(match)
        versions.append(match)
    elif match.current and list(match.tags) == tags:
        status = "unchanged"
    else:
        status = "retagged" if match.current else "restored"
        match.tags, match.case, match.current = tags, data, True
    for version in versions:
        if version is not match and version.current:
            version.current = False
    session.flush()
    return {"case_id": case.id, "content_hash": digest, "tags": tags,
            "version": versions.index(match) + 1, "status": status}


def _latest_results(session: Session, library_case_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per library case version: its newest finished nightly diagnosis (verdict, run, diagnosis)."""
    if not library_case_ids:
        return {}
    rows = session.execute(
        select(NightlyItem.library_case_id, NightlyItem.run_id, Diagnosis.id, Diagnosis.verdict,
               Diagnosis.finished_at)
        .join(Diagnosis, Diagnosis.id == NightlyItem.diagnosis_id)
        .where(NightlyItem.library_case_id.in_(library_case_ids), Diagnosis.status == "done")
        .order_by(Diagnosis.finished_at, Diagnosis.id)
    )
    return {case_id: {"verdict": verdict, "run_id": run_id, "diagnosis_id": diagnosis_id,
                      "finished_at": iso_utc(finished)}
            for case_id, run_id, diagnosis_id, verdict, finished in rows}
