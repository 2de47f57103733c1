"""``create_app(settings)``: the Litestar service over the diagnosis services.

On SQLite (the embedded default) the app also runs the job worker in a thread;
on PostgreSQL workers are separate ``diagnose worker`` processes.
"""

from __future__ import annotations

import logging
from importlib.metadata import version
from pathlib import Path
from typing import Any

from litestar import Litestar, Router
from litestar.connection import ASGIConnection
from litestar.di import Provide
from litestar.handlers.base import BaseRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.plugins.prometheus import PrometheusConfig, PrometheusController
from prometheus_client import REGISTRY, Gauge

from api.controllers.diagnoses import DiagnosesController
from api.controllers.health import healthz
from api.controllers.library import LibraryController
from api.controllers.session import SESSION_COOKIE, SessionController
from api.controllers.nightly import NightlyRunsController
from api.db.migrate import upgrade
from api.db.session import Database
from api.db.store import pending_ids
from api.jobs.runner import DiagnosisRunner
from api.pages import PagesController, page_dependencies
from api.guards import json_bodies_only, reject_nul_bytes
from api.problems import EXCEPTION_HANDLERS
from api.openapi import render_plugins, schema_router
from api.security import security_headers
from api.services.auth import FailedAuthLimiter, KeyRing, RateLimiter
from api.services.diagnoses import DiagnosisService
from api.services.inline import InlineEngine
from api.services.nightly_gate import RunFinalizer
from api.settings import ServiceSettings
from diagnose.pipeline import Diagnoser

log = logging.getLogger("rag_diagnose.api")


def build_queue(settings: ServiceSettings, db: Database, with_worker: bool):
    """The job transport for the configured database (see :mod:`api.jobs`)."""
    if settings.uses_postgres:
        from api.jobs.postgres import PostgresQueue

        return PostgresQueue(settings.database_url, settings.queue.stalled_after_s)
    from api.jobs.embedded import EmbeddedQueue

    runner = build_runner(settings, db) if with_worker else None
    return EmbeddedQueue(_queue_dir(settings.database_url), runner, pending=lambda: _pending_ids(db))


def build_runner(settings: ServiceSettings, db: Database) -> DiagnosisRunner:
    """The job runner of a worker (the embedded thread or ``diagnose worker``), with its limits."""
    return DiagnosisRunner(db, lambda: Diagnoser.from_settings(settings.engine), on_finished=RunFinalizer(db),
                           max_attempts=settings.queue.max_attempts, time_limit_s=settings.queue.job_timeout_s)


def _pending_ids(db: Database) -> list[str]:
    with db.session() as session:
        return pending_ids(session)


def _queue_dir(url: str) -> Path:
    """The ack-queue lives next to the SQLite database file."""
    database = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else Path("rag-diagnose.db")
    return database.with_name(database.name + ".queue")


def create_app(
    settings: ServiceSettings | None = None,
    *,
    queue: Any = None,
    inline: InlineEngine | None = None,
    migrate: bool = True,
    warm_up: bool = False,
) -> Litestar:
    settings = settings or ServiceSettings.from_env()
    db = Database(settings.database_url)
    if migrate:
        upgrade(settings.database_url)
    queue = queue or build_queue(settings, db, with_worker=settings.queue.embedded_worker)
    inline = inline or InlineEngine(settings.engine)
    service = DiagnosisService(db, queue, settings, inline)
    keys = KeyRing(db, settings.auth.default_rate_limit, failures=FailedAuthLimiter(settings.auth.failed_auth_limit))
    limiter = RateLimiter()

    def authorize(connection: ASGIConnection, _: BaseRouteHandler) -> None:
        client = connection.client.host if connection.client else "unknown"
        reading = connection.scope.get("method") in ("GET", "HEAD")
        session_key = connection.cookies.get(SESSION_COOKIE) if reading else None
        caller = keys.authenticate(connection.headers.get("authorization"), client, session_key)
        limiter.check(caller)
        connection.state.caller = caller

    def on_startup() -> None:
        queue.start()
        if warm_up:
            inline.warm_up()

    def on_shutdown() -> None:
        queue.stop()
        db.dispose()

    metrics = PrometheusConfig(app_name="rag_diagnose", prefix="rag_diagnose", group_path=True,
                               exclude=["/metrics", "/healthz"])
    _register_gauges(service)
    # Everything but /healthz and /login needs a key once keys exist (/metrics and /schema too).
    guarded = Router(
        path="/",
        route_handlers=[DiagnosesController, LibraryController, NightlyRunsController, PagesController],
        guards=[authorize, reject_nul_bytes, json_bodies_only],
    )
    app = Litestar(
        route_handlers=[guarded, Router(path="/", route_handlers=[MetricsController], guards=[authorize]),
                        SessionController, healthz],
        dependencies={"service": Provide(lambda: service, sync_to_thread=False), **page_dependencies(db)},
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[security_headers, metrics.middleware],
        openapi_config=OpenAPIConfig(title="rag-diagnose", version=version("rag-diagnose"),
                                     render_plugins=render_plugins(), openapi_router=schema_router([authorize])),
        request_max_body_size=settings.limits.max_body_bytes,
        on_startup=[on_startup],
        on_shutdown=[on_shutdown],
    )
    app.state.service = service
    app.state.key_ring = keys
    app.state.limiter = limiter
    return app


class MetricsController(PrometheusController):
    """``/metrics`` in Prometheus' text format; left out of the OpenAPI document, which is JSON only."""

    include_in_schema = False


_GAUGES: dict[str, Gauge] = {}


def _register_gauges(service: DiagnosisService) -> None:
    """Queue depth and live workers, read when /metrics is scraped (one set per process)."""
    if "pending" not in _GAUGES:
        _GAUGES["pending"] = Gauge("rag_diagnose_pending_diagnoses", "Diagnoses queued or running", registry=REGISTRY)
        _GAUGES["workers"] = Gauge("rag_diagnose_workers_alive", "Workers with a recent heartbeat", registry=REGISTRY)
    _GAUGES["pending"].set_function(service.pending)
    _GAUGES["workers"].set_function(service.queue.workers_alive)
