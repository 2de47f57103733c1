"""``/healthz``: 200 when the service can take work, 503 (with the reason) when it cannot."""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from litestar import Response, get
from litestar.di import NamedDependency

from api.openapi import problem_responses
from api.problems import problem
from api.services.diagnoses import DiagnosisService


@get("/healthz", summary="Can the service take work?", tags=["operations"], responses=problem_responses(503))
async def healthz(service: NamedDependency[DiagnosisService]) -> Response[dict[str, Any]]:
    def check() -> dict[str, Any]:
        return {"pending": service.pending(), "workers": service.queue.workers_alive()}

    try:
        facts = await to_thread.run_sync(check)
    except Exception as exc:  # noqa: BLE001 - any database failure means "cannot take work"
        return problem(503, "unavailable", f"database unreachable: {type(exc).__name__}")
    capacity = service.settings.queue.capacity
    details = {"queue": service.queue.kind, "capacity": capacity, **facts}
    if facts["pending"] >= capacity:
        return problem(503, "queue full", f"{facts['pending']} of {capacity} slots in use",
                       headers={"Retry-After": str(service.settings.queue.retry_after_s)}, **details)
    return Response({"status": "ok", **details})
