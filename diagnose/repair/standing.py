"""Which gravity center the case itself says is current: document authority and dates.

A case may mark documents ``authority: authoritative|standard|archived`` and give
their ``date``. The center that :func:`diagnose.inputs.standing.center_standings`
calls ``"current"`` (every gravity center competing with every other) is the one a
repair keeps, and a candidate that removes it (or keeps another center alone) "drops
the authoritative side": it is tried last and says so. Without marks, or when they do
not separate the centers, nothing is preferred and the repairs follow the samples (the
dominant center) as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from diagnose.document import Document
from diagnose.inputs.standing import center_standings
from diagnose.report import GravityCenter

__all__ = ["drop_note", "preferred_center"]


def preferred_center(centers: Sequence[GravityCenter], documents: Sequence[Document]) -> GravityCenter | None:
    """The center the case's authority and date marks make current, or None."""
    if len(centers) < 2 or not any(d.authority is not None or d.date is not None for d in documents):
        return None
    index = {d.id: i for i, d in enumerate(documents)}
    members = [[index[d] for d in c.documents if d in index] for c in centers]
    standings = center_standings(members, [d.date for d in documents], [d.authority for d in documents],
                                 lambda a, b: True)
    return next((c for c, s in zip(centers, standings) if s == "current"), None)


def drop_note(center: GravityCenter, documents: Sequence[Document]) -> dict[str, Any]:
    """What a candidate that drops ``center`` loses, for its ``change``."""
    by_id = {d.id: d for d in documents}
    marks = {d: {k: str(v) for k, v in (("authority", by_id[d].authority), ("date", by_id[d].date)) if v}
             for d in center.documents if d in by_id}
    return {"center": center.id, "label": center.label, "documents": {d: m for d, m in marks.items() if m}}
