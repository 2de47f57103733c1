"""Which gravity center is current: documents' dates and authority, center by center.

The input stage (and the repairs) call these with plain lists indexed by document::

    standings = center_standings(centers, dates, authorities, disagree)

``centers[c]`` lists the indices of center ``c``'s documents; ``dates[i]`` and
``authorities[i]`` are document ``i``'s (``document_standing`` gives both, from the
document's fields or else its text); ``disagree`` says which centers disagree, as a
function of two center indices or a set of index pairs (either order).

A document is outdated by a disagreeing center when it is archived and that center is
not all archived, or when it is dated before that center's newest date and does not
outrank it (``AUTHORITY_RANK``: an authoritative document is not outdated by a newer
standard one), or when it is undated, says it replaces nothing and that center holds a
document that says it replaces another (``replacing``: "this policy replaces version 3",
"Section 12.2 is hereby deleted and replaced"). A center is ``"superseded"`` when all its
documents are outdated by one disagreeing center; it is ``"current"`` when it stands above
every center it disagrees with (best authority, then newest date, then a replacing
document) and is not superseded; else None. Without marks,
or when they do not separate the centers, every standing is None.
``outdated_documents`` names, for a (current, superseded) pair of centers, the documents
to drop: the ones the report pairs as ``kind: "outdated"``.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection, Sequence
from typing import Literal

from typing import TYPE_CHECKING

from diagnose.document import AUTHORITY_RANK, Document
from diagnose.text.dates import parse_date
from diagnose.text.standing import TextStanding, read_standing

if TYPE_CHECKING:
    from diagnose.inputs.reading import DocumentReading
    from diagnose.report import InputReport

__all__ = ["DocumentStanding", "Standing", "center_standings", "document_standing", "mark_standing",
           "outdated_documents", "read_documents"]

Standing = Literal["current", "superseded"]
Disagree = Callable[[int, int], bool] | Collection[tuple[int, int]]
_UNDATED = datetime.date.min


@dataclasses.dataclass(frozen=True)
class DocumentStanding:
    """A document's date and authority, from its own fields when given, else from its text."""

    date: datetime.date | None
    authority: str | None
    date_source: Literal["field", "text"] | None
    """Where ``date`` came from (None: no date)."""
    text: TextStanding
    """What the text says (successor, predecessor, evidence), even where a field won."""


def document_standing(doc: Document, reading: TextStanding | None = None) -> DocumentStanding:
    """``doc``'s date and authority: its ``date``/``authority`` fields win, the text
    (``reading``, read from ``doc.text`` when not given) fills what they leave out."""
    reading = read_standing(doc.text) if reading is None else reading
    date, source = (doc.date, "field") if doc.date is not None else (reading.date, "text")
    return DocumentStanding(date=date, authority=doc.authority or reading.authority,
                            date_source=source if date is not None else None, text=reading)


def center_standings(centers: Sequence[Sequence[int]], dates: Sequence[datetime.date | None],
                     authorities: Sequence[str | None], disagree: Disagree,
                     replacing: Sequence[bool] = ()) -> list[Standing | None]:
    """Each center's standing (see the module docstring), in the order of ``centers``."""
    apart = _disagree(disagree)
    replacing = replacing or [False] * len(dates)
    rivals = [[d for d in range(len(centers)) if d != c and apart(c, d)] for c in range(len(centers))]
    superseded = [bool(docs) and any(set(outdated_documents(centers[d], docs, dates, authorities, replacing))
                                     >= set(docs) for d in rivals[c])
                  for c, docs in enumerate(centers)]
    rank = [(*_stands(docs, dates, authorities), any(replacing[i] for i in docs)) for docs in centers]
    current = [not superseded[c] and bool(rivals[c]) and all(rank[c] > rank[d] for d in rivals[c])
               for c in range(len(centers))]
    return ["superseded" if s else "current" if k else None for s, k in zip(superseded, current)]


def outdated_documents(current: Sequence[int], older: Sequence[int], dates: Sequence[datetime.date | None],
                       authorities: Sequence[str | None], replacing: Sequence[bool] = ()) -> list[int]:
    """The documents of ``older`` (not also in ``current``) that ``current`` outdates:
    archived while ``current`` is not all archived, dated before ``current``'s newest date
    without outranking it, or undated and unmarked while ``current`` holds a document that
    says it replaces another (``replacing``, by document; none when not given)."""
    if not current:
        return []
    all_archived = all(authorities[i] == "archived" for i in current)
    best, newest = _stands(current, dates, authorities)
    replaced = bool(replacing) and any(replacing[i] for i in current)
    return [i for i in older if i not in current and (
        (authorities[i] == "archived" and not all_archived)
        or (dates[i] is not None and dates[i] < newest and AUTHORITY_RANK[authorities[i]] <= best)
        or (replaced and dates[i] is None and authorities[i] is None and not replacing[i]))]


def _stands(docs: Sequence[int], dates: Sequence[datetime.date | None],
            authorities: Sequence[str | None]) -> tuple[int, datetime.date]:
    """(best authority rank, newest date) over ``docs``."""
    return (max((AUTHORITY_RANK[authorities[i]] for i in docs), default=AUTHORITY_RANK[None]),
            max((dates[i] for i in docs if dates[i] is not None), default=_UNDATED))


def _disagree(disagree: Disagree) -> Callable[[int, int], bool]:
    if callable(disagree):
        return disagree
    pairs = {frozenset(p) for p in disagree}
    return lambda a, b: frozenset((a, b)) in pairs


def read_documents(documents: Sequence[Document], readings: "Sequence[DocumentReading] | None") -> list[DocumentStanding]:
    """Each document's standing: its fields, else its text (:func:`read_standing`), else what a
    reader read of it (the date it gives for itself, and whether it says it is superseded)."""
    out = []
    for i, doc in enumerate(documents):
        reading = read_standing(doc.text)
        if readings is not None:
            r = readings[i]
            reading = dataclasses.replace(
                reading,
                date=reading.date or (parse_date(r.date) if r.date else None),
                authority=reading.authority or ("archived" if r.superseded else None))
        out.append(document_standing(doc, reading))
    return out


def mark_standing(report: "InputReport", standings: Sequence[DocumentStanding], members: Sequence[Sequence[int]],
                  disagree: Callable[[int, int], bool]) -> None:
    """Set each center's ``standing``, the documents' date, authority and date source, and
    ``kind: "outdated"`` on the evidence pairs between a current and a superseded center."""
    dates = [s.date for s in standings]
    authorities = [s.authority for s in standings]
    replacing = [s.text.replaces is not None for s in standings]
    index = {d: k for k, c in enumerate(report.gravity_centers) for d in c.documents}
    # Two centers disagree when their answers contradict, or when the evidence quoted between
    # them is not about two different things (an archived page whose value the text did not
    # type still competes with the current one).
    quoted = {frozenset((index[p.a], index[p.b])) for p in report.conflict.pairs
              if p.kind != "entity_ambiguity" and p.a in index and p.b in index}
    centers = center_standings(members, dates, authorities,
                               lambda x, y: frozenset((x, y)) in quoted
                               or any(disagree(i, j) for i in members[x] for j in members[y]), replacing)
    for center, standing in zip(report.gravity_centers, centers):
        center.standing = standing
    for view, s in zip(report.documents, standings):
        view.date = s.date.isoformat() if s.date else None
        view.date_source = s.date_source
        view.authority = s.authority
    center_of = {d: c.standing for c in report.gravity_centers for d in c.documents}
    for pair in report.conflict.pairs:
        if {center_of.get(pair.a), center_of.get(pair.b)} == {"current", "superseded"}:
            pair.kind = "outdated"
