"""Nightly regression runs over the stored library, fanned out over the job queue.

A run is one :class:`NightlyRun` row plus, per current library case, one
``mode=run`` diagnosis queued like any other, so every worker (threads,
processes, machines on PostgreSQL) takes a share. The jobs are durable: a
restarted service or worker continues the run's remaining diagnoses, and a
finished diagnosis is never run again (``claim`` skips it). When the last one
finishes, the worker's hook (:class:`~api.services.nightly_gate.RunFinalizer`)
compares the run with its baseline; reading a run finishes it too, should that
hook have been missed.

A run is admitted like single diagnoses, under the same capacity and in one step
(:class:`~api.services.admission.Admission`): all its cases fit the free capacity,
or it is refused whole with 503 and ``Retry-After`` and nothing is stored.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from msgspec import UNSET

from api.db.library import library_of
from api.db.models import Diagnosis, LibraryCase, NightlyItem, NightlyRun, iso_utc, new_id
from api.db.nightly import latest_done_run, recent_runs, run_progress, runs_by_id
from api.db.session import Database
from api.db.store import finish, mark_not_queued, sha256_of
from api.responses import NightlyRunView, RunLinks, RunProgress
from api.services.admission import Admission, job_cost
from api.services.diagnoses import visible
from api.services.errors import (Conflict, Forbidden, InvalidRequest, NotFound, ServiceError, Unavailable,
                                 failure_record)
from api.services.limits import check_case_limits
from api.services.nightly_gate import finalize, stored_result
from api.settings import Limits, ServiceSettings
from diagnose.case import case_from_dict
from diagnose.errors import CaseError
from diagnose.nightly.junit import render_junit
from diagnose.nightly.markdown import render_markdown
from diagnose.nightly.runner import seed_offset_for

FailOn = Literal["warn", "fail", "never"]
FAIL_ON = ("warn", "fail", "never")
Library = Literal["own", "shared"]
LIBRARIES = ("own", "shared")
MAX_SEED_OFFSET = 2**31 - 2**16
"""Seed offsets are stored as 32-bit integers; sample seeds add up to MAX_SEEDS on top."""


class NightlyService:
    def __init__(self, db: Database, queue, settings: ServiceSettings | None = None,
                 admission: Admission | None = None) -> None:
        self.db = db
        self.queue = queue
        # The API passes its own settings and admission (one capacity for runs and diagnoses);
        # a worker's scheduled run reads the same RAG_DIAGNOSE_* variables.
        self.settings = settings or ServiceSettings.from_env()
        self.gate = self.settings.engine.gate
        self.admission = admission or Admission(self.settings.queue)

    def start_run(self, tags: Sequence[str] = (), baseline_id: str | None = None, fail_on: FailOn = "fail",
                  seed_offset: int | None = None, owner: int | None = None, library: Library | None = None,
                  admin: bool = False) -> NightlyRunView:
        """Create the run and its diagnoses, then queue them; answers the run's view.

        ``owner`` (the starting key; None: the schedule or a keyless service) owns the run and
        its diagnoses, and the run diagnoses ``owner``'s own library; its baseline is one of
        ``owner``'s runs. ``library`` ``"shared"`` runs the library that belongs to no key
        (``diagnose library push``, the scheduled runs) instead: an ``admin`` key's privilege
        (403 naming ``library`` for a user key); that run and its diagnoses belong to no key,
        like a scheduled run, and its baseline is one of those runs, while admission counts
        it against ``owner``. ``library`` None is ``"own"``, except for an admin key whose
        own library holds no case carrying ``tags``: that key runs the shared library.

        ``baseline_id`` None means the latest done run with the same tags (none: every
        case is new). ``seed_offset`` None derives one from the run id, so each run
        draws fresh samples and the gate sees real sampling noise.

        Admission is that of single diagnoses, in the same step: a run whose cases do
        not fit the free capacity is refused whole (:class:`QueueFull`, 503 with
        ``Retry-After``) and stores nothing; one larger than the whole capacity is a
        422 naming ``tags``. A stored case over the current limits (stored before them,
        or by ``diagnose library push``) is not queued: its diagnosis fails at once,
        naming the field, and the gate counts it as an error.
        """
        if fail_on not in FAIL_ON:
            raise InvalidRequest(f"fail_on must be one of {', '.join(FAIL_ON)} (got {fail_on!r})", "fail_on")
        if seed_offset is not None and not 0 <= seed_offset <= MAX_SEED_OFFSET:
            raise InvalidRequest(f"seed_offset must be in [0, {MAX_SEED_OFFSET}] (got {seed_offset})", "seed_offset")
        if library not in (None, *LIBRARIES):
            raise InvalidRequest(f"library must be one of {', '.join(LIBRARIES)} (got {library!r})", "library")
        if library == "shared" and owner is not None and not admin:
            raise Forbidden("only an admin key may run the shared library (the one `diagnose library push` "
                            "fills); a user key runs its own", "library")
        tags = sorted(set(tags))
        run_id = new_id()
        offset = seed_offset_for(run_id) if seed_offset is None else seed_offset
        capacity = self.settings.queue.capacity
        with self.admission.session(self.db) as session:
            library_owner, cases = _library(session, owner, tags, library, admin)
            if not cases:
                raise InvalidRequest(_no_cases(tags, keyed=library_owner is not None), "tags")
            baseline = _resolve_baseline(session, baseline_id, tags, library_owner)
            refused = {case.id: error for case in cases if (error := _over_limits(case, self.settings.limits))}
            runnable = len(cases) - len(refused)
            if runnable > capacity:
                raise InvalidRequest(
                    f"the run would queue {runnable} cases; the queue holds at most {capacity} "
                    "(RAG_DIAGNOSE_CAPACITY): select fewer cases with tags, or raise the capacity", "tags")
            costs = {case.id: job_cost(case_from_dict(case.case), "run") for case in cases if case.id not in refused}
            self.admission.admit(session, runnable, f"a nightly run of {runnable} cases", owner=owner,
                                 cost=sum(costs.values()), largest=max(costs.values(), default=0))
            session.add(NightlyRun(id=run_id, status="running", tags=tags, fail_on=fail_on, seed_offset=offset,
                                   baseline_id=baseline, api_key_id=library_owner))
            diagnosis_ids = []
            for case in cases:
                diagnosis = Diagnosis(
                    id=new_id(), status="queued", mode="run", case_id=case.case_id, case=case.case,
                    seed_offset=offset, request_key=sha256_of({"nightly_run": run_id, "case": case.content_hash}),
                    api_key_id=library_owner, cost=costs.get(case.id, 0))
                if case.id in refused:
                    finish(diagnosis, "failed", refused[case.id])
                else:
                    diagnosis_ids.append(diagnosis.id)
                session.add(diagnosis)
                session.add(NightlyItem(run_id=run_id, library_case_id=case.id, diagnosis_id=diagnosis.id))
        self._enqueue(run_id, diagnosis_ids)
        return self.get(run_id, with_summary=False)

    def _enqueue(self, run_id: str, diagnosis_ids: list[str]) -> None:
        for i, diagnosis_id in enumerate(diagnosis_ids):
            try:
                self.queue.enqueue(diagnosis_id)
            except Exception as exc:
                # The rest cannot run: they fail (so the run still finishes) and the caller hears why.
                with self.db.session() as session:
                    mark_not_queued(session, diagnosis_ids[i:], exc)
                finalize(self.db, run_id, self.gate)
                raise Unavailable(f"the job queue is unavailable ({exc}); nightly run {run_id} records "
                                  f"{len(diagnosis_ids) - i} of {len(diagnosis_ids)} cases as not run",
                                  headers=self.admission.retry_after) from exc

    # -- read -------------------------------------------------------------------
    # ``scope``: the key whose runs the caller may see (None: all); another key's run is a 404.
    def get(self, run_id: str, with_summary: bool = True, scope: int | None = None) -> NightlyRunView:
        finalize(self.db, run_id, self.gate)  # a no-op unless every case finished and nobody closed the run
        with self.db.session() as session:
            run = _load(session, run_id, scope)
            return view(run, run_progress(session, [run_id])[run_id], with_summary)

    def list(self, status: str | None = None, limit: int = 50, scope: int | None = None) -> list[NightlyRunView]:
        """Recent runs, newest first, with progress, gate and counts (not the per-case summary)."""
        with self.db.session() as session:
            rows = [(r.id, r.status) for r in recent_runs(session, limit, status, scope)]
            progress = run_progress(session, [run_id for run_id, _ in rows])
        for run_id, run_status in rows:
            finished, total = progress[run_id]
            if run_status == "running" and finished == total:
                finalize(self.db, run_id, self.gate)
        with self.db.session() as session:
            runs = runs_by_id(session, list(progress))
            return [view(runs[run_id], progress[run_id], with_summary=False) for run_id, _ in rows if run_id in runs]

    def junit(self, run_id: str, scope: int | None = None) -> str:
        return render_junit(self._result(run_id, scope))

    def markdown(self, run_id: str, scope: int | None = None) -> str:
        return render_markdown(self._result(run_id, scope))

    def _result(self, run_id: str, scope: int | None):
        finalize(self.db, run_id, self.gate)
        with self.db.session() as session:
            run = _load(session, run_id, scope)
            if run.status != "done":
                raise Conflict(f"nightly run {run_id} is {run.status}; its results come when every case finished")
            return stored_result(session, run)


def _library(session, owner: int | None, tags: list[str], library: Library | None,
             admin: bool) -> tuple[int | None, list[LibraryCase]]:
    """Whose library the run diagnoses (None: the shared one) and its current cases carrying ``tags``
    (:meth:`NightlyService.start_run` says which)."""
    if library == "shared" or owner is None:
        return None, library_of(session, None, tags)
    cases = library_of(session, owner, tags)
    if not cases and library is None and admin:
        return None, library_of(session, None, tags)
    return owner, cases


def _no_cases(tags: list[str], keyed: bool) -> str:
    """Why a run has nothing to diagnose, and where its cases would come from; ``keyed``: the run
    was over a key's own library."""
    what = f"no current library case carries every tag of {tags}" if tags else "the library holds no current case"
    if keyed:
        return (f"{what} in this key's library: push cases with POST /v1/library under this key (cases "
                "stored with `diagnose library push` are in the shared library, which an admin key runs "
                'with "library": "shared")')
    return f"{what} in the shared library: push cases with `diagnose library push` or POST /v1/library first"


def _over_limits(case: LibraryCase, limits: Limits) -> dict[str, Any] | None:
    """Why the stored case may not be queued now (a diagnosis error), or None."""
    try:
        check_case_limits(case_from_dict(case.case), limits)
    except (CaseError, ServiceError) as exc:
        return failure_record(exc)
    return None


def _load(session, run_id: str, scope: int | None) -> NightlyRun:
    run = session.get(NightlyRun, run_id)
    if run is None or not visible(run.api_key_id, scope):
        raise NotFound(f"no nightly run {run_id!r}", "id")
    return run


def _resolve_baseline(session, baseline_id: str | None, tags: list[str], owner: int | None) -> str | None:
    if baseline_id is not None:
        # A NUL cannot be in any id, and PostgreSQL fails (500) comparing text with one.
        base = session.get(NightlyRun, baseline_id) if "\x00" not in baseline_id else None
        if base is None or base.api_key_id != owner:
            raise InvalidRequest(f"no nightly run {baseline_id!r}", "baseline")
        if base.status != "done":
            raise InvalidRequest(f"nightly run {baseline_id} is {base.status}; a baseline must be done", "baseline")
        return base.id
    return latest_done_run(session, tags, owner)


def links(run_id: str, baseline_id: str | None = None) -> RunLinks:
    base = f"/v1/nightly-runs/{run_id}"
    return RunLinks(self=base, junit=f"{base}/junit.xml", summary_md=f"{base}/summary.md",
                    baseline=f"/v1/nightly-runs/{baseline_id}" if baseline_id else UNSET)


def view(run: NightlyRun, progress: tuple[int, int], with_summary: bool = True) -> NightlyRunView:
    """``{id, status, progress: {finished, total}, gate?, counts?, summary?, links, ...}``; ``gate``,
    ``counts`` and ``summary`` are left out (``UNSET``) until the run is done."""
    summary = run.summary
    return NightlyRunView(
        id=run.id, status=run.status, tags=list(run.tags), fail_on=run.fail_on,
        seed_offset=run.seed_offset, baseline_id=run.baseline_id,
        created_at=iso_utc(run.created_at), finished_at=iso_utc(run.finished_at),
        progress=RunProgress(finished=progress[0], total=progress[1]),
        links=links(run.id, run.baseline_id),
        gate=summary.get("gate") if summary is not None else UNSET,
        counts=summary.get("counts") if summary is not None else UNSET,
        summary=summary if summary is not None and with_summary else UNSET,
    )
