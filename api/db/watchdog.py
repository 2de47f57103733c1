"""A client-side bound on every PostgreSQL round trip, for a server that stopped answering.

``statement_timeout`` is enforced by the server, and TCP timeouts only fire when the peer
stops acknowledging: a server that is frozen (stopped, swapped out, behind a stuck proxy)
acknowledges and never answers, and each request would wait on its connection forever.
:class:`RoundTripWatchdog` notes when each statement and each pool ping starts; one thread
shuts down the socket of any that runs past its deadline. psycopg then raises
``OperationalError`` (a disconnect: SQLAlchemy drops that connection from the pool), which
the API answers 503, and the next request opens a fresh connection.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

from sqlalchemy import Engine, event

log = logging.getLogger("rag_diagnose.db")

PING_TIMEOUT_S = 1.5
"""A pool's liveness ping (``SELECT 1``) past this is a dead connection."""


class RoundTripWatchdog:
    def __init__(self, statement_s: float, ping_s: float = PING_TIMEOUT_S, every_s: float = 0.2) -> None:
        self.statement_s, self.ping_s, self.every_s = statement_s, ping_s, every_s
        self._running: dict[int, tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, engine: Engine) -> None:
        """Bound ``engine``'s statements (``statement_s``; 0: only pings) and pool pings."""
        if self.statement_s > 0:
            event.listen(engine, "before_cursor_execute", self._before)
            event.listen(engine, "after_cursor_execute", self._after)
            event.listen(engine, "handle_error", self._error)
        ping = engine.dialect.do_ping

        def do_ping(dbapi_connection: Any) -> bool:
            self._start(dbapi_connection, self.ping_s)
            try:
                return ping(dbapi_connection)
            finally:
                self._stop(dbapi_connection)

        engine.dialect.do_ping = do_ping  # type: ignore[method-assign]

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self._start(conn.connection.dbapi_connection, self.statement_s)

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self._stop(conn.connection.dbapi_connection)

    def _error(self, context) -> None:
        try:
            self._stop(context.connection.connection.dbapi_connection)
        except Exception:  # noqa: BLE001 - no connection, or one already invalidated: nothing to stop
            pass

    def _start(self, dbapi_connection: Any, limit_s: float) -> None:
        with self._lock:
            self._running[id(dbapi_connection)] = (time.monotonic() + limit_s, dbapi_connection)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="db-watchdog", daemon=True)
                self._thread.start()

    def _stop(self, dbapi_connection: Any) -> None:
        with self._lock:
            self._running.pop(id(dbapi_connection), None)

    def _watch(self) -> None:
        while True:
            time.sleep(self.every_s)
            now = time.monotonic()
            with self._lock:
                late = [key for key, (deadline, _) in self._running.items() if deadline < now]
                connections = [self._running.pop(key)[1] for key in late]
            for connection in connections:
                _cut(connection)


def _cut(dbapi_connection: Any) -> None:
    """Shut the connection's socket down, waking the thread that waits on it."""
    try:
        fd = dbapi_connection.pgconn.socket
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as sock:  # a duplicate of fd
            sock.shutdown(socket.SHUT_RDWR)
        log.warning("a database round trip ran past its limit; its connection was cut")
    except Exception as exc:  # noqa: BLE001 - already closed, or not a socket: nothing to cut
        log.debug("could not cut a late database connection: %s", exc)
