"""Submitting, reading and cancelling diagnoses."""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from api.db.models import Diagnosis, iso_utc
from api.db.session import Database
from api.db.store import (cancel, find_cached, mark_not_queued, pending_count, recent_diagnoses,
                          record_report, sha256_of)
from api.responses import DiagnosisLinks, DiagnosisView, SubmittedDiagnosis
from api.services.admission import Admission, job_cost
from api.services.errors import Conflict, InvalidCase, NotFound, Unavailable
from api.services.inline import InlineEngine
from api.services.limits import check_case_size, check_raw_case, check_repair_samples
from api.settings import Limits, ServiceSettings
from diagnose.case import Case, case_from_dict
from diagnose.environment import library_versions
from diagnose.models import resolve_generator

Mode = Literal["inputs", "run", "repair"]
"""``repair``: a run with verified repairs (``POST /v1/diagnoses?repair=true``)."""


class DiagnosisService:
    def __init__(self, db: Database, queue, settings: ServiceSettings, inline: InlineEngine) -> None:
        self.db = db
        self.queue = queue
        self.settings = settings
        self.inline = inline
        self.admission = Admission(settings.queue)
        self._inline_slots = threading.BoundedSemaphore(max(1, settings.queue.inline_concurrency))
        # Part of every cache key: a new engine, library or settings version is a new request.
        self._engine_key = sha256_of({
            "libraries": library_versions(),
            "settings": repr((settings.engine.models, settings.engine.inputs, settings.engine.triage)),
        })

    # -- submit -----------------------------------------------------------------
    def submit(self, body: Any, mode: Mode = "run", rerun: bool = False, api_key_id: int | None = None,
               seed_offset: int = 0, scope: int | None = None) -> SubmittedDiagnosis:
        """``api_key_id`` owns what is stored; an identical earlier request is reused only when
        ``scope`` may read it (:attr:`api.services.auth.Caller.scope`: its own key's, None: any)."""
        case = parse_case(body, self.settings.limits)
        check_case_size(case, self.settings.limits, self.inline.prompt_tokens)
        if mode == "repair":
            check_repair_samples(case, self.settings.limits)
        case_data = msgspec.to_builtins(case)
        key = sha256_of({"case": case_data, "mode": mode, "seed_offset": seed_offset,
                         "engine": self._engine_key, "model": _model_stamp(case.model)})
        if not rerun:
            with self.db.session() as session:
                cached = find_cached(session, key, scope)
                if cached is not None:
                    return submitted(view(cached), reused=True)
        if mode == "inputs" and len(case.documents) <= self.settings.queue.inline_inputs_max_documents:
            return submitted(self._inline(case, case_data, key, api_key_id), reused=False)
        return submitted(self._enqueue(case, case_data, key, mode, api_key_id, seed_offset), reused=False)

    def _inline(self, case: Case, case_data: dict, key: str, api_key_id: int | None) -> DiagnosisView:
        if not self._inline_slots.acquire(blocking=False):
            limit = self.settings.queue.inline_concurrency
            raise Unavailable(f"{limit} inline diagnoses are running or waiting for the engine "
                              "(RAG_DIAGNOSE_INLINE_CONCURRENCY); try again shortly",
                              headers={"Retry-After": str(self.settings.queue.inline_retry_after_s)})
        try:
            report = self.inline.inputs(case)
        finally:
            self._inline_slots.release()
        with self.db.session() as session:
            diagnosis = _new(case, case_data, key, "inputs", api_key_id, 0)
            diagnosis.attempts = 1
            session.add(diagnosis)
            record_report(session, diagnosis, report)
            return view(diagnosis)

    def _enqueue(self, case: Case, case_data: dict, key: str, mode: Mode, api_key_id: int | None,
                 seed_offset: int) -> DiagnosisView:
        cost = job_cost(case, mode)
        with self.admission.session(self.db) as session:
            self.admission.admit(session, owner=api_key_id, cost=cost)
            diagnosis = _new(case, case_data, key, mode, api_key_id, seed_offset)
            diagnosis.cost = cost
            session.add(diagnosis)
        try:
            self.queue.enqueue(diagnosis.id)
        except Exception as exc:
            with self.db.session() as session:
                mark_not_queued(session, [diagnosis.id], exc)
            raise Unavailable(f"the job queue is unavailable: {exc}", headers=self.admission.retry_after) from exc
        return view(diagnosis)

    # -- read and cancel --------------------------------------------------------
    # ``scope``: the key whose diagnoses the caller may see (None: all); another key's is a 404.
    def get(self, diagnosis_id: str, scope: int | None = None) -> DiagnosisView:
        with self.db.session() as session:
            return view(self._load(session, diagnosis_id, scope))

    def report(self, diagnosis_id: str, scope: int | None = None) -> dict[str, Any]:
        with self.db.session() as session:
            diagnosis = self._load(session, diagnosis_id, scope)
            if diagnosis.report is None:
                raise Conflict(f"diagnosis {diagnosis_id} is {diagnosis.status}; it has no report yet")
            return diagnosis.report

    def list(self, status: str | None = None, case_id: str | None = None, limit: int = 50,
             scope: int | None = None) -> list[DiagnosisView]:
        with self.db.session() as session:
            return [view(d, with_report=False)
                    for d in recent_diagnoses(session, limit, case_id=case_id, status=status, scope=scope)]

    def cancel(self, diagnosis_id: str, scope: int | None = None) -> DiagnosisView:
        """A queued diagnosis ends cancelled; a running one is flagged and its worker stops at its
        next progress report (within a second), and never records it done afterwards."""
        with self.db.session(immediate=True) as session:
            diagnosis = self._load(session, diagnosis_id, scope, lock=True)
            if not cancel(session, diagnosis):
                raise Conflict(f"diagnosis {diagnosis_id} is already {diagnosis.status}")
            return view(diagnosis)

    def pending(self) -> int:
        with self.db.session() as session:
            return pending_count(session)

    @staticmethod
    def _load(session, diagnosis_id: str, scope: int | None = None, lock: bool = False) -> Diagnosis:
        diagnosis = session.get(Diagnosis, diagnosis_id, with_for_update=lock)
        if diagnosis is None or not visible(diagnosis.api_key_id, scope):
            raise NotFound(f"no diagnosis {diagnosis_id!r}", "id")
        return diagnosis


def visible(owner: int | None, scope: int | None) -> bool:
    """Whether work owned by ``owner`` may be read by a caller of ``scope`` (None: an admin or a
    keyless service, who see everything). Another key's work is answered as if it did not exist."""
    return scope is None or owner == scope


def parse_case(body: Any, limits: Limits | None = None) -> Case:
    """The case of a request body; with ``limits``, what reading it would cost is checked first
    (:func:`~api.services.limits.check_raw_case`)."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidCase(f"the body is not JSON: {exc}", "$") from None
    if limits is not None:
        check_raw_case(body, limits)
    return case_from_dict(body)  # a CaseError answers 422 naming its field (api.problems)


def _model_stamp(name: str) -> list:
    """Which weights the case's model name points at now (a replaced file is a new request)."""
    path = resolve_generator(name).path
    stat = path.stat()
    return [str(path), stat.st_size, stat.st_mtime_ns]


def _new(case: Case, case_data: dict, key: str, mode: Mode, api_key_id: int | None, seed_offset: int) -> Diagnosis:
    return Diagnosis(status="queued", mode=mode, case_id=case.id, case=case_data, request_key=key,
                     api_key_id=api_key_id, seed_offset=seed_offset)


def links(diagnosis_id: str) -> DiagnosisLinks:
    base = f"/v1/diagnoses/{diagnosis_id}"
    return DiagnosisLinks(self=base, report=f"{base}/report.json", report_html=f"{base}/report.html",
                          page=f"/diagnoses/{diagnosis_id}")


def view(diagnosis: Diagnosis, with_report: bool = True) -> DiagnosisView:
    """Contract section 4 (``id, status, report?, error?``) plus progress and links; what a
    diagnosis lacks is left out of the answer (``UNSET``)."""
    return DiagnosisView(
        id=diagnosis.id,
        status=diagnosis.status,
        mode=diagnosis.mode,
        case_id=diagnosis.case_id,
        verdict=diagnosis.verdict,
        attempts=diagnosis.attempts,
        created_at=iso_utc(diagnosis.created_at),
        started_at=iso_utc(diagnosis.started_at),
        finished_at=iso_utc(diagnosis.finished_at),
        links=links(diagnosis.id),
        progress=diagnosis.progress or UNSET,
        cancel_requested=True if diagnosis.cancel_requested and diagnosis.status == "running" else UNSET,
        report=diagnosis.report if with_report and diagnosis.report is not None else UNSET,
        error=diagnosis.error if diagnosis.error is not None else UNSET,
    )


def submitted(diagnosis: DiagnosisView, reused: bool) -> SubmittedDiagnosis:
    """The answer to a submission: the diagnosis, and whether a stored identical request answered it."""
    return SubmittedDiagnosis(**msgspec.structs.asdict(diagnosis), reused=reused)
