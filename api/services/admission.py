"""Admission: what may be queued, counted in diagnoses and in cost, overall and per key.

A diagnosis's cost is the most tokens it may generate (:func:`job_cost`): its rows
(seeds x temperatures, plus the determinism check's row) x ``max_new_tokens``, the
verified repairs' budget with ``repair=true``, and the read tier's documents. Work is
admitted when

1. it could finish within ``RAG_DIAGNOSE_JOB_TIMEOUT_S`` at the measured rate (tokens per
   second of the diagnoses done lately; until one is measured the deliberately slow
   ``RAG_DIAGNOSE_TOKENS_PER_S``, never an unmeasured fast one), else 413 naming
   ``sampling.max_new_tokens`` and the limit: it would only fail at the limit;
2. the key's queued and running work stays within its share (``RAG_DIAGNOSE_KEY_SHARE`` of
   ``RAG_DIAGNOSE_CAPACITY`` diagnoses and of ``RAG_DIAGNOSE_COST_CAPACITY`` tokens), else
   429 with ``Retry-After``: one key's flood leaves the rest of the queue to the others;
3. the whole queue stays within both capacities, else 503 with ``Retry-After``.

Each refusal names its limit (the problem's ``limit`` member). ``Retry-After`` is computed:
the tokens that must finish before the work fits, over the rate (for a key's share, times the
keys with work pending, since keys take turns), at most :data:`MAX_RETRY_AFTER_S`. Counting the pending work and adding to it are one step:
threads of this process take turns on a lock, API processes on PostgreSQL on
:func:`~api.db.store.lock_admission` (without that, 50 simultaneous submissions all
counted the same free slots and 34 were accepted into a queue of capacity 20).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy.orm import Session

from api.db.session import Database
from api.db.store import active_keys, lock_admission, measured_rate, pending_load
from api.services.errors import QueueFull, RateLimited, TooLarge, Unavailable
from api.settings import QueueSettings
from diagnose.case import MAX_NEW_TOKENS, Case
from diagnose.repair import BUDGET_FACTOR

READ_TOKENS_PER_DOCUMENT = 24
"""What the read tier generates per document at most (:class:`diagnose.inputs.reading.DocumentReader`)."""


def job_cost(case: Case, mode: str) -> int:
    """The most tokens a diagnosis of ``case`` in ``mode`` generates (at least 1).

    ``inputs`` reads no document (static tier): one token per document stands for its
    embedding. ``run`` samples seeds x temperatures rows plus the determinism check's one,
    each up to ``max_new_tokens``, after the read tier's documents; ``repair`` adds its
    budget (:data:`diagnose.repair.BUDGET_FACTOR` x the rows), each candidate row up to
    twice ``max_new_tokens`` (a candidate may raise it)."""
    documents = len(case.documents)
    if mode == "inputs":
        return max(1, documents)
    spec = case.sampling
    rows = spec.seeds * len(spec.temperatures)
    cost = (rows + 1) * spec.max_new_tokens + documents * READ_TOKENS_PER_DOCUMENT
    if mode == "repair":
        cost += BUDGET_FACTOR * rows * min(MAX_NEW_TOKENS, 2 * spec.max_new_tokens)
    return cost


ADMISSION_WAIT_S = 5.0
"""How long a submission waits for the others of this process to count and add theirs."""
MAX_RETRY_AFTER_S = 3600
"""``Retry-After`` never says more than an hour: the estimate is only as good as the rate."""


class Admission:
    """The queue's capacities, shared by everything that queues diagnoses (single diagnoses,
    nightly runs)."""

    def __init__(self, settings: QueueSettings) -> None:
        if settings.tokens_per_s <= 0:
            raise ValueError(f"RAG_DIAGNOSE_TOKENS_PER_S: must be above 0 (got {settings.tokens_per_s:g}); "
                             "it is the rate assumed until one is measured")
        self.settings = settings
        self._lock = threading.Lock()

    @contextmanager
    def session(self, db: Database) -> Iterator[Session]:
        """A transaction holding the right to count and add pending work until it commits; 503
        with ``Retry-After`` when other submissions hold it past :data:`ADMISSION_WAIT_S`."""
        if not self._lock.acquire(timeout=ADMISSION_WAIT_S):
            raise Unavailable(f"other submissions held the queue for {ADMISSION_WAIT_S:g} s; try again shortly",
                              headers=self.retry_after_for(1, 1))
        try:
            with db.session() as session:
                lock_admission(session)
                yield session
        finally:
            self._lock.release()

    @property
    def retry_after(self) -> dict[str, str]:
        """``Retry-After`` when the job queue could not take a job (:attr:`QueueSettings.retry_after_s`)."""
        return {"Retry-After": str(self.settings.retry_after_s)}

    @property
    def no_worker_retry_after(self) -> dict[str, str]:
        """``Retry-After`` while no worker is alive (``/healthz``): the stalled-after window.

        Not the work-ahead estimate: it divides the work ahead by the rate at which the workers
        drain the queue, and with no worker nothing drains, so it would promise a wait nobody
        knows (1 s for an empty queue: a health checker polling every second for what only a
        new worker process can change). The window is the one figure the code can justify: it
        is its own time scale for worker liveness (a PostgreSQL worker is counted alive that
        long after its last heartbeat; a silent worker's leases expire and its jobs go back on
        the queue after it), so a checker that asks again after it gets a verdict formed over
        a whole new window. A worker that starts sooner ends the 503 sooner; the embedded
        worker thread does not come back by itself, and there the window is only a pace for
        asking again. Bounded like the estimate, 1 s to an hour."""
        return {"Retry-After": str(_bounded(self.settings.stalled_after_s))}

    def queue_retry_after(self, session: Session) -> dict[str, str]:
        """``Retry-After`` of a full queue (``/healthz``): what :meth:`admit` tells a submission of one
        diagnosis of the pending ones' average cost, the work ahead over the rate (measured, else
        the assumed :attr:`QueueSettings.tokens_per_s`)."""
        rate, _ = self.rate(session)
        _, _, ahead = self._queue_ahead(session, 1, 0)
        return self.retry_after_for(ahead, rate)

    def rate(self, session: Session) -> tuple[float, str]:
        """Tokens per second and where the figure comes from: ``measured`` from finished diagnoses,
        else ``assumed`` (:attr:`QueueSettings.tokens_per_s`, never trusted to be fast)."""
        measured = measured_rate(session)
        return (measured, "measured") if measured > 0 else (self.settings.tokens_per_s, "assumed")

    @staticmethod
    def retry_after_for(tokens_ahead: float, rate: float) -> dict[str, str]:
        """``Retry-After``: the seconds the work ahead takes at ``rate``, 1 to :data:`MAX_RETRY_AFTER_S`."""
        return {"Retry-After": str(_bounded(tokens_ahead / rate))}

    def _queue_ahead(self, session: Session, wanted: int, cost: int) -> tuple[int, int, float]:
        """The queued and running diagnoses, their cost, and the tokens of them that must finish
        before ``wanted`` more costing ``cost`` fit both capacities."""
        waiting, waiting_cost = pending_load(session)
        settings = self.settings
        ahead = _tokens_to_free(waiting, waiting_cost, wanted, cost, settings.capacity, settings.cost_capacity)
        return waiting, waiting_cost, ahead

    def admit(self, session: Session, wanted: int = 1, what: str | None = None, owner: int | None = None,
              cost: int = 0, largest: int = 0) -> None:
        """Raise unless ``wanted`` more diagnoses costing ``cost`` tokens together (the largest
        ``largest``) fit: see the module docstring. ``owner`` is the key they belong to (None:
        a keyless service or the schedule, which have no share). Call inside :meth:`session`,
        before adding them."""
        settings = self.settings
        prefix = f"{what} does not fit: " if what else ""
        rate, _ = self._check_time(session, largest or cost)
        share = settings.key_share
        if owner is not None and share < 1.0:
            mine, mine_cost = pending_load(session, owner)
            slots, tokens = max(1, math.floor(settings.capacity * share)), math.floor(settings.cost_capacity * share)
            if wanted > slots or cost > tokens:
                raise TooLarge(f"{prefix}{wanted} diagnoses costing {cost:,} tokens are more than one key's share "
                               f"({slots} diagnoses, {tokens:,} tokens: RAG_DIAGNOSE_KEY_SHARE {share:g}); "
                               "send less at a time", "sampling.max_new_tokens" if wanted == 1 else "tags",
                               facts={"limit": "RAG_DIAGNOSE_KEY_SHARE"})
            if mine + wanted > slots or mine_cost + cost > tokens:
                # Keys take turns (:func:`api.db.leases.claim_next`): this key's work drains at its
                # turn's share of the rate.
                ahead = _tokens_to_free(mine, mine_cost, wanted, cost, slots, tokens) * active_keys(session)
                raise RateLimited(
                    f"{prefix}this key has {mine} diagnoses costing {mine_cost:,} tokens queued or running; its "
                    f"share is {slots} diagnoses and {tokens:,} tokens (RAG_DIAGNOSE_KEY_SHARE {share:g} of "
                    "RAG_DIAGNOSE_CAPACITY and RAG_DIAGNOSE_COST_CAPACITY); wait for Retry-After",
                    headers=self.retry_after_for(ahead, rate), facts={"limit": "RAG_DIAGNOSE_KEY_SHARE"})
        waiting, waiting_cost, ahead = self._queue_ahead(session, wanted, cost)
        capacity = settings.capacity
        if waiting + wanted > capacity:
            raise QueueFull(f"{prefix}{waiting} diagnoses are queued or running (capacity {capacity}"
                            + (f", {max(capacity - waiting, 0)} free" if what else "")
                            + ": RAG_DIAGNOSE_CAPACITY); try again later",
                            headers=self.retry_after_for(ahead, rate), facts={"limit": "RAG_DIAGNOSE_CAPACITY"})
        if waiting_cost + cost > settings.cost_capacity:
            raise QueueFull(f"{prefix}the queued and running diagnoses cost {waiting_cost:,} tokens and this "
                            f"{cost:,} more (capacity {settings.cost_capacity:,}: RAG_DIAGNOSE_COST_CAPACITY); "
                            "try again later", headers=self.retry_after_for(ahead, rate),
                            facts={"limit": "RAG_DIAGNOSE_COST_CAPACITY"})

    def _check_time(self, session: Session, cost: int) -> tuple[float, str]:
        """413 for a diagnosis that could not finish within the job time limit at the measured rate,
        or, before one is measured, at the deliberately slow assumed one. Returns the rate."""
        rate, source = self.rate(session)
        limit = self.settings.job_timeout_s
        if limit > 0 and cost > 0 and cost / rate > limit:
            raise TooLarge(f"it may generate {cost:,} tokens: {cost / rate:,.0f} s at the {source} {rate:,.1f} "
                           f"tokens/s, past the job time limit of {limit:g} s (RAG_DIAGNOSE_JOB_TIMEOUT_S); "
                           "ask for fewer seeds, temperatures or max_new_tokens", "sampling.max_new_tokens",
                           facts={"limit": "RAG_DIAGNOSE_JOB_TIMEOUT_S", "limit_s": limit,
                                  "estimated_s": round(cost / rate, 1), "tokens_per_s": round(rate, 2),
                                  "rate": source})
        return rate, source


def _bounded(seconds: float) -> int:
    """Whole seconds for ``Retry-After``, 1 to :data:`MAX_RETRY_AFTER_S`."""
    return min(MAX_RETRY_AFTER_S, max(1, math.ceil(seconds)))


def _tokens_to_free(count: int, count_cost: int, wanted: int, cost: int, slots: int, tokens: int) -> float:
    """Tokens of the pending work (``count`` diagnoses costing ``count_cost``) that must finish before
    ``wanted`` more costing ``cost`` fit in ``slots`` diagnoses and ``tokens``: the excess cost, or
    the excess diagnoses at their average cost, whichever is more."""
    excess_cost = count_cost + cost - tokens
    excess_count = (count + wanted - slots) * (count_cost / count if count else 0)
    return max(excess_cost, excess_count, 1.0)
