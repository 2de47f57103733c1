"""uvicorn's HTTP/1.1 protocol with time limits on reading a request's head and its body.

uvicorn closes an idle keep-alive connection, but a client that opens a connection and
sends its headers a byte at a time (slowloris) holds it as long as it likes: 1,000 such
connections stayed open 75 s. :func:`header_timeout_protocol` makes a protocol class that
closes a connection whose request line and headers are not complete within the limit,
on a fresh connection and after each response of a kept-alive one. A body trickled in a byte
at a time (with a valid key or without) would hold a request thread's worth of memory and
a connection the same way: the whole body must be in within its own limit, else the client
gets ``408 Request Timeout`` (problem+json naming ``body``, ``Connection: close``) and the
connection is closed.

The 408 is written here, by the protocol, not by the application: the ASGI application
cannot hear of the timeout (ASGI has no event for it; the only one, ``http.disconnect``,
makes uvicorn drop whatever the application sends afterwards), but until the connection is
closed the protocol may still answer: h11 lets a server respond before the request's body is
complete, as uvicorn itself does with its 400 for a malformed request. It does so only when
the application has not begun an answer of its own; the application's request is then ended
as if the client had gone (it receives ``http.disconnect``, and an answer it still makes is
dropped).
"""

from __future__ import annotations

import asyncio
import json

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
                self._answer_body_timeout()
                self.transport.close()

        def _answer_body_timeout(self) -> None:
            """408 problem+json naming ``body``, unless an answer has begun (see the module docstring)."""
            cycle = self.cycle
            if self.conn.our_state is not h11.SEND_RESPONSE or (cycle is not None and cycle.response_started):
                return
            if cycle is not None:  # the application's request ends as if the client had gone
                cycle.disconnected = True
                cycle.message_event.set()
            body = json.dumps({
                "type": "about:blank", "title": "request timeout", "status": 408, "field": "body",
                "detail": f"body: not all in within {body_timeout_s:g} s of the request's headers "
                          "(RAG_DIAGNOSE_BODY_TIMEOUT_S)"}).encode()
            headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close"), (b"cache-control", b"no-store")]
            for event in (h11.Response(status_code=408, headers=headers, reason=b"Request Timeout"),
                          h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol
