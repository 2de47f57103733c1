"""How long work reports itself: the engine calls a :class:`Progress`; the CLI draws it
(``diagnose.console``), the service stores it on the diagnosis."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def phase(self, description: str, total: int | None = None) -> None: ...

    def update(self, completed: int) -> None: ...


class SilentProgress:
    def phase(self, description: str, total: int | None = None) -> None:
        pass

    def update(self, completed: int) -> None:
        pass
