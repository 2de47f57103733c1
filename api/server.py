"""uvicorn's HTTP/1.1 protocol with time limits on reading a request's head and its body.

uvicorn closes an idle keep-alive connection, but a client that opens a connection and
sends its headers a byte at a time (slowloris) holds it as long as it likes: 1,000 such
connections stayed open 75 s. :func:`header_timeout_protocol` makes a protocol class that
closes a connection whose request line and headers are not complete within the limit,
on a fresh connection and after each response of a kept-alive one. A body trickled in a byte
at a time (with a valid key or without) would hold a request thread's worth of memory and
a connection the same way: the whole body must be in within its own limit, else the
connection is closed.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def header_timeout_protocol(timeout_s: float, body_timeout_s: float = 0.0) -> type[H11Protocol]:
    """``uvicorn.run(http=...)``: H11 with a ``timeout_s`` limit on each request head and a
    ``body_timeout_s`` one (0: none) on its body, counted from the end of the head."""

    class HeaderTimeoutProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_timer()

        def handle_events(self) -> None:
            super().handle_events()
            state = self.conn.their_state
            if state is not h11.IDLE and self._head_timer is not None:  # the head arrived (or the end)
                self._cancel_head_timer()
                if state is h11.SEND_BODY and body_timeout_s > 0:
                    self._body_timer = self.loop.call_later(body_timeout_s, self._body_timed_out)
            if state is not h11.SEND_BODY:
                self._cancel_body_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm_head_timer()  # the next request's head has the same limit

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head_timer()
            self._cancel_body_timer()
            super().connection_lost(exc)

        def _arm_head_timer(self) -> None:
            self._cancel_head_timer()
            self._head_timer = self.loop.call_later(timeout_s, self._head_timed_out)

        def _cancel_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _cancel_body_timer(self) -> None:
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _body_timed_out(self) -> None:
            self._body_timer = None
            if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
                self.transport.close()

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol
