"""A deterministic backend with a tiny vocabulary, for fast tests without a model.

Like httpx's mock transport: pass a function ``(history) -> logits`` and the
fake plays the model. Words are tokens; token 0 is the end of sequence.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

LogitsFn = Callable[[list[int]], list[float]]


class _FakeSession:
    def __init__(self, fn: LogitsFn, histories: list[list[int]]) -> None:
        self._fn = fn
        self._histories = histories
        self.forward_rows: list[int] = []
        """Rows in each forward pass (tests check finished rows stop costing work)."""

    def advance(self, tokens: torch.Tensor) -> torch.Tensor:
        for history, token in zip(self._histories, tokens.tolist()):
            history.append(int(token))
        self.forward_rows.append(len(self._histories))
        return torch.tensor([self._fn(h) for h in self._histories], dtype=torch.float32)

    def keep(self, rows: torch.Tensor) -> None:
        self._histories = [self._histories[i] for i in rows.tolist()]


class FakeBackend:
    """Backend protocol over a Python function; the vocabulary is ``vocab``."""

    name = "fake"
    in_process = True

    def __init__(self, vocab: Sequence[str], fn: LogitsFn, context_window: int = 2048) -> None:
        self.vocab = list(vocab)
        self._fn = fn
        self.identity = {"id": "fake", "sha256": "0" * 64, "device": "cpu", "dtype": "float32"}
        self.eos_token_ids = frozenset({0})
        self.context_window = context_window
        self.prefills = 0
        self.sessions: list[_FakeSession] = []

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        text = " ".join(m["content"] for m in messages)
        return self.encode(text)

    def encode(self, text: str) -> list[int]:
        index = {word: i for i, word in enumerate(self.vocab)}
        return [index.get(word, 1) for word in text.split()]

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.vocab[i] for i in ids if i != 0)

    def text(self, ids: Sequence[int]) -> str:
        """The prompt as the fake sees it (the prompt counter's ``text``): every token, ``<eos>`` too."""
        return " ".join(self.vocab[i] for i in ids)

    def start(self, prompt_ids: Sequence[int], rows: int) -> tuple[_FakeSession, torch.Tensor]:
        self.prefills += 1
        histories = [list(prompt_ids) for _ in range(rows)]
        session = _FakeSession(self._fn, histories)
        self.sessions.append(session)
        logits = torch.tensor([self._fn(list(prompt_ids))], dtype=torch.float32)
        return session, logits.expand(rows, -1)
