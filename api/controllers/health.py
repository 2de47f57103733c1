"""``/healthz``: 200 when the service can take work, 503 (with the reason) when it cannot.

It cannot when the database is unreachable or does not answer within
:data:`HEALTH_DEADLINE_S`, when no worker is alive to run what it accepts (PostgreSQL: no
``diagnose worker`` heard from within ``stalled_after_s``; embedded: the worker thread of
this process is not running), or when the queue is full. Every 503 carries ``Retry-After``
(the database: 5 s; a full queue: the estimate a submission gets, the work ahead over the
rate; no worker: the stalled-after window, :attr:`api.services.admission.Admission.no_worker_retry_after`)
and the facts it has: queue depth and workers, and on PostgreSQL the seconds since the last
worker heartbeat; with the database gone, the last facts read (``last_known``, with their age).
``serve --no-worker`` on SQLite runs no worker by choice: it stores work for later and
stays 200, saying ``"worker": "disabled"``.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from anyio import CapacityLimiter, to_thread
from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency

from api.openapi import problem_responses
from api.problems import DATABASE_RETRY_AFTER, problem
from api.responses import Health
from api.services.diagnoses import DiagnosisService

HEALTH_DEADLINE_S = 2.5
"""A database that has not answered the health check within this is unavailable (503): the
check is abandoned, whatever the connection's own timeouts would still wait."""


def _no_worker_detail(kind: str, pending: int, stalled_after_s: float) -> str:
    waiting = f"{pending} diagnos{'i' if pending == 1 else 'e'}s pending"
    if kind == "postgresql":
        return (f"no worker is alive (none sent a heartbeat within {stalled_after_s:g} s); "
                f"{waiting}; start `diagnose worker`")
    return f"the worker thread of this process is not running; {waiting}"


_OWN_THREADS = CapacityLimiter(2)
"""``/healthz`` does not wait for a thread of the shared pool, which a burst of requests may hold."""


class LastFacts:
    """The facts of the last health check that reached the database, for the 503 of one that did not."""

    facts: dict[str, Any] | None = None
    at: float = 0.0

    def keep(self, facts: dict[str, Any]) -> None:
        self.facts, self.at = dict(facts), time.monotonic()

    def view(self) -> dict[str, Any]:
        if self.facts is None:
            return {}
        return {"last_known": {**self.facts, "age_s": round(time.monotonic() - self.at, 1)}}


@get("/healthz", summary="Can the service take work?", tags=["operations"], responses=problem_responses(503))
async def healthz(service: NamedDependency[DiagnosisService], state: State) -> Health:
    last: LastFacts = state.health_facts
    queue = service.queue
    expects_workers = bool(getattr(queue, "expects_workers", False))
    heartbeat_age = getattr(queue, "last_heartbeat_age_s", None)

    settings = service.settings.queue
    capacity = settings.capacity
    admission = service.admission

    def check() -> tuple[dict[str, Any], dict[str, str] | None]:
        """The facts, and the ``Retry-After`` of a 503 (None: the service can take work)."""
        facts = {"pending": service.pending(), "workers": queue.workers_alive()}
        if heartbeat_age is not None:
            facts["last_heartbeat_age_s"] = heartbeat_age()
        if expects_workers and facts["workers"] < 1:
            return facts, admission.no_worker_retry_after
        if facts["pending"] >= capacity:  # the estimate a submission gets, within this deadline too
            with service.db.session() as session:
                return facts, admission.queue_retry_after(session)
        return facts, None

    try:
        with anyio.fail_after(HEALTH_DEADLINE_S):
            facts, retry_after = await to_thread.run_sync(check, limiter=_OWN_THREADS, abandon_on_cancel=True)
    except TimeoutError as exc:
        raise problem(503, "unavailable", f"the database did not answer within {HEALTH_DEADLINE_S:g} s",
                      headers=DATABASE_RETRY_AFTER, queue=queue.kind, **last.view()) from exc
    except Exception as exc:  # noqa: BLE001 - any database failure means "cannot take work"
        raise problem(503, "unavailable", f"database unreachable: {type(exc).__name__}",
                      headers=DATABASE_RETRY_AFTER, queue=queue.kind, **last.view()) from exc
    last.keep(facts)
    details = {"queue": queue.kind, "capacity": capacity, **facts}
    if not expects_workers and queue.kind == "sqlite":
        details["worker"] = "disabled"
    if expects_workers and facts["workers"] < 1:
        raise problem(503, "no worker", _no_worker_detail(queue.kind, facts["pending"], settings.stalled_after_s),
                      headers=retry_after, **details)
    if retry_after is not None:
        raise problem(503, "queue full", f"{facts['pending']} of {capacity} slots in use",
                      headers=retry_after, **details)
    return Health(status="ok", **details)
