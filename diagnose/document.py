"""One retrieved passage: the shared type of cases and the document adapters."""

from __future__ import annotations

import msgspec

__all__ = ["Document"]


class Document(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One retrieved passage, in retrieval order."""

    id: str
    """Unique within the case."""
    text: str
    """The passage as it is put into the prompt."""
    score: float | None = None
    """Retrieval score, if the retriever gave one."""
    source: str | None = None
    """Where the passage came from (URL, file, index key)."""
