"""The embedded transport: persist-queue's SQLite ack-queue and one worker thread.

A job is acknowledged only after its diagnosis is recorded; if the process dies
first, the queue puts the job back when it is opened again (``auto_resume``).
One process owns the file, so this transport serves a single machine; use
PostgreSQL for several workers.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable, Iterable

import persistqueue
from persistqueue.sqlackqueue import AckStatus

from api.jobs.runner import DiagnosisRunner, Interrupted

log = logging.getLogger("rag_diagnose.worker")

_NOT_DONE = frozenset(int(s) for s in (AckStatus.inited, AckStatus.ready, AckStatus.unack))
"""Statuses of an item still to run. ``AckStatus`` holds strings ('0', '1', '2') but the
table's column is INTEGER, so ``queue()`` hands back ints: compare as ints."""


class EmbeddedQueue:
    kind = "sqlite"

    def __init__(self, path: Path, runner: DiagnosisRunner | None,
                 pending: Callable[[], Iterable[str]] | None = None,
                 release_leases: Callable[[], object] | None = None) -> None:
        """``pending`` lists the ids the database holds as queued or running; ``release_leases``
        ends the leases of diagnoses left running (:meth:`DiagnosisRunner.forget_leases`): this
        process is the file's only worker, so its predecessor's leases are void."""
        path.mkdir(parents=True, exist_ok=True)
        self._queue = persistqueue.SQLiteAckQueue(str(path), auto_resume=True, multithreading=True)
        self._runner = runner
        self._pending = pending
        self._release_leases = release_leases
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def enqueue(self, diagnosis_id: str) -> None:
        self._queue.put(diagnosis_id)

    def start(self) -> None:
        if self._runner is None or self._thread is not None:
            return
        if self._release_leases is not None:
            self._release_leases()
        self._requeue_orphans()
        self._thread = threading.Thread(target=self._work, name="diagnosis-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._runner is not None:
            self._runner.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _requeue_orphans(self) -> None:
        """Queue again what the database says is pending but the queue does not hold:
        a process that died between storing a diagnosis and queueing it leaves one."""
        if self._pending is None:
            return
        self._queue.clear_acked_data()  # keeps the latest 1000: the file does not grow forever
        waiting = self.waiting()
        orphans = [i for i in self._pending() if i not in waiting]
        for diagnosis_id in orphans:
            log.warning("diagnosis %s was stored but never queued; queueing it now", diagnosis_id)
            self._queue.put(diagnosis_id)

    def waiting(self) -> set[str]:
        """Ids the queue holds and has not finished (waiting, or taken and not yet acknowledged)."""
        return {item["data"] for item in self._queue.queue() if int(item["status"]) in _NOT_DONE}

    @property
    def expects_workers(self) -> bool:
        """Whether this process should run a worker thread (not with ``serve --no-worker``)."""
        return self._runner is not None

    def workers_alive(self) -> int:
        return int(self._thread is not None and self._thread.is_alive())

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._queue.get(block=True, timeout=0.5, raw=True)
            except persistqueue.Empty:
                continue
            except Exception:  # noqa: BLE001 - e.g. the queue file briefly locked: the thread must live on
                log.exception("the job queue could not be read; trying again")
                self._stop.wait(1.0)
                continue
            try:
                self._runner.execute(item["data"])
            except Interrupted:
                self._queue.nack(item)  # shutting down: it runs after the restart
                return
            except Exception:  # noqa: BLE001 - the database may be briefly gone; try again later
                log.exception("job %s could not run; it goes back on the queue", item["data"])
                self._queue.nack(item)
                self._stop.wait(1.0)
            else:
                self._queue.ack(item)
