"""One SQLAlchemy engine per process; sessions are short and explicit."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str) -> Engine:
    """``pool_pre_ping`` lets the service ride out a database restart without manual steps."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_pragmas(connection, _record) -> None:
    # WAL lets the API read while the embedded worker writes; foreign keys are off by default.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
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
