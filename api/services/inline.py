"""The API process's own small engine: prompt-token counting and fast inputs-only diagnoses.

It loads only the embedder and tokenizers (no generator weights), so the API
stays light; one lock serialises the inline diagnoses across request threads, and
token counting takes its own lock, so a count never waits behind an embedding.
Given the process's registry (:class:`api.app.SharedRegistry`) it shares those
models with the embedded worker instead of loading its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from diagnose.case import Case
from diagnose.models import ModelRegistry
from diagnose.pipeline import Diagnoser
from diagnose.prompt import build_messages
from diagnose.settings import Settings


class InlineEngine:
    def __init__(self, settings: Settings, diagnoser: Diagnoser | None = None, *,
                 registry: Callable[[], ModelRegistry] | None = None) -> None:
        self._settings = settings
        self._diagnoser = diagnoser
        self._registry = registry
        self._lock = threading.Lock()
        """Held by an inline diagnosis (the embedder) and the warm-up."""
        self._count_lock = threading.Lock()
        """Held while a tokenizer counts: one fast tokenizer is not used by two threads at once."""
        self._made = threading.Lock()

    def _get(self) -> Diagnoser:
        with self._made:
            if self._diagnoser is None:
                registry = self._registry() if self._registry is not None else None
                self._diagnoser = Diagnoser.from_settings(self._settings, registry=registry)
            return self._diagnoser

    def prompt_tokens(self, case: Case) -> int:
        """The assembled prompt's tokens; outside the engine lock, so it does not wait for inline
        diagnoses (the tokenizer is loaded once, under the registry's own lock)."""
        counter = self._get().registry.prompt_counter(case.model)
        messages = build_messages(case)
        with self._count_lock:
            return len(counter.chat_ids(messages))

    def inputs(self, case: Case) -> dict:
        with self._lock:
            return self._get().inputs(case).to_dict()

    def warm_up(self) -> None:
        """Load embedder and default tokenizer now, so the first request is not the slow one.

        The embedder also encodes one text (not cached): its first call sets the fast
        tokenizer's padding and truncation, which must not happen while another thread
        (the embedded worker, sharing the registry) encodes with it ("Already borrowed")."""
        with self._lock:
            diagnoser = self._get()
            diagnoser.registry.embedder().model.encode(["warm-up"], show_progress_bar=False)
            diagnoser.registry.prompt_counter("default")
