"""View model of the library page: each current case, its verdict over the nightly runs."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from api.pages import format as fmt
from api.pages.charts import StripPoint, verdict_strip
from api.pages.diagnoses import case_filter_href, page_href
from api.pages.queries import HistoryPoint, LibraryEntry


@dataclass(frozen=True, slots=True)
class LibraryRow:
    case_id: str
    tags: list[str]
    question: str
    documents: int
    version: str
    added: str
    strip: Markup
    """Inline SVG: one cell per nightly diagnosis, oldest left."""
    runs: int
    latest_verdict: str | None
    """The verdict of the newest finished nightly diagnosis (a newer pending one shows on the strip)."""
    latest_href: str | None
    gate: str | None
    gate_href: str | None
    all_href: str


def library_rows(entries: list[LibraryEntry]) -> list[LibraryRow]:
    return [library_row(e) for e in entries]


def library_row(entry: LibraryEntry) -> LibraryRow:
    latest = next((p for p in reversed(entry.history) if p.status == "done" and p.verdict), None)
    return LibraryRow(
        case_id=entry.case_id,
        tags=entry.tags,
        question=str(entry.case.get("question") or ""),
        documents=len(entry.case.get("documents") or []),
        version=entry.content_hash[:8],
        added=fmt.when(entry.created_at),
        strip=verdict_strip(strip_points(entry.history), label=f"verdicts of {entry.case_id} over nightly runs"),
        runs=len(entry.history),
        latest_verdict=latest.verdict if latest else None,
        latest_href=page_href(latest.diagnosis_id) if latest else None,
        gate=entry.last_gate.status if entry.last_gate else None,
        gate_href=f"/nightly/{entry.last_gate.run_id}" if entry.last_gate else None,
        all_href=case_filter_href(entry.case_id),
    )


def strip_points(history: list[HistoryPoint]) -> list[StripPoint]:
    return [StripPoint(state_of(p), f"{fmt.when(p.run_created_at)} · {state_of(p)}", page_href(p.diagnosis_id))
            for p in history]


def state_of(point: HistoryPoint) -> str:
    """A finished diagnosis shows its verdict; any other its status (queued, running, failed, ...)."""
    return point.verdict if point.status == "done" and point.verdict else point.status
