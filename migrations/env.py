"""Alembic environment: the URL comes from the caller (``diagnose db upgrade``) or DATABASE_URL."""

from __future__ import annotations

import os
from logging.config import fileConfig

from alembic import context

from api.db.models import Base
from api.db.session import MIGRATION_TIMEOUTS, make_engine
from diagnose.settings import DatabaseSettings

config = context.config
if config.config_file_name and not config.attributes.get("skip_logging"):
    fileConfig(config.config_file_name)

url = config.attributes.get("url") or os.environ.get("DATABASE_URL") or DatabaseSettings.url


def run_offline() -> None:
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = make_engine(url, MIGRATION_TIMEOUTS)
    with engine.connect() as connection:
        # Batch mode rewrites ALTERs as table copies on SQLite, which cannot alter columns.
        context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
