"""``diagnose serve``, ``worker``, ``db``, ``keys`` and ``library``: the service's commands.

They import the service (``api``) only when run, so the engine and the other
commands never load web or database code.
"""

from __future__ import annotations

from pathlib import Path

import click


def register(cli: click.Group) -> None:
    cli.add_command(serve)
    cli.add_command(worker)
    cli.add_command(db)
    cli.add_command(keys)
    cli.add_command(library)


def _settings():
    from api.settings import ServiceSettings

    return ServiceSettings.from_env()


def _as_usage_error(call):
    """A refused request (duplicate name, unknown key, bad limit) is bad usage: exit 2."""
    from api.services.errors import ServiceError
    from diagnose.errors import UsageError

    try:
        return call()
    except ServiceError as exc:
        raise UsageError(exc.detail) from None
    except ValueError as exc:  # limits' parser: "not a valid rate limit string"
        raise UsageError(f"--rate-limit: {exc}") from None


def _database():
    from api.db.session import Database

    return Database(_settings().database_url)


@click.command()
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port (default 8000).")
@click.option("--no-worker", is_flag=True, help="SQLite only: do not run diagnoses in this process.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info", show_default=True)
def serve(host: str | None, port: int | None, no_worker: bool, log_level: str) -> None:
    """Run the REST service and report pages.

    The database is a SQLite file (./rag-diagnose.db) unless DATABASE_URL names
    another, e.g. postgresql://user@host/db. With SQLite the diagnoses run in a
    worker thread of this process; with PostgreSQL start `diagnose worker`
    processes (on any machine that reaches the database). The schema is
    migrated at start. OpenAPI: /schema/openapi.json.
    """
    import dataclasses
    import logging

    import uvicorn

    from api.app import create_app, server_options
    from api.db.migrate import upgrade

    settings = _settings()
    if no_worker:
        settings = dataclasses.replace(settings, queue=dataclasses.replace(settings.queue, embedded_worker=False))
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _reachable(lambda: upgrade(settings.database_url))
    app = create_app(settings, warm_up=True)
    server = settings.engine.server
    click.echo(f"rag-diagnose serving on http://{host or server.host}:{port or server.port} "
               f"({'PostgreSQL' if settings.uses_postgres else 'SQLite'}: {shown_url(settings.database_url)})", err=True)
    uvicorn.run(app, host=host or server.host, port=port or server.port, log_level=log_level,
                **server_options(settings))


def shown_url(url: str) -> str:
    """A database URL as logs and banners show it: the password masked."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unparsable DATABASE_URL)"


def _reachable(call) -> None:
    """Run ``call`` (the start-up migration); a database that cannot be reached or a URL that is
    wrong is one line (exit 1), not a traceback."""
    from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

    from diagnose.errors import DiagnoseError

    try:
        call()
    except (DBAPIError, ArgumentError, NoSuchModuleError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise DiagnoseError(f"the database at {shown_url(_settings().database_url)} is unreachable: {reason}") from None


@click.command()
@click.option("--name", default=None, help="Worker name shown in the queue's records (default: host and pid).")
def worker(name: str | None) -> None:
    """Run diagnoses from the PostgreSQL job queue (DATABASE_URL), one at a time.

    Start one per GPU or per machine; each loads its own models. A worker that
    dies or freezes mid-job stops sending heartbeats and within
    RAG_DIAGNOSE_STALLED_AFTER_S its job runs again on another worker, at most
    RAG_DIAGNOSE_MAX_ATTEMPTS times. A job past RAG_DIAGNOSE_JOB_TIMEOUT_S fails;
    one stuck past it without reporting progress makes the worker exit (code 75)
    for its supervisor to restart. SIGTERM stops after putting the running
    diagnosis back on the queue.
    """
    import logging
    import os
    import socket

    from api.app import build_runner
    from api.db.migrate import upgrade
    from api.db.session import Database
    from api.jobs.postgres import PostgresQueue
    from api.services.nightly import NightlyService
    from diagnose.errors import UsageError

    settings = _settings()
    if not settings.uses_postgres:
        raise UsageError("`diagnose worker` needs DATABASE_URL=postgresql://...; "
                         "with the SQLite default, `diagnose serve` runs the worker itself")
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _reachable(lambda: upgrade(settings.database_url))
    database = Database(settings.database_url, settings.database)
    runner = build_runner(settings, database)
    queue = PostgresQueue(settings.database_url, settings.queue.stalled_after_s, settings.queue.nightly_cron,
                          max_attempts=settings.queue.max_attempts, timeouts=settings.database)
    nightly_tags = [t.strip() for t in settings.queue.nightly_tags.split(",") if t.strip()]
    name = name or f"{socket.gethostname()}:{os.getpid()}"
    click.echo(f"worker {name} waiting for diagnoses", err=True)
    queue.run_worker(runner, heartbeat_s=settings.queue.heartbeat_s, name=name,
                     start_nightly=lambda: NightlyService(database, queue, settings=settings).start_run(nightly_tags))


@click.group()
def db() -> None:
    """Database schema (Alembic migrations in migrations/)."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Migrate DATABASE_URL (default: the SQLite file) up to REVISION."""
    from api.db.migrate import upgrade

    upgrade(_settings().database_url, revision)
    click.echo(f"database at {revision}", err=True)


@db.command("downgrade")
@click.argument("revision")
def db_downgrade(revision: str) -> None:
    """Migrate DATABASE_URL down to REVISION (`base` removes every table)."""
    from api.db.migrate import downgrade

    downgrade(_settings().database_url, revision)
    click.echo(f"database at {revision}", err=True)


@click.group()
def keys() -> None:
    """API keys. Once one exists, every /v1 request needs `Authorization: Bearer KEY`."""


@keys.command("add")
@click.argument("name")
@click.option("--rate-limit", help='Requests allowed per window, e.g. "60/minute" (default: RAG_DIAGNOSE_DEFAULT_RATE_LIMIT or 120/minute).')
@click.option("--role", type=click.Choice(["user", "admin"]), default="user", show_default=True,
              help="user: reads, lists and cancels its own diagnoses, library and nightly runs; admin: everyone's.")
def keys_add(name: str, rate_limit: str | None, role: str) -> None:
    """Create a key and print it once; only its sha256 is stored."""
    from api.db.migrate import upgrade
    from api.services.auth import create_key

    upgrade(_settings().database_url)
    click.echo(_as_usage_error(lambda: create_key(_database(), name, rate_limit, role)))


@keys.command("list")
def keys_list() -> None:
    """Names, limits and state of the keys (never the keys)."""
    from api.services.auth import list_keys

    for key in list_keys(_database()):
        state = "revoked" if key["revoked"] else "active"
        click.echo(f"{key['name']}\t{state}\t{key['rate_limit'] or 'default'}\t{key['created_at']}\t{key['role']}")


@keys.command("revoke")
@click.argument("name")
def keys_revoke(name: str) -> None:
    """Revoke a key; requests with it get 401 within a few seconds."""
    from api.services.auth import revoke_key

    _as_usage_error(lambda: revoke_key(_database(), name))
    click.echo(f"revoked {name}", err=True)


@click.group()
def library() -> None:
    """The prompt library stored in the service's database (what nightly runs diagnose)."""


@library.command("push")
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
@click.option("--tag", "tags", multiple=True, help="Push only cases carrying this tag (repeatable: all of them).")
def library_push(directory: Path, tags: tuple[str, ...]) -> None:
    """Store every case under DIRECTORY (found like `diagnose nightly` does) in DATABASE_URL.

    Each case is a version keyed by its content hash: new content adds a version
    and makes it current, the same content again changes nothing.
    """
    from api.db.migrate import upgrade
    from api.services.library import LibraryService
    from api.services.limits import check_case_size
    from api.services.errors import ServiceError
    from diagnose.errors import CaseError, UsageError
    from diagnose.nightly.library import discover

    settings = _settings()
    found = discover(directory, tags)
    if not found:
        raise UsageError(f"no cases under {directory}" + (f" with tags {', '.join(tags)}" if tags else ""))
    for item in found:
        try:
            check_case_size(item.case, settings.limits, None)
        except ServiceError as exc:
            raise CaseError(f"{item.relative_path}: {exc.field}", exc.detail) from None
    upgrade(settings.database_url)
    result = LibraryService(_database(), settings.limits).push([item.case for item in found])
    for case in result.cases:
        click.echo(f"{case.status:<9} {case.case_id} (version {case.version})")
    counts = ", ".join(f"{n} {status}" for status, n in sorted(result.counts.items()))
    click.echo(f"{len(found)} cases pushed: {counts}", err=True)
