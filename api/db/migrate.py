"""Bring a database to the current schema: Alembic for ours, procrastinate's own on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import migrations
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect, text

from api.db.session import MIGRATION_TIMEOUTS, make_engine

MIGRATION_LOCK = 0x7261_6764  # "ragd": the advisory lock key of schema changes

# ``migrations`` is installed as a package, so a non-editable install migrates too.
SCRIPTS = Path(migrations.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["url"] = url
    config.attributes["skip_logging"] = True
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Idempotent; ``serve``, ``worker`` and ``db upgrade`` all call it at start."""
    if not url.startswith("postgresql"):
        command.upgrade(alembic_config(url), revision)
        return
    # Several processes starting at once (API, workers) take turns, so no two
    # run the same migration.
    engine = make_engine(url, MIGRATION_TIMEOUTS)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            try:
                command.upgrade(alembic_config(url), revision)
                _apply_queue_schema(url)
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
    finally:
        engine.dispose()


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def _apply_queue_schema(url: str) -> None:
    """procrastinate ships its schema as SQL; it is applied once, when its tables are missing."""
    from procrastinate import SyncPsycopgConnector
    from procrastinate.schema import SchemaManager

    engine = make_engine(url, MIGRATION_TIMEOUTS)
    try:
        if inspect(engine).has_table("procrastinate_jobs"):
            return
    finally:
        engine.dispose()
    connector = SyncPsycopgConnector(conninfo=url)
    connector.open()
    try:
        SchemaManager(connector).apply_schema()
    finally:
        connector.close()
