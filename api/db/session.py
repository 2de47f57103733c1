"""One SQLAlchemy engine per process; sessions are short and explicit.

Every wait on the database is bounded (:class:`api.settings.DatabaseTimeouts`): connecting,
each statement (on the server, and on the client for a server that stopped answering:
:mod:`api.db.watchdog`), a free pooled connection, a dead TCP peer and, on SQLite,
another writer's lock. Past any of them SQLAlchemy raises ``OperationalError``, which the API answers 503
with ``Retry-After`` (:mod:`api.problems`)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from api.db.watchdog import RoundTripWatchdog
from api.settings import DatabaseTimeouts


def make_engine(url: str, timeouts: DatabaseTimeouts | None = None) -> Engine:
    """``pool_pre_ping`` lets the service ride out a database restart without manual steps."""
    limits = timeouts or DatabaseTimeouts()
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": limits.db_busy_timeout_s})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20,
                           pool_timeout=limits.db_pool_timeout_s, connect_args=postgres_connect_args(limits))
    if limits.db_statement_timeout_s > 0:  # migrations wait as long as they need
        RoundTripWatchdog(limits.db_statement_timeout_s + 1.0).watch(engine)
    return engine


MIGRATION_TIMEOUTS = DatabaseTimeouts(db_statement_timeout_s=0, db_idle_transaction_timeout_s=0,
                                      db_busy_timeout_s=60.0)
"""Schema changes may wait for another process's migration and rewrite whole tables."""


def postgres_connect_args(limits: DatabaseTimeouts) -> dict:
    """libpq's connection parameters for :class:`DatabaseTimeouts`."""
    args: dict = {"connect_timeout": max(2, int(limits.db_connect_timeout_s)),
                  "keepalives": 1, "keepalives_idle": limits.db_tcp_timeout_s,
                  "keepalives_interval": 1, "keepalives_count": 3,
                  "tcp_user_timeout": int(limits.db_tcp_timeout_s * 1000)}
    options = server_options(limits)
    if options:
        args["options"] = options
    return args


def server_options(limits: DatabaseTimeouts, statements: bool = True) -> str:
    """libpq's ``options``: the server-side timeouts of :class:`DatabaseTimeouts` (0: none);
    ``statements=False`` leaves out ``statement_timeout`` (the queue library's own connections)."""
    settings = {"idle_in_transaction_session_timeout": limits.db_idle_transaction_timeout_s}
    if statements:
        settings["statement_timeout"] = limits.db_statement_timeout_s
    return " ".join(f"-c {name}={int(seconds * 1000)}" for name, seconds in settings.items() if seconds > 0)


def _sqlite_pragmas(connection, _record) -> None:
    # WAL lets the API read while the embedded worker writes; foreign keys are off by default.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    def __init__(self, url: str, timeouts: DatabaseTimeouts | None = None) -> None:
        self.url = url
        self.engine = make_engine(url, timeouts)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self, immediate: bool = False) -> Iterator[Session]:
        """A session that commits on success and rolls back on any error.

        ``immediate``: on SQLite the transaction starts with ``BEGIN IMMEDIATE``, taking the
        write lock before its first read, so that a read-check-write (claim, cancel, record)
        cannot interleave with another writer's. Python's sqlite3 would otherwise run the
        reads outside any transaction and begin one only at the first write: a cancel read
        ``queued`` while a claim wrote ``running``, and one of the two writes was lost.
        On PostgreSQL such steps lock their row (``SELECT ... FOR UPDATE``) instead.
        """
        with self._sessions() as session, session.begin():
            if immediate and self.engine.dialect.name == "sqlite":
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
