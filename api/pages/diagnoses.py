"""View models of the index (recent diagnoses) and of one diagnosis's page."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import msgspec
from markupsafe import Markup

from api.db.models import PENDING
from api.pages import format as fmt
from api.pages.queries import DiagnosisDetail, DiagnosisSummary
from api.pages.report_body import report_body
from api.responses import DiagnosisLinks
from api.services.diagnoses import links
from diagnose.html.centers import GREY, center_colors
from diagnose.report import InputReport

REFRESH_S = 5
"""A queued or running diagnosis's page reloads itself this often (a meta refresh, no script)."""
LABEL = 40
"""Characters of a center's label next to each document (labels can be whole sentences)."""


@dataclass(frozen=True, slots=True)
class DiagnosisRow:
    id: str
    short_id: str
    href: str
    case_id: str
    case_href: str
    mode: str
    status: str
    verdict: str | None
    progress: str
    created: str


@dataclass(frozen=True, slots=True)
class ProgressView:
    phase: str
    completed: int
    total: int | None
    text: str


@dataclass(frozen=True, slots=True)
class DocumentRow:
    id: str
    center: str
    color: str | None
    """The center's color on the report's charts; None before the input stage ran."""
    relevance: str
    source: str | None
    text: str


@dataclass(frozen=True, slots=True)
class CaseView:
    question: str
    system: str | None
    documents: list[DocumentRow]


@dataclass(frozen=True, slots=True)
class DiagnosisPage:
    id: str
    case_id: str
    mode: str
    status: str
    verdict: str | None
    facts: list[fmt.KeyValue]
    links: DiagnosisLinks
    refresh_s: int | None
    """Seconds until the page reloads itself; None once the diagnosis is finished."""
    progress: ProgressView | None
    error: list[fmt.KeyValue]
    body: Markup | None
    """The engine's report page content, when there is a report."""
    case: CaseView
    previous_href: str | None
    """Compare with the previous finished diagnosis of the same case, when there is one."""


def page_href(diagnosis_id: str) -> str:
    return f"/diagnoses/{diagnosis_id}"


def case_filter_href(case_id: str) -> str:
    return "/?" + urlencode({"case_id": case_id})


def diagnosis_rows(summaries: list[DiagnosisSummary]) -> list[DiagnosisRow]:
    return [
        DiagnosisRow(
            id=s.id, short_id=fmt.short_id(s.id), href=page_href(s.id), case_id=s.case_id,
            case_href=case_filter_href(s.case_id), mode=s.mode, status=s.status, verdict=s.verdict,
            progress=_progress(s.progress).text if s.status in PENDING and s.progress else "",
            created=fmt.when(s.created_at),
        )
        for s in summaries
    ]


def diagnosis_page(detail: DiagnosisDetail, previous_id: str | None) -> DiagnosisPage:
    s = detail.summary
    pending = s.status in PENDING
    facts = [fmt.KeyValue("diagnosis", fmt.short_id(s.id)), fmt.KeyValue("mode", s.mode),
             fmt.KeyValue("created", fmt.when(s.created_at)), fmt.KeyValue("finished", fmt.when(s.finished_at))]
    inp = _input_report(detail.report)
    return DiagnosisPage(
        id=s.id, case_id=s.case_id, mode=s.mode, status=s.status, verdict=s.verdict, facts=facts,
        links=links(s.id),
        refresh_s=REFRESH_S if pending else None,
        progress=_progress(s.progress or {}) if pending else None,
        error=fmt.key_values(detail.error) if detail.error else [],
        body=report_body(detail.report) if detail.report is not None else None,
        case=case_view(detail.case, inp),
        previous_href=f"/compare/{previous_id}/{s.id}" if previous_id and detail.report is not None else None,
    )


def case_view(case: Mapping[str, Any], inp: InputReport | None) -> CaseView:
    """The submitted case's text, each document with the center it fell into (when analysed)."""
    colors = center_colors(inp) if inp else {}
    labels = {c.id: f"{c.id}: {fmt.clip(c.label, LABEL)}" for c in inp.gravity_centers} if inp else {}
    analysed = {d.id: d for d in inp.documents} if inp else {}
    rows = []
    for doc in case.get("documents") or []:
        view = analysed.get(str(doc.get("id")))
        center = view.center if view else None
        rows.append(DocumentRow(
            id=str(doc.get("id")),
            center=labels.get(center, "noise") if view else fmt.DASH,
            color=(colors.get(center, GREY) if center else GREY) if view else None,
            relevance=fmt.number(view.relevance, 2) if view else fmt.DASH,
            source=str(doc["source"]) if doc.get("source") else None,
            text=str(doc.get("text") or ""),
        ))
    return CaseView(question=str(case.get("question") or ""), system=case.get("system"), documents=rows)


def _input_report(report: Mapping[str, Any] | None) -> InputReport | None:
    if not report or "input" not in report:
        return None
    return msgspec.convert(report["input"], InputReport)


def _progress(progress: Mapping[str, Any]) -> ProgressView:
    phase = str(progress.get("phase") or "waiting for a worker")
    completed = int(progress.get("completed") or 0)
    total = progress.get("total")
    total = int(total) if isinstance(total, (int, float)) and total > 0 else None
    text = f"{phase} · {completed}/{total}" if total else phase
    return ProgressView(phase, min(completed, total) if total else completed, total, text)
