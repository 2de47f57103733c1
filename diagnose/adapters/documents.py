"""Turn foreign document objects (LangChain ``Document`` and look-alikes) into ours.

Duck-typed on ``page_content`` and ``metadata`` so the engine never has to
import langchain; the LangChain-specific helpers live in ``adapters.langchain``.
"""

from __future__ import annotations

from typing import Any

from diagnose.document import Document
from diagnose.errors import CaseError


def to_document(obj: Any, index: int):
    """Convert ``obj`` (our Document, a mapping, or a LangChain Document) to a Document."""
    if isinstance(obj, Document):
        return obj
    if isinstance(obj, dict):
        import msgspec

        try:
            return msgspec.convert(obj, Document)
        except msgspec.ValidationError as exc:
            raise CaseError(f"documents[{index}]", str(exc)) from None
    if hasattr(obj, "page_content"):
        metadata = dict(getattr(obj, "metadata", None) or {})
        doc_id = getattr(obj, "id", None) or metadata.get("id") or f"d{index}"
        score = metadata.get("score", metadata.get("relevance_score"))
        source = metadata.get("source")
        return Document(
            id=str(doc_id),
            text=str(obj.page_content),
            score=float(score) if isinstance(score, (int, float)) else None,
            source=str(source) if source is not None else None,
        )
    raise CaseError(f"documents[{index}]", "is not a document", type(obj).__name__)
