"""What one benchmarked system did: its time split, samples, tokens and peak memory."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import psutil


@contextmanager
def peak_rss(device: str = "cpu") -> Iterator[list[float]]:
    """Yields a list that holds the peak RSS in MB once the block ends, then on CUDA the
    peak of memory allocated on the device.

    The process's resident set size is sampled every 5 ms while the block runs.
    """
    import torch

    on_cuda = device.startswith("cuda")
    if on_cuda:
        torch.cuda.reset_peak_memory_stats(device)
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
        if on_cuda:
            result.append(torch.cuda.max_memory_allocated(device) / 2**20)


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
    peak_device_mb: float | None = None
    """Peak memory allocated on a CUDA device (None on CPU)."""
    generated: tuple[tuple[int, ...], ...] = ()
    """Each sample's new token ids, where the system gives them (padding removed)."""

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.seconds


def device_peak(peak: list[float]) -> float | None:
    """The device peak that :func:`peak_rss` recorded, if it ran on CUDA."""
    return peak[1] if len(peak) > 1 else None
