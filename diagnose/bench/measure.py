"""What one benchmarked system did: its time split, samples, tokens and peak memory."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import psutil


@contextmanager
def peak_rss() -> Iterator[list[float]]:
    """Yields a one-element list that holds the peak RSS in MB once the block ends.

    The process's resident set size is sampled every 5 ms while the block runs.
    """
    process = psutil.Process()
    peak = [process.memory_info().rss]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], process.memory_info().rss)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    result = [0.0]
    try:
        yield result
    finally:
        done.set()
        thread.join()
        result[0] = max(peak[0], process.memory_info().rss) / 2**20


@dataclass(frozen=True)
class Phase:
    """One system's run of the job."""

    name: str
    seconds: float
    samples: int
    tokens: int
    """Tokens generated over all samples (an end-of-sequence token not counted)."""
    peak_rss_mb: float
    prefill_seconds: float | None = None
    decode_seconds: float | None = None

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.seconds
