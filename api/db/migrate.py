"""Bring a database to the current schema: Alembic for ours, procrastinate's own on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import inspect

from api.db.session import make_engine

ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["skip_logging"] = True
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)
    if url.startswith("postgresql"):
        _apply_queue_schema(url)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def _apply_queue_schema(url: str) -> None:
    """procrastinate ships its schema as SQL; it is applied once, when its tables are missing."""
    from procrastinate import SyncPsycopgConnector
    from procrastinate.schema import SchemaManager

    engine = make_engine(url)
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
