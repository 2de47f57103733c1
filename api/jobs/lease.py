"""Keeping a running diagnosis's lease (:mod:`api.db.leases`) through database outages.

:class:`LeaseKeeper` runs beside the engine in a thread of its own. Each ``every_s`` it
renews the lease (and lets the queue say the worker is alive in the same transaction:
``keepalive``); while the database is unreachable it tries again with a growing delay
(from :data:`FIRST_RETRY_S` up to ``every_s``) and resumes as soon as one renewal succeeds.

The engine calls :meth:`LeaseKeeper.check` at each progress report. While the lease is
surely held (the last renewal began less than ``lease_s`` ago, and the database counts the
lease from after that moment) it returns at once. Past that, another worker may have
claimed the diagnosis, so the engine waits there, computing nothing, until a renewal
succeeds (it continues: nobody took it) or says the lease is gone (:class:`LeaseLost`:
it stops). Two workers therefore never compute the same diagnosis at once, and a long
outage costs the work done so far nothing when nobody took the diagnosis over.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from sqlalchemy.orm import Session

from api.db.leases import renew
from api.db.session import Database

log = logging.getLogger("rag_diagnose.worker")

FIRST_RETRY_S = 0.2
"""The first wait after a failed renewal; it doubles up to the renewal period."""


class LeaseLost(Exception):
    """Another worker holds the diagnosis now (or it ended): this attempt stops and records nothing."""


class LeaseKeeper:
    def __init__(self, db: Database, diagnosis_id: str, token: str, lease_s: float, every_s: float,
                 keepalive: Callable[[Session], object] | None = None, errors: tuple[type[Exception], ...] = ()) -> None:
        if not 0 < every_s < lease_s:
            raise ValueError(f"lease renewal every {every_s:g} s must be shorter than the lease of {lease_s:g} s")
        self.db, self.diagnosis_id, self.token = db, diagnosis_id, token
        self.lease_s, self.every_s, self.keepalive, self.errors = lease_s, every_s, keepalive, errors
        self.held_until = time.monotonic() + lease_s
        """``time.monotonic()`` until which the lease is surely held (the claim just made it)."""
        self.lost = False
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{diagnosis_id}", daemon=True)

    def __enter__(self) -> "LeaseKeeper":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.every_s + 5)

    def check(self, stopping: threading.Event | None = None) -> None:
        """Return while the lease is held; wait while that is unsure; raise :class:`LeaseLost` once it is not."""
        with self._changed:
            while not self.lost and time.monotonic() >= self.held_until:
                if stopping is not None and stopping.is_set():
                    return  # the caller's own shutdown check comes next
                self._changed.wait(0.5)
            if self.lost:
                raise LeaseLost(f"diagnosis {self.diagnosis_id}: another worker holds its lease now")

    def _run(self) -> None:
        delay, failing = self.every_s, False
        while not self._stop.wait(delay):
            started = time.monotonic()
            try:
                with self.db.session() as session:
                    held = renew(session, self.diagnosis_id, self.token, self.lease_s)
                    if held and self.keepalive is not None:
                        self.keepalive(session)
            except self.errors as exc:
                delay = min(delay * 2, self.every_s) if failing else FIRST_RETRY_S
                failing = True
                log.warning("lease of %s not renewed (%s); trying again in %.1f s",
                            self.diagnosis_id, type(exc).__name__, delay)
                continue
            delay, failing = self.every_s, False
            with self._changed:
                if held:
                    self.held_until = started + self.lease_s
                else:
                    self.lost = True
                self._changed.notify_all()
            if not held:
                log.warning("diagnosis %s: lease lost; this attempt stops", self.diagnosis_id)
                return
