"""The stored prompt library: cases versioned by content hash, one current version per case id.

Pushing a case whose content (:func:`diagnose.nightly.library.content_hash`, which
leaves tags out) is new adds a version and makes it current; pushing the current
content again changes nothing, or only its tags; pushing an older version's
content makes that version current again. Old versions stay while past nightly runs
point at them; the others beyond ``RAG_DIAGNOSE_MAX_LIBRARY_VERSIONS`` per case are deleted,
oldest first, by the push that adds a newer one. Each key keeps its own library.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Sequence

import msgspec
from sqlalchemy import Row
from sqlalchemy.orm import Session

from api.db.library import (case_versions, current_case_ids, current_cases, latest_done_results, lock_pushes,
                            referenced_versions, version_counts)
from api.db.models import LibraryCase, iso_utc
from api.db.session import Database
from api.responses import LatestResult, LibraryEntry, LibraryPushResult, PushedCase
from api.services.errors import InvalidCase, ServiceError, TooLarge, as_service_error
from api.services.limits import check_case_limits, check_case_size, check_prompt_tokens, check_raw_case
from api.settings import Limits
from diagnose.case import Case, case_from_dict
from diagnose.errors import DiagnoseError
from diagnose.nightly.library import content_hash


class LibraryPush(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The body of ``POST /v1/library`` (its OpenAPI schema; :func:`parse_cases` reads it,
    so that an invalid case is a 422 naming ``cases[i].<field>``)."""

    cases: list[Case]
    """The cases to store (contract section 1), each id once."""


class LibraryService:
    def __init__(self, db: Database, limits: Limits | None = None,
                 prompt_tokens: Callable[[Case], int] | None = None) -> None:
        self.db = db
        self.limits = limits or Limits()
        self.prompt_tokens = prompt_tokens
        """The API's token counter; without one (the CLI) a case's prompt is bounded by characters only."""

    def push_body(self, body: Any, owner: int | None = None) -> LibraryPushResult:
        """``{"cases": [case, ...]}`` from the API into ``owner``'s library (the pushing key's; each
        key keeps its own): every case is validated before any is stored, and the push must fit
        :attr:`Limits.max_library_push_cases` and :attr:`Limits.max_library_cases`."""
        cases = parse_cases(body, self.limits, self.prompt_tokens)
        return self._store(cases, self.limits.max_library_cases, owner)

    def push(self, cases: Sequence[Case]) -> LibraryPushResult:
        """Store each case (see the module docstring); the counts per status, and each case's version and status.

        Each case passes :func:`~api.services.limits.check_case_size` first (one over a
        limit stores nothing); the per-push and library-size limits are the API's
        (:meth:`push_body`), not the ``diagnose library push`` command's.
        """
        for i, case in enumerate(cases):
            _checked(i, lambda case=case: check_case_size(case, self.limits, self.prompt_tokens))
        return self._store(cases, None, None)

    def _store(self, cases: Sequence[Case], max_total: int | None, owner: int | None) -> LibraryPushResult:
        with self.db.session() as session:
            lock_pushes(session)
            if max_total is not None:
                _check_library_size(session, cases, max_total, owner)
            results = [_push_one(session, case, owner, self.limits.max_library_versions) for case in cases]
        return LibraryPushResult(counts=dict(Counter(r.status for r in results)), cases=results)

    def list(self, tags: Sequence[str] = (), scope: int | None = None) -> list[LibraryEntry]:
        """Current versions carrying every tag in ``tags`` that ``scope`` may read (None: every
        key's library), with the latest nightly verdict of each."""
        with self.db.session() as session:
            rows = current_cases(session, tags, scope)
            versions = version_counts(session)
            latest = latest_done_results(session, [r.id for r in rows])
            return [LibraryEntry(
                case_id=r.case_id, content_hash=r.content_hash, tags=list(r.tags),
                versions=versions.get((r.api_key_id, r.case_id), 1), created_at=iso_utc(r.created_at),
                latest=_latest_view(latest.get(r.id)),
            ) for r in rows]


def parse_cases(body: Any, limits: Limits, prompt_tokens: Callable[[Case], int] | None = None) -> list[Case]:
    """Validate ``{"cases": [...]}`` (:class:`LibraryPush`); errors name ``cases[i].<field>``.

    The cheap checks of every case come first, so that a push over a limit is refused
    before any prompt is tokenized: the number of cases, each case's fields and sizes
    (:func:`~api.services.limits.check_case_limits`, nothing built), the prompt
    characters of the whole push; then each case's token count.
    """
    if not isinstance(body, dict):
        raise InvalidCase('the body must be an object {"cases": [case, ...]}', "cases")
    items = body.get("cases")
    if not isinstance(items, list) or not items:
        raise InvalidCase("`cases` must be a non-empty list of cases", "cases")
    for name in body:
        if name not in LibraryPush.__struct_fields__:
            raise InvalidCase(f"{name}: is not a known field (the body is {{\"cases\": [case, ...]}})", str(name))
    if len(items) > limits.max_library_push_cases:
        raise TooLarge(f"{len(items)} cases in one push; at most {limits.max_library_push_cases} are accepted "
                       "(RAG_DIAGNOSE_MAX_LIBRARY_PUSH_CASES): push them in parts", "cases")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    chars = 0
    for i, item in enumerate(items):
        _checked(i, lambda item=item: check_raw_case(item, limits))
        case = _checked(i, lambda item=item: case_from_dict(item))
        chars += _checked(i, lambda case=case: check_case_limits(case, limits))
        if case.id in seen:
            raise InvalidCase(f"cases[{i}].id: {case.id!r} is also cases[{seen[case.id]}].id", f"cases[{i}].id")
        seen[case.id] = i
        cases.append(case)
    if chars > limits.max_library_push_prompt_chars:
        raise TooLarge(f"the {len(cases)} cases' prompts are {chars:,} characters together; at most "
                       f"{limits.max_library_push_prompt_chars:,} are accepted in one push "
                       "(RAG_DIAGNOSE_MAX_LIBRARY_PUSH_PROMPT_CHARS): push them in parts", "cases")
    if prompt_tokens is not None:
        for i, case in enumerate(cases):
            _checked(i, lambda case=case: check_prompt_tokens(case, limits, prompt_tokens))
    return cases


def _checked(i: int, check: Callable[[], Any]) -> Any:
    """``check()``, its error (a service or an engine one) renamed to ``cases[i].<field>``."""
    try:
        return check()
    except (ServiceError, DiagnoseError) as exc:
        error = exc if isinstance(exc, ServiceError) else as_service_error(exc)
        field = f"cases[{i}]" if error.field in (None, "$") else f"cases[{i}].{error.field}"
        # An engine error's text starts with its field ("documents[0].text: ..."), a service error's does not.
        detail = f"cases[{i}].{error.detail}" if isinstance(exc, DiagnoseError) else f"cases[{i}]: {error.detail}"
        raise type(error)(detail, field) from None


def _check_library_size(session: Session, cases: Sequence[Case], max_total: int, owner: int | None) -> None:
    """Refuse a push after which ``owner``'s library would hold more than ``max_total`` current cases."""
    stored = current_case_ids(session, owner)
    new = {case.id for case in cases} - stored
    if new and len(stored) + len(new) > max_total:
        raise TooLarge(f"the library holds {len(stored)} cases and this push adds {len(new)}; at most "
                       f"{max_total} are accepted (RAG_DIAGNOSE_MAX_LIBRARY_CASES)", "cases")


def _push_one(session: Session, case: Case, owner: int | None, keep: int) -> PushedCase:
    digest, tags = content_hash(case), sorted(set(case.tags))
    data = msgspec.to_builtins(case)
    versions = case_versions(session, case.id, owner)
    match = next((v for v in versions if v.content_hash == digest), None)
    if match is None:
        status = "added" if not versions else "updated"
        match = LibraryCase(case_id=case.id, content_hash=digest, tags=tags, case=data, current=True,
                            api_key_id=owner)
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
    versions = _keep_newest(session, versions, keep)
    return PushedCase(case_id=case.id, content_hash=digest, tags=tags, version=versions.index(match) + 1,
                      status=status)


def _keep_newest(session: Session, versions: list[LibraryCase], keep: int) -> list[LibraryCase]:
    """Delete the oldest of a case's versions (oldest first) beyond ``keep``
    (:attr:`Limits.max_library_versions`), never the current one nor one a nightly run points
    at; answers the versions left."""
    excess = len(versions) - max(keep, 1)
    if excess <= 0:
        return versions
    referenced = referenced_versions(session, [v.id for v in versions])
    doomed = [v for v in versions if not v.current and v.id not in referenced][:excess]
    for version in doomed:
        session.delete(version)
    session.flush()
    return [v for v in versions if v not in doomed]


def _latest_view(result: Row | None) -> LatestResult | None:
    """A :func:`~api.db.library.latest_done_results` row as its answer."""
    if result is None:
        return None
    return LatestResult(verdict=result.verdict, run_id=result.run_id, diagnosis_id=result.diagnosis_id,
                        finished_at=iso_utc(result.finished_at))
