"""Reads run on threads of their own, with a deadline.

A burst of submissions waiting on a database lock (SQLite's single writer, a PostgreSQL
admission lock) holds threads of the shared pool; a read must not queue behind them. Each
read gets a thread of :data:`READ_THREADS` and answers 503 with ``Retry-After`` once
``RAG_DIAGNOSE_DB_REQUEST_DEADLINE_S`` has passed (the thread is abandoned, its statement
ends at the database's own timeouts), rather than hang.

Every read-only ``GET`` that touches the database goes through :func:`read_in_thread`: the
diagnoses, the library and the nightly runs of ``/v1``, and the pages (as :func:`read_handler`).
"""

from __future__ import annotations

import functools
from typing import Any, Awaitable, Callable, TypeVar

import anyio
from anyio import CapacityLimiter, to_thread
from litestar.connection import ASGIConnection

from api.problems import DATABASE_RETRY_AFTER
from api.services.errors import Unavailable

T = TypeVar("T")

READ_THREADS = CapacityLimiter(8)
"""Threads for reads only, apart from the shared pool the submissions use."""


async def read_in_thread(connection: ASGIConnection, read: Callable[..., T], *args: object) -> T:
    """``read(*args)`` on a read thread; 503 (``Retry-After``) past the app's
    ``read_deadline_s`` (``RAG_DIAGNOSE_DB_REQUEST_DEADLINE_S``; 0: no deadline)."""
    deadline_s: float = connection.app.state.read_deadline_s
    if deadline_s <= 0:
        return await to_thread.run_sync(read, *args, limiter=READ_THREADS)
    try:
        with anyio.fail_after(deadline_s):
            return await to_thread.run_sync(read, *args, limiter=READ_THREADS, abandon_on_cancel=True)
    except TimeoutError:
        raise Unavailable(f"the database did not answer within {deadline_s:g} s "
                          "(RAG_DIAGNOSE_DB_REQUEST_DEADLINE_S); try again shortly",
                          headers=DATABASE_RETRY_AFTER) from None


def read_handler(handler: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """A synchronous route handler, taking ``request``, run whole as a read (:func:`read_in_thread`):
    ``@get(...)`` above ``@read_handler``."""

    @functools.wraps(handler)
    async def run(*args: Any, **kwargs: Any) -> T:
        return await read_in_thread(kwargs["request"], functools.partial(handler, *args, **kwargs))

    return run
