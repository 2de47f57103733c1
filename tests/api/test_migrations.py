"""Alembic migrations: up and down on SQLite and PostgreSQL, and in step with the models."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from api.db.migrate import downgrade, upgrade
from api.db.models import Base
from api.db.session import make_engine

OUR_TABLES = {"api_keys", "fingerprints", "diagnoses", "findings", "library_cases", "nightly_runs", "nightly_items",
              "sessions"}


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(database_url):
    upgrade(database_url)
    assert OUR_TABLES <= _tables(database_url)
    downgrade(database_url, "base")
    assert not OUR_TABLES & _tables(database_url)
    upgrade(database_url)
    assert OUR_TABLES <= _tables(database_url)


def test_migrations_match_the_models(database_url):
    """Autogenerate finds nothing to do: every model change came with a migration."""
    upgrade(database_url)
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diff = [d for d in compare_metadata(context, Base.metadata) if not _is_queue_table(d)]
    finally:
        engine.dispose()
    assert diff == []


def _is_queue_table(change) -> bool:
    """procrastinate's own tables live beside ours on PostgreSQL; they are not our models."""
    if isinstance(change, tuple) and change and change[0] == "remove_table":
        return change[1].name.startswith("procrastinate_")
    if isinstance(change, tuple) and change and change[0] in ("remove_index", "remove_constraint"):
        return getattr(change[1], "table", None) is not None and change[1].table.name.startswith("procrastinate_")
    return False


def test_queue_schema_is_installed_on_postgresql_only(database_url):
    upgrade(database_url)
    has_queue = "procrastinate_jobs" in _tables(database_url)
    assert has_queue == database_url.startswith("postgresql")


@pytest.mark.parametrize("revision", ["head"])
def test_upgrade_is_idempotent(database_url, revision):
    upgrade(database_url, revision)
    upgrade(database_url, revision)
    assert OUR_TABLES <= _tables(database_url)


def test_processes_starting_together_migrate_one_at_a_time(postgres_url):
    """API and workers all migrate at start; on an empty database they must not collide."""
    import subprocess
    import sys

    import psycopg

    fresh = postgres_url + "_race"
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{fresh.rsplit("/", 1)[1]}"')
    try:
        code = f"from api.db.migrate import upgrade; upgrade({fresh!r})"
        processes = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)]
        failures = [p.stderr.read().decode()[-500:] for p in processes if p.wait() != 0]
        assert failures == []
        assert OUR_TABLES <= _tables(fresh)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{fresh.rsplit("/", 1)[1]}" WITH (FORCE)')
