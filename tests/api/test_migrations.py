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


def _constraint_names(url: str) -> dict[str, set[str | None]]:
    engine = make_engine(url)
    try:
        inspector = inspect(engine)
        return {table: {inspector.get_pk_constraint(table).get("name")}
                | {uq["name"] for uq in inspector.get_unique_constraints(table)}
                | {fk["name"] for fk in inspector.get_foreign_keys(table)}
                for table in sorted(OUR_TABLES)}
    finally:
        engine.dispose()


def _rows(url: str) -> dict[str, int]:
    from sqlalchemy import text

    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return {table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                    for table in ("api_keys", "sessions", "diagnoses", "findings")}
    finally:
        engine.dispose()


def _fill_at_0005(url: str) -> None:
    """A key, its session, a diagnosis and a finding that cascades from it: rows a table copy must keep."""
    from sqlalchemy import text

    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO api_keys (id, name, key_hash, created_at, role) VALUES (7, 'k', 'h', CURRENT_TIMESTAMP, 'user')"))
        connection.execute(text(
            "INSERT INTO sessions (token_hash, api_key_id, created_at, expires_at) "
            "VALUES ('t', 7, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
        connection.execute(text(
            "INSERT INTO diagnoses (id, status, mode, case_id, \"case\", request_key, seed_offset, cost, attempts, "
            "cancel_requested, api_key_id, created_at) VALUES ('d1', 'done', 'run', 'c', '{}', 'r', 0, 0, 0, false, 7, "
            "CURRENT_TIMESTAMP)"))
        connection.execute(text(
            "INSERT INTO findings (diagnosis_id, position, stage, rule, severity, evidence, advice) "
            "VALUES ('d1', 0, 'input', 'input.x', 'info', '{}', '')"))
    engine.dispose()


def test_every_constraint_gets_its_conventional_name_and_no_row_is_lost(database_url):
    """0006 names what 0001 and 0005 left to the database (PostgreSQL's own names, SQLite's none);
    downgrading gives PostgreSQL its names back, and upgrading again is clean."""
    downgrade(database_url, "base")
    upgrade(database_url, "0005")
    _fill_at_0005(database_url)
    before = _constraint_names(database_url)
    upgrade(database_url)
    after = _constraint_names(database_url)
    assert _rows(database_url) == {"api_keys": 1, "sessions": 1, "diagnoses": 1, "findings": 1}
    for table, names in after.items():
        assert all(name and name.split("_")[0] in {"pk", "uq", "fk"} for name in names), (table, names)
    assert "pk_diagnoses" in after["diagnoses"] and "fk_findings_diagnosis_id_diagnoses" in after["findings"]
    downgrade(database_url, "0005")
    assert _rows(database_url) == {"api_keys": 1, "sessions": 1, "diagnoses": 1, "findings": 1}
    if database_url.startswith("postgresql"):
        assert _constraint_names(database_url) == before
        assert "diagnoses_pkey" in before["diagnoses"]
    upgrade(database_url)
    assert _constraint_names(database_url) == after
