"""Recover a chain's document layout (``document_format`` and ``document_separator``)
from the block it rendered, so a captured case sends the model the same bytes.

A chain writes each document through one format (``"{page_content}"``,
``"Source: {source}\\n{page_content}"``, ``"- {page_content}"`` ...) and joins
them with one separator. Given the rendered block and the documents in order,
the text before the first passage is the format's head, the text after the last
its tail, and each gap between two passages is tail + separator + head. The
head and tail may name the document (its index, id or source); they are tried
literally first, then with those values turned back into placeholders.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnose.document import Document
from diagnose.prompt import format_documents

__all__ = ["infer_layout"]


def infer_layout(block: str, documents: Sequence[Document]) -> tuple[str, str] | None:
    """``(document_format, document_separator)`` that render ``block`` exactly, or None."""
    if not documents:
        return None
    spans = _passage_spans(block, [d.text for d in documents])
    if spans is None:
        return None
    head, tail = block[: spans[0][0]], block[spans[-1][1]:]
    first, last = documents[0], documents[-1]
    for generic_head in _generalisations(head, first, 1):
        for generic_tail in _generalisations(tail, last, len(documents)):
            layout = f"{generic_head}{{text}}{generic_tail}"
            separator = _separator(block, spans, documents, layout)
            if separator is not None and format_documents(list(documents), layout, separator) == block:
                return layout, separator
    return None


def _passage_spans(block: str, texts: list[str]) -> list[tuple[int, int]] | None:
    """Where each passage sits, in order (None when one is missing)."""
    spans, at = [], 0
    for text in texts:
        start = block.find(text, at)
        if start < 0 or not text:
            return None
        spans.append((start, start + len(text)))
        at = start + len(text)
    return spans


def _generalisations(text: str, doc: Document, index: int) -> list[str]:
    """``text`` as written, then with the document's source, id and index as placeholders."""
    generic = text
    for value, slot in ((doc.source, "{source}"), (doc.id, "{id}"), (str(index), "{index}")):
        if value and value in generic:
            generic = generic.replace(value, slot)
    return [text] if generic == text else [text, generic]


def _separator(block: str, spans: list[tuple[int, int]], documents: Sequence[Document], layout: str) -> str | None:
    """The one separator every gap shares under ``layout`` (None when they differ)."""
    if len(spans) == 1:
        return "\n\n"  # never written with one document; any value renders the same block
    found: set[str] = set()
    for i in range(len(spans) - 1):
        gap = block[spans[i][1]: spans[i + 1][0]]
        before = _rendered_part(layout, documents[i], i + 1, after_text=True)
        after = _rendered_part(layout, documents[i + 1], i + 2, after_text=False)
        if not (gap.startswith(before) and gap.endswith(after)) or len(gap) < len(before) + len(after):
            return None
        found.add(gap[len(before): len(gap) - len(after)])
    return found.pop() if len(found) == 1 else None


def _rendered_part(layout: str, doc: Document, index: int, *, after_text: bool) -> str:
    """The part of ``layout`` after (or before) ``{text}``, rendered for one document."""
    head, _, tail = layout.partition("{text}")
    part = tail if after_text else head
    values = {"{index}": str(index), "{id}": doc.id, "{source}": doc.source or ""}
    for slot, value in values.items():
        part = part.replace(slot, value)
    return part
