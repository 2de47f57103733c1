"""Admission: what may be queued, counted in diagnoses and in cost, overall and per key.

A diagnosis's cost is the most tokens it may generate (:func:`job_cost`): its rows
(seeds x temperatures, plus the determinism check's row) x ``max_new_tokens``, the
verified repairs' budget with ``repair=true``, and the read tier's documents. Work is
admitted when

1. it could finish within ``RAG_DIAGNOSE_JOB_TIMEOUT_S`` at the measured rate (tokens per
   second of the diagnoses done lately; ``RAG_DIAGNOSE_TOKENS_PER_S`` until one is
   measured), else 413 naming ``sampling.max_new_tokens``: it would only fail at the limit;
2. the key's queued and running work stays within its share (``RAG_DIAGNOSE_KEY_SHARE`` of
   ``RAG_DIAGNOSE_CAPACITY`` diagnoses and of ``RAG_DIAGNOSE_COST_CAPACITY`` tokens), else
   429 with ``Retry-After``: one key's flood leaves the rest of the queue to the others;
3. the whole queue stays within both capacities, else 503 with ``Retry-After``.

Each refusal names its limit. Counting the pending work and adding to it are one step:
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
from api.db.store import lock_admission, measured_rate, pending_load
from api.services.errors import QueueFull, RateLimited, TooLarge
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


class Admission:
    """The queue's capacities, shared by everything that queues diagnoses (single diagnoses,
    nightly runs)."""

    def __init__(self, settings: QueueSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()

    @contextmanager
    def session(self, db: Database) -> Iterator[Session]:
        """A transaction holding the right to count and add pending work until it commits."""
        with self._lock, db.session() as session:
            lock_admission(session)
            yield session

    @property
    def retry_after(self) -> dict[str, str]:
        return {"Retry-After": str(self.settings.retry_after_s)}

    def admit(self, session: Session, wanted: int = 1, what: str | None = None, owner: int | None = None,
              cost: int = 0, largest: int = 0) -> None:
        """Raise unless ``wanted`` more diagnoses costing ``cost`` tokens together (the largest
        ``largest``) fit: see the module docstring. ``owner`` is the key they belong to (None:
        a keyless service or the schedule, which have no share). Call inside :meth:`session`,
        before adding them."""
        settings = self.settings
        prefix = f"{what} does not fit: " if what else ""
        self._check_time(session, largest or cost)
        share = settings.key_share
        if owner is not None and share < 1.0:
            mine, mine_cost = pending_load(session, owner)
            slots, tokens = max(1, math.floor(settings.capacity * share)), math.floor(settings.cost_capacity * share)
            if wanted > slots or cost > tokens:
                raise TooLarge(f"{prefix}{wanted} diagnoses costing {cost:,} tokens are more than one key's share "
                               f"({slots} diagnoses, {tokens:,} tokens: RAG_DIAGNOSE_KEY_SHARE {share:g}); "
                               "send less at a time", "sampling.max_new_tokens" if wanted == 1 else "tags")
            if mine + wanted > slots or mine_cost + cost > tokens:
                raise RateLimited(
                    f"{prefix}this key has {mine} diagnoses costing {mine_cost:,} tokens queued or running; its "
                    f"share is {slots} diagnoses and {tokens:,} tokens (RAG_DIAGNOSE_KEY_SHARE {share:g} of "
                    "RAG_DIAGNOSE_CAPACITY and RAG_DIAGNOSE_COST_CAPACITY); wait for Retry-After",
                    headers=self.retry_after)
        waiting, waiting_cost = pending_load(session)
        capacity = settings.capacity
        if waiting + wanted > capacity:
            raise QueueFull(f"{prefix}{waiting} diagnoses are queued or running (capacity {capacity}"
                            + (f", {max(capacity - waiting, 0)} free" if what else "")
                            + ": RAG_DIAGNOSE_CAPACITY); try again later", headers=self.retry_after)
        if waiting_cost + cost > settings.cost_capacity:
            raise QueueFull(f"{prefix}the queued and running diagnoses cost {waiting_cost:,} tokens and this "
                            f"{cost:,} more (capacity {settings.cost_capacity:,}: RAG_DIAGNOSE_COST_CAPACITY); "
                            "try again later", headers=self.retry_after)

    def _check_time(self, session: Session, cost: int) -> None:
        """413 for a diagnosis that could not finish within the job time limit at the measured rate."""
        limit = self.settings.job_timeout_s
        if limit <= 0 or cost <= 0:
            return
        rate = measured_rate(session) or self.settings.tokens_per_s
        if rate > 0 and cost / rate > limit:
            raise TooLarge(f"it may generate {cost:,} tokens: {cost / rate:,.0f} s at the measured {rate:,.1f} "
                           f"tokens/s, past the job time limit of {limit:g} s (RAG_DIAGNOSE_JOB_TIMEOUT_S); "
                           "ask for fewer seeds, temperatures or max_new_tokens", "sampling.max_new_tokens")
