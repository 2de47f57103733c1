"""``create_app(settings)``: the Litestar service over the diagnosis services.

On SQLite (the embedded default) the app also runs the job worker in a thread;
on PostgreSQL workers are separate ``diagnose worker`` processes.

Constructing the app only builds objects; its lifespan brings the database schema
up to date, loads the inline engine's models when asked, starts the queue (and the
embedded worker) and stops it again. The inline engine and the embedded worker share
one :class:`~diagnose.models.ModelRegistry` (:class:`SharedRegistry`), so the embedder
is loaded once per process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
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
from sqlalchemy.orm import Session

from api.controllers.diagnoses import DiagnosesController
from api.controllers.health import LastFacts, healthz
from api.controllers.library import LibraryController
from api.controllers.session import SessionController
from api.controllers.nightly import NightlyRunsController
from api.db.migrate import upgrade
from api.db.session import Database
from api.db.store import pending_ids
from api.jobs.runner import DiagnosisRunner
from api.pages import PagesController, page_dependencies
from api.guards import json_bodies_only, reject_nul_bytes, reject_repeated_parameters
from api.problems import EXCEPTION_HANDLERS, problem_details_plugin
from api.openapi import render_plugins, schema_router
from api.security import SESSION_COOKIE, security_headers
from api.services.auth import FailedAuthLimiter, KeyRing, RateLimiter
from api.services.diagnoses import DiagnosisService
from api.services.inline import InlineEngine
from api.services.nightly_gate import RunFinalizer
from api.settings import DatabaseTimeouts, ServiceSettings
from diagnose.models import ModelRegistry
from diagnose.pipeline import Diagnoser
from diagnose.settings import ModelSettings

log = logging.getLogger("rag_diagnose.api")

Registry = Callable[[], ModelRegistry]
"""Where a diagnoser gets its models: a process's :class:`SharedRegistry`."""


class SharedRegistry:
    """The one :class:`ModelRegistry` of a process, made on first use (making one imports
    transformers, which the app's construction should not wait for).

    The inline engine's request threads and the embedded worker thread then use the same
    models: loading is serialised by the registry's own lock, and using a loaded model
    from two threads is inference only (torch modules and fast tokenizers are read, not
    changed, once :meth:`api.services.inline.InlineEngine.warm_up` has run them once).
    """

    def __init__(self, settings: ModelSettings) -> None:
        self._settings = settings
        self._registry: ModelRegistry | None = None
        self._lock = threading.Lock()

    def __call__(self) -> ModelRegistry:
        with self._lock:
            if self._registry is None:
                self._registry = ModelRegistry(self._settings)
            return self._registry


def build_queue(settings: ServiceSettings, db: Database, with_worker: bool, registry: Registry | None = None):
    """The job transport for the configured database (see :mod:`api.jobs`); the embedded
    worker's diagnoser takes its models from ``registry`` when given."""
    if settings.uses_postgres:
        from api.jobs.postgres import PostgresQueue

        return PostgresQueue(settings.database_url, settings.queue.stalled_after_s, timeouts=settings.database)
    from api.jobs.embedded import EmbeddedQueue

    runner = build_runner(settings, db, registry) if with_worker else None
    return EmbeddedQueue(_queue_dir(settings.database_url), runner, pending=lambda: _pending_ids(db),
                         release_leases=runner.forget_leases if runner is not None else None)


def build_runner(settings: ServiceSettings, db: Database, registry: Registry | None = None) -> DiagnosisRunner:
    """The job runner of a worker (the embedded thread or ``diagnose worker``), with its limits;
    its diagnoser (made on the first job) takes its models from ``registry`` when given, else
    loads its own."""

    def diagnoser() -> Diagnoser:
        return Diagnoser.from_settings(settings.engine, registry=registry() if registry is not None else None)

    return DiagnosisRunner(db, diagnoser, on_finished=RunFinalizer(db),
                           max_attempts=settings.queue.max_attempts, time_limit_s=settings.queue.job_timeout_s,
                           lease_s=settings.queue.stalled_after_s, renew_every_s=settings.queue.heartbeat_s)


def _pending_ids(db: Database) -> list[str]:
    with db.session() as session:
        return pending_ids(session)


def _queue_dir(url: str) -> Path:
    """The ack-queue lives next to the SQLite database file."""
    database = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else Path("rag-diagnose.db")
    return database.with_name(database.name + ".queue")


class AppDatabase(Database):
    """The app's database: with ``migrate``, its schema is brought up to date (idempotent) once,
    before the first session: at the app's startup, or before it when a script or a test
    reads or seeds the database of an app it has not started (or serves it without a
    lifespan, as an ASGI client may)."""

    def __init__(self, url: str, migrate: bool, timeouts: DatabaseTimeouts | None = None) -> None:
        super().__init__(url, timeouts)
        self._needs_upgrade = migrate
        self._upgrade_lock = threading.Lock()

    def upgrade(self) -> None:
        if not self._needs_upgrade:
            return
        with self._upgrade_lock:
            if self._needs_upgrade:
                upgrade(self.url)
                self._needs_upgrade = False

    @contextmanager
    def session(self, immediate: bool = False) -> Iterator[Session]:
        self.upgrade()
        with super().session(immediate) as session:
            yield session


def create_app(
    settings: ServiceSettings | None = None,
    *,
    queue: Any = None,
    inline: InlineEngine | None = None,
    migrate: bool = True,
    warm_up: bool = False,
) -> Litestar:
    """The service. ``queue`` and ``inline`` replace the configured job transport and inline
    engine; ``migrate`` upgrades the schema at startup; ``warm_up`` loads the inline engine's
    models at startup rather than on the first request that needs them."""
    settings = settings or ServiceSettings.from_env()
    db = AppDatabase(settings.database_url, migrate=migrate, timeouts=settings.database)
    registry = SharedRegistry(settings.engine.models)  # for the inline engine and the embedded worker
    queue = queue or build_queue(settings, db, with_worker=settings.queue.embedded_worker, registry=registry)
    inline = inline or InlineEngine(settings.engine, registry=registry)
    service = DiagnosisService(db, queue, settings, inline)
    keys = KeyRing(db, settings.auth.default_rate_limit, failures=FailedAuthLimiter(settings.auth.failed_auth_limit))
    limiter = RateLimiter()

    def authorize(connection: ASGIConnection, _: BaseRouteHandler) -> None:
        client = connection.client.host if connection.client else "unknown"
        reading = connection.scope.get("method") in ("GET", "HEAD")
        session_token = connection.cookies.get(SESSION_COOKIE) if reading else None
        caller = keys.authenticate(connection.headers.get("authorization"), client, session_token)
        limiter.check(caller)
        connection.state.caller = caller

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        db.upgrade()
        if warm_up:
            inline.warm_up()  # before the worker starts: it shares these models
        queue.start()
        try:
            yield
        finally:
            queue.stop()
            db.dispose()

    metrics = PrometheusConfig(app_name="rag_diagnose", prefix="rag_diagnose", group_path=True,
                               exclude=["/metrics", "/healthz"])
    _register_gauges(service)
    # Everything but /healthz and /login needs a key once keys exist (/metrics and /schema too).
    guarded = Router(
        path="/",
        route_handlers=[DiagnosesController, LibraryController, NightlyRunsController, PagesController],
        guards=[authorize, reject_nul_bytes, reject_repeated_parameters, json_bodies_only],
    )
    app = Litestar(
        route_handlers=[guarded, Router(path="/", route_handlers=[MetricsController], guards=[authorize]),
                        SessionController, healthz],
        dependencies={"service": Provide(lambda: service, sync_to_thread=False), **page_dependencies(db)},
        exception_handlers=EXCEPTION_HANDLERS,
        plugins=[problem_details_plugin()],
        middleware=[security_headers, metrics.middleware],
        openapi_config=OpenAPIConfig(title="rag-diagnose", version=version("rag-diagnose"),
                                     render_plugins=render_plugins(), openapi_router=schema_router([authorize])),
        request_max_body_size=settings.limits.max_body_bytes,
        lifespan=[lifespan],
    )
    app.state.service = service
    app.state.health_facts = LastFacts()
    app.state.read_deadline_s = settings.database.db_request_deadline_s  # api.controllers.reads
    app.state.key_ring = keys
    app.state.limiter = limiter
    app.state.session_ttl_s = settings.auth.session_ttl_s
    return app


def server_options(settings: ServiceSettings) -> dict[str, Any]:
    """``uvicorn.run`` options from the settings: proxy headers only from the configured proxies
    (uvicorn on its own believes any ``X-Forwarded-For`` from 127.0.0.1), and a time limit on
    each request's head and body (:mod:`api.server`)."""
    from api.server import header_timeout_protocol

    proxies = settings.auth.forwarded_allow_ips.strip()
    options: dict[str, Any] = {"proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or None}
    if settings.auth.header_timeout_s > 0:
        options["http"] = header_timeout_protocol(settings.auth.header_timeout_s, settings.auth.body_timeout_s)
    return options


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
