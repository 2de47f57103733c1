"""One retrieved passage, and how foreign document objects become one.

Duck-typed on ``page_content`` and ``metadata`` so the engine never has to
import langchain; the LangChain-specific helpers live in ``adapters.langchain``.

A document's id is chosen to be stable from run to run, so reports of the same
retrieval compare: ``metadata["id"]``, else the object's own ``id`` unless it is
a random UUID (what FAISS and the in-memory store assign on every ingest), else
``metadata["source"]`` (numbered ``source#2``, ``source#3``... when several
chunks share it), else the UUID, else ``d<index>``.

Metadata also gives the document's ``date`` (``date``, else the newest of the usual
spellings such as ``effective_date`` or ``last_updated``; a date, a datetime or a
written date) and its ``authority`` (``authority``, else ``status``; a status that says
archived, superseded, withdrawn... reads as ``archived``). Values that do not read as
one are left out: metadata is free-form.
"""

from __future__ import annotations

import datetime
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from diagnose.errors import CaseError
from diagnose.text.dates import parse_date
from diagnose.text.standing import read_standing

__all__ = ["AUTHORITY_RANK", "Authority", "Document", "to_document", "to_documents"]

Authority = Literal["authoritative", "standard", "archived"]
#: How far a document's word counts when documents disagree (higher wins).
AUTHORITY_RANK: dict[str | None, int] = {"authoritative": 2, "standard": 1, None: 1, "archived": 0}
#: Metadata keys that date a document, after ``date`` itself (the newest given wins).
_DATE_KEYS = ("effective_date", "effective", "effective_from", "valid_from", "last_updated", "updated",
              "updated_at", "last_modified", "modified", "revised", "revision_date", "published",
              "published_date", "publication_date")


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



def to_documents(objs: Sequence[Any]) -> list[Document]:
    """Convert each of ``objs`` (see :func:`to_document`); ids taken from shared sources
    are numbered so that every chunk of one source keeps a distinct, stable id."""
    documents = [to_document(obj, i) for i, obj in enumerate(objs)]
    from_source = [not isinstance(obj, (Document, dict)) and _id_source(obj) == "source" for obj in objs]
    counts = Counter(d.id for d, derived in zip(documents, from_source) if derived)
    seen: Counter[str] = Counter()
    for i, (doc, derived) in enumerate(zip(documents, from_source)):
        if derived and counts[doc.id] > 1:
            seen[doc.id] += 1
            if seen[doc.id] > 1:
                documents[i] = msgspec.structs.replace(doc, id=f"{doc.id}#{seen[doc.id]}")
    return documents


def to_document(obj: Any, index: int) -> Document:
    """Convert ``obj`` (our Document, a mapping, or a LangChain Document) to a Document."""
    if isinstance(obj, Document):
        return obj
    if isinstance(obj, dict):
        try:
            return msgspec.convert(obj, Document)
        except msgspec.ValidationError as exc:
            raise CaseError(f"documents[{index}]", str(exc)) from None
    if hasattr(obj, "page_content"):
        metadata = dict(getattr(obj, "metadata", None) or {})
        score = metadata.get("score", metadata.get("relevance_score"))
        source = metadata.get("source")
        where = _id_source(obj)
        doc_id = {"metadata": metadata.get("id"), "own": getattr(obj, "id", None), "source": source,
                  "index": f"d{index}"}[where]
        return Document(
            id=str(doc_id),
            text=str(obj.page_content),
            score=float(score) if isinstance(score, (int, float)) else None,
            source=str(source) if source is not None else None,
            date=_metadata_date(metadata),
            authority=_metadata_authority(metadata),
        )
    raise CaseError(f"documents[{index}]", "is not a document", type(obj).__name__)


def _metadata_date(metadata: dict[str, Any]) -> datetime.date | None:
    """The document's date from its metadata (see the module docstring)."""
    if (given := parse_date(metadata.get("date"))) is not None:
        return given
    return max((d for d in (parse_date(metadata.get(k)) for k in _DATE_KEYS) if d is not None), default=None)


def _metadata_authority(metadata: dict[str, Any]) -> Authority | None:
    """The document's authority from its metadata (see the module docstring)."""
    for key in ("authority", "status"):
        value = metadata.get(key)
        if isinstance(value, str) and value.strip().lower() in ("authoritative", "standard", "archived"):
            return value.strip().lower()  # type: ignore[return-value]
        if isinstance(value, str) and read_standing(value).authority is not None:
            return "archived"
    return None


def _id_source(obj: Any) -> str:
    """Where a foreign document's id comes from: metadata, own, source or index."""
    metadata = getattr(obj, "metadata", None) or {}
    own = getattr(obj, "id", None)
    if metadata.get("id") not in (None, ""):
        return "metadata"
    if own and not _random_uuid(str(own)):
        return "own"
    if metadata.get("source") not in (None, ""):
        return "source"
    return "own" if own else "index"


def _random_uuid(text: str) -> bool:
    try:
        return uuid.UUID(text).version == 4
    except ValueError:
        return False
