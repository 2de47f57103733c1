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

# The models' metadata only when writing a new revision: given while migrating, Alembic would lend
# its naming convention to every op.create_table of the old revisions, and they must keep making
# exactly what they made when they were written (0006 names those constraints).
autogenerating = bool(getattr(config.cmd_opts, "autogenerate", False))
target_metadata = Base.metadata if autogenerating else None


def run_offline() -> None:
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = make_engine(url, MIGRATION_TIMEOUTS)
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            # Batch mode copies a table and drops the old one; with foreign keys enforced that drop
            # would cascade into (or be refused by) the rows that refer to it. Outside a transaction
            # here (pysqlite opens one only for DML), so the pragma takes effect; the connection is not reused.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()  # ends SQLAlchemy's autobegun transaction, so Alembic's own commits
        # Batch mode rewrites ALTERs as table copies on SQLite, which cannot alter columns.
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
