"""A TCP proxy of the test's own between a process and PostgreSQL, for database faults.

The machine's PostgreSQL is shared (CI runs on it): no test may stop it. A test points the
process under test at :attr:`DatabaseProxy.port` instead and makes the faults here:
:attr:`DatabaseProxy.frozen` stops passing bytes (a server that accepts and never answers);
:meth:`DatabaseProxy.cut` closes every connection and refuses new ones (an outage, a
restart) until :meth:`DatabaseProxy.restore`.
"""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

__all__ = ["DatabaseProxy"]


class DatabaseProxy:
    def __init__(self, url: str) -> None:
        target = urlsplit(url)
        self.target = (target.hostname or "127.0.0.1", target.port or 5432)
        self.frozen = threading.Event()
        self._down = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.url = url.replace(target.netloc, f"{target.username}@127.0.0.1:{self.port}")
        """``url`` through this proxy."""
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Close every connection through the proxy; new ones are closed at once until :meth:`restore`."""
        self._down.set()
        with self._lock:
            sockets, self._open = list(self._open), set()
        for s in sockets:
            _close(s)

    def restore(self) -> None:
        self._down.clear()

    def close(self) -> None:
        self.cut()
        _close(self.listener)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self._down.is_set():
                _close(client)
                continue
            try:
                server = socket.create_connection(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open |= {client, server}
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                while self.frozen.is_set():
                    time.sleep(0.05)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                _close(s)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
