"""The SQLite ack-queue transport: a job is acknowledged only after it ran."""

from __future__ import annotations

import time

from api.jobs.embedded import EmbeddedQueue


class RecordingRunner:
    def __init__(self, fail_first: int = 0) -> None:
        import threading

        self.seen: list[str] = []
        self.fail_first = fail_first
        self.stopping = threading.Event()

    def execute(self, diagnosis_id: str) -> None:
        self.seen.append(diagnosis_id)
        if len(self.seen) <= self.fail_first:
            raise ConnectionError("database restarting")


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_unacknowledged_job_is_delivered_again_after_reopening(tmp_path):
    path = tmp_path / "queue"
    queue = EmbeddedQueue(path, runner=None)
    queue.enqueue("a")
    queue._queue.get(raw=True)  # taken by a worker that then died: never acked
    del queue
    runner = RecordingRunner()
    reopened = EmbeddedQueue(path, runner)
    reopened.start()
    try:
        _wait_for(lambda: runner.seen == ["a"])
    finally:
        reopened.stop()


def test_acknowledged_job_is_not_delivered_again(tmp_path):
    path = tmp_path / "queue"
    runner = RecordingRunner()
    queue = EmbeddedQueue(path, runner)
    queue.start()
    queue.enqueue("a")
    _wait_for(lambda: runner.seen == ["a"])
    queue.stop()
    again = RecordingRunner()
    reopened = EmbeddedQueue(path, again)
    reopened.start()
    reopened.enqueue("b")  # delivered after anything left over from before, so "a" would come first
    _wait_for(lambda: again.seen)
    reopened.stop()
    assert again.seen == ["b"]


def test_a_job_that_hit_a_database_error_is_retried(tmp_path):
    runner = RecordingRunner(fail_first=1)
    queue = EmbeddedQueue(tmp_path / "queue", runner)
    queue.start()
    queue.enqueue("a")
    try:
        _wait_for(lambda: runner.seen == ["a", "a"])
    finally:
        queue.stop()
    assert queue.workers_alive() == 0
