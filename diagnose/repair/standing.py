"""Which gravity center the case itself says is current: document authority and dates.

A case may mark documents ``authority: authoritative|standard|archived`` and give
their ``date``. A center stands as high as its best document: authority first,
then the newest date. When the case's marks put one center above every other,
that center is the one a repair keeps, and a candidate that removes it (or keeps
another center alone) "drops the authoritative side": it is tried last and says so.
Without marks, or when they do not separate the centers, nothing is preferred and
the repairs follow the samples (the dominant center) as before.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from diagnose.document import AUTHORITY_RANK, Document
from diagnose.report import GravityCenter

__all__ = ["Standing", "preferred_center", "standing_of"]

Standing = tuple[int, datetime.date]
_UNDATED = datetime.date.min


def standing_of(center: GravityCenter, documents: dict[str, Document]) -> Standing:
    """(best authority rank, newest date) over the center's documents."""
    docs = [documents[d] for d in center.documents if d in documents]
    return (max((AUTHORITY_RANK[d.authority] for d in docs), default=AUTHORITY_RANK[None]),
            max((d.date for d in docs if d.date is not None), default=_UNDATED))


def preferred_center(centers: Sequence[GravityCenter], documents: Sequence[Document]) -> GravityCenter | None:
    """The center the case's authority and date marks put above every other, or None."""
    if len(centers) < 2 or not any(d.authority is not None or d.date is not None for d in documents):
        return None
    by_id = {d.id: d for d in documents}
    ranked = sorted(centers, key=lambda c: standing_of(c, by_id), reverse=True)
    first, second = (standing_of(c, by_id) for c in ranked[:2])
    return ranked[0] if first > second else None


def drop_note(center: GravityCenter, documents: Sequence[Document]) -> dict[str, Any]:
    """What a candidate that drops ``center`` loses, for its ``change``."""
    by_id = {d.id: d for d in documents}
    marks = {d: {k: str(v) for k, v in (("authority", by_id[d].authority), ("date", by_id[d].date)) if v}
             for d in center.documents if d in by_id}
    return {"center": center.id, "label": center.label, "documents": {d: m for d, m in marks.items() if m}}
