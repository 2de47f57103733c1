"""The API process's own small engine: prompt-token counting and fast inputs-only diagnoses.

It loads only the embedder and tokenizers (no generator weights), so the API
stays light; one lock serialises use of those models across request threads.
"""

from __future__ import annotations

import threading

from diagnose.case import Case
from diagnose.pipeline import Diagnoser
from diagnose.prompt import build_messages
from diagnose.settings import Settings


class InlineEngine:
    def __init__(self, settings: Settings, diagnoser: Diagnoser | None = None) -> None:
        self._settings = settings
        self._diagnoser = diagnoser
        self._lock = threading.Lock()

    def _get(self) -> Diagnoser:
        if self._diagnoser is None:
            self._diagnoser = Diagnoser.from_settings(self._settings)
        return self._diagnoser

    def prompt_tokens(self, case: Case) -> int:
        with self._lock:
            return len(self._get().registry.prompt_counter(case.model).chat_ids(build_messages(case)))

    def inputs(self, case: Case) -> dict:
        with self._lock:
            return self._get().inputs(case).to_dict()

    def warm_up(self) -> None:
        """Load embedder and default tokenizer now, so the first request is not the slow one."""
        with self._lock:
            diagnoser = self._get()
            diagnoser.registry.embedder()
            diagnoser.registry.prompt_counter("default")
