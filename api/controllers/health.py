"""``/healthz``: 200 when the service can take work, 503 (with the reason) when it cannot.

It cannot when the database is unreachable, when no worker is alive to run what it
accepts (PostgreSQL: no ``diagnose worker`` heard from within ``stalled_after_s``;
embedded: the worker thread of this process is not running), or when the queue is full.
``serve --no-worker`` on SQLite runs no worker by choice: it stores work for later and
stays 200, saying ``"worker": "disabled"``.
"""

from __future__ import annotations

from typing import Any

from anyio import CapacityLimiter, to_thread
from litestar import get
from litestar.di import NamedDependency

from api.openapi import problem_responses
from api.problems import problem
from api.responses import Health
from api.services.diagnoses import DiagnosisService


def _no_worker_detail(kind: str, pending: int, stalled_after_s: float) -> str:
    waiting = f"{pending} diagnos{'i' if pending == 1 else 'e'}s pending"
    if kind == "postgresql":
        return (f"no worker is alive (none sent a heartbeat within {stalled_after_s:g} s); "
                f"{waiting}; start `diagnose worker`")
    return f"the worker thread of this process is not running; {waiting}"


_OWN_THREADS = CapacityLimiter(2)
"""``/healthz`` does not wait for a thread of the shared pool, which a burst of requests may hold."""


@get("/healthz", summary="Can the service take work?", tags=["operations"], responses=problem_responses(503))
async def healthz(service: NamedDependency[DiagnosisService]) -> Health:
    queue = service.queue
    expects_workers = bool(getattr(queue, "expects_workers", False))

    def check() -> dict[str, Any]:
        return {"pending": service.pending(), "workers": queue.workers_alive()}

    try:
        facts = await to_thread.run_sync(check, limiter=_OWN_THREADS)
    except Exception as exc:  # noqa: BLE001 - any database failure means "cannot take work"
        raise problem(503, "unavailable", f"database unreachable: {type(exc).__name__}") from exc
    settings = service.settings.queue
    capacity = settings.capacity
    details = {"queue": queue.kind, "capacity": capacity, **facts}
    if not expects_workers and queue.kind == "sqlite":
        details["worker"] = "disabled"
    if expects_workers and facts["workers"] < 1:
        raise problem(503, "no worker", _no_worker_detail(queue.kind, facts["pending"], settings.stalled_after_s),
                       headers=service.admission.retry_after, **details)
    if facts["pending"] >= capacity:
        raise problem(503, "queue full", f"{facts['pending']} of {capacity} slots in use",
                       headers=service.admission.retry_after, **details)
    return Health(status="ok", **details)
