"""One retrieved passage: the shared type of cases and the document adapters."""

from __future__ import annotations

import datetime
from typing import Literal

import msgspec

__all__ = ["AUTHORITY_RANK", "Authority", "Document"]

Authority = Literal["authoritative", "standard", "archived"]
#: How far a document's word counts when documents disagree (higher wins).
AUTHORITY_RANK: dict[str | None, int] = {"authoritative": 2, "standard": 1, None: 1, "archived": 0}


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
    date: datetime.date | None = None
    """When the passage was written or last valid (ISO 8601, e.g. 2025-03-01): between two
    disagreeing centers the newer one is taken as current."""
    authority: Authority | None = None
    """How far the passage can be trusted: ``authoritative`` (the source of record),
    ``standard`` (the default) or ``archived`` (kept for reference, superseded)."""
