"""A server's chat completion turned into a :class:`Trace` the metrics can read.

A remote server samples on its own side and returns token strings with
logprobs, not vocabulary ids or full distributions. :class:`TokenTable` numbers
each distinct token (its ``bytes`` when the server sends them, else its string)
in the order first seen, so the token-level metrics work unchanged;
:func:`read_choice` builds the trace of one answer. See
:mod:`diagnose.decode.remote` for what each field of the trace holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from diagnose.errors import BackendError
from diagnose.decode.engine import Row, Trace
from diagnose.decode.steps import StepRecord

__all__ = ["NO_TOKEN", "RemoteTrace", "TokenTable", "first_choice", "logprob", "read_choice", "snippet"]

NO_TOKEN = -1
"""``top2_tokens`` entry when the server returned fewer than two alternatives."""
#: How much of an error body goes into a BackendError message.
BODY_LIMIT = 500


@dataclass
class RemoteTrace(Trace):
    """A :class:`Trace` from a server: ``tokens`` are local ids of ``token_texts``."""

    token_texts: list[str] = field(default_factory=list)
    """The server's token strings, in order (one per ``tokens`` entry)."""
    text: str = ""
    """The server's ``message.content``."""
    server_finish_reason: str | None = None
    """``finish_reason`` exactly as the server sent it."""
    request: dict[str, Any] = field(default_factory=dict)
    """The JSON body that was sent (without credentials)."""


class TokenTable:
    """Local token ids: one per distinct token, stable for the table's whole life."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, Any], int] = {}
        self._pieces: list[tuple[str, bytes]] = []

    def id_of(self, text: str, raw: Any) -> int:
        """The id of the token with string ``text`` and (optional) ``bytes`` list ``raw``."""
        if isinstance(raw, list) and all(isinstance(b, int) for b in raw):
            key: tuple[str, Any] = ("b", bytes(raw))
            piece = bytes(raw)
        else:
            key = ("s", text)
            piece = text.encode("utf-8")
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._pieces)
            self._pieces.append((text, piece))
        return found

    def text(self, token: int) -> str:
        """The server's string for a local token id."""
        return self._pieces[token][0]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of local token ids (their bytes joined, decoded as UTF-8)."""
        data = b"".join(self._pieces[i][1] for i in ids if 0 <= i < len(self._pieces))
        return data.decode("utf-8", errors="replace")


def first_choice(url: str, data: dict[str, Any]) -> dict[str, Any]:
    """``choices[0]`` of a chat completion, or a :class:`BackendError` naming ``url``."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError(f"POST {url} answered without choices: {snippet(repr(data))}")
    return choices[0]


def read_choice(choice: dict[str, Any], row: Row, body: dict[str, Any], tokens: TokenTable) -> RemoteTrace:
    """The trace of one row's answer; ``tokens`` numbers its token strings."""
    server_reason = choice.get("finish_reason")
    trace = RemoteTrace(
        row,
        finish_reason="length" if server_reason == "length" else "stop",
        text=(choice.get("message") or {}).get("content") or "",
        server_finish_reason=server_reason,
        request=dict(body),
    )
    for entry in (choice.get("logprobs") or {}).get("content") or []:
        token_text = str(entry.get("token", ""))
        token = tokens.id_of(token_text, entry.get("bytes"))
        alternatives = sorted(
            (alt for alt in entry.get("top_logprobs") or [] if isinstance(alt, dict)),
            key=lambda alt: -logprob(alt.get("logprob")),
        )[:2]
        top_ids = [tokens.id_of(str(a.get("token", "")), a.get("bytes")) for a in alternatives]
        top_probs = [math.exp(logprob(a.get("logprob"))) for a in alternatives]
        while len(top_ids) < 2:
            top_ids.append(NO_TOKEN)
            top_probs.append(0.0)
        trace.tokens.append(token)
        trace.token_texts.append(token_text)
        trace.steps.append(
            StepRecord(
                token=token,
                raw_logprob=logprob(entry.get("logprob")),
                entropy=float("nan"),
                top2_tokens=(top_ids[0], top_ids[1]),
                top2_probs=(top_probs[0], top_probs[1]),
            )
        )
    return trace


def logprob(value: Any) -> float:
    """A logprob as float; ``None`` or junk is -inf (the server gave no probability)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("-inf")


def snippet(text: str) -> str:
    """``text`` stripped and cut to :data:`BODY_LIMIT` characters, for error messages."""
    text = text.strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= BODY_LIMIT else text[: BODY_LIMIT - 3] + "..."
