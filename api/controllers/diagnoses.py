"""``/v1/diagnoses``: contract section 4."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from anyio import to_thread
from litestar import Controller, Request, Response, delete, get, post
from litestar.exceptions import ValidationException
from litestar.di import NamedDependency
from litestar.params import BodyKwarg, FromPath, QueryParameter

from api.controllers.reads import read_in_thread
from api.openapi import case_body_schema, links_from, problem_responses
from api.responses import DiagnosisView, SubmittedDiagnosis
from api.security import HTML_HEADERS
from api.services.diagnoses import DiagnosisService
from diagnose.html import render_report_html
from diagnose.report import read_report

CASE_EXAMPLE = {
    "id": "broken-bow-population",
    "question": "What is the population of Broken Bow?",
    "documents": [{"id": "d1", "text": "As of the census of 2010, there were 3,559 people."}],
}

Service = NamedDependency[DiagnosisService]

_DIAGNOSIS = "/v1/diagnoses/{diagnosis_id}"
LINKS_TO_THE_DIAGNOSIS = links_from(202, "diagnosis_id", {
    "read": ("get", _DIAGNOSIS),
    "cancel": ("delete", _DIAGNOSIS),
    "report_json": ("get", f"{_DIAGNOSIS}/report.json"),
    "report_html": ("get", f"{_DIAGNOSIS}/report.html"),
})


class DiagnosesController(Controller):
    path = "/v1/diagnoses"
    tags = ["diagnoses"]

    @post(status_code=202, summary="Submit a case for diagnosis", operation_class=LINKS_TO_THE_DIAGNOSIS,
          responses=problem_responses(400, 401, 413, 415, 422, 429, 503))
    async def create(
        self,
        request: Request,
        service: Service,
        data: Annotated[dict[str, Any], BodyKwarg(description="A case (contract section 1).",
                                                       schema_extra=case_body_schema())],
        mode: Annotated[Literal["inputs", "run"], QueryParameter(description="`inputs`: input stage only.")] = "run",
        rerun: Annotated[bool, QueryParameter(description="Ignore a stored identical request and run again.")] = False,
        repair: Annotated[bool, QueryParameter(
            description="With `mode=run`: also propose one-change repairs and verify each by re-sampling "
                        "(the report's `repairs`, contract section 6).")] = False,
    ) -> SubmittedDiagnosis:
        """Queue a diagnosis and answer ``202 {id, status, links}``.

        An identical earlier request (same case, mode, model and settings) is
        answered with its stored diagnosis unless ``rerun=true``. A small
        ``mode=inputs`` case is diagnosed inline: its answer is already ``done``
        and carries the report.
        """
        caller = request.state.caller
        if repair and mode != "run":
            raise ValidationException("repair: needs mode=run (repairs are verified by sampling)",
                                      extra=[{"key": "repair", "message": "repair: needs mode=run"}])
        stored_mode = "repair" if repair else mode
        return await to_thread.run_sync(
            lambda: service.submit(data, mode=stored_mode, rerun=rerun, api_key_id=caller.key_id, scope=caller.scope))

    @get(summary="Recent diagnoses", responses=problem_responses(400, 401, 429))
    async def list_recent(
        self,
        request: Request,
        service: Service,
        status: Annotated[Literal["queued", "running", "done", "failed", "cancelled"] | None, QueryParameter()] = None,
        case_id: Annotated[str | None, QueryParameter(max_length=128)] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    ) -> list[DiagnosisView]:
        """The newest first; each without its report (read it with ``GET /v1/diagnoses/{id}``)."""
        return await read_in_thread(request, lambda: service.list(
            status=status, case_id=case_id, limit=limit, scope=request.state.caller.scope))

    @get("/{diagnosis_id:str}", summary="A diagnosis: status, progress, report when done",
         responses=problem_responses(400, 401, 404, 429))
    async def read(self, request: Request, service: Service, diagnosis_id: FromPath[str]) -> DiagnosisView:
        return await read_in_thread(request, service.get, diagnosis_id, request.state.caller.scope)

    @delete("/{diagnosis_id:str}", status_code=202, summary="Cancel a queued or running diagnosis",
            responses=problem_responses(400, 401, 404, 409, 429))
    async def cancel(self, request: Request, service: Service, diagnosis_id: FromPath[str]) -> DiagnosisView:
        return await to_thread.run_sync(service.cancel, diagnosis_id, request.state.caller.scope)

    @get("/{diagnosis_id:str}/report.json", summary="The report JSON alone",
         responses=problem_responses(400, 401, 404, 409, 429))
    async def report_json(self, request: Request, service: Service, diagnosis_id: FromPath[str]) -> dict[str, Any]:
        """The report of contract section 3, as stored."""
        return await read_in_thread(request, service.report, diagnosis_id, request.state.caller.scope)

    @get("/{diagnosis_id:str}/report.html", media_type="text/html", summary="The report page",
         responses=problem_responses(400, 401, 404, 409, 429))
    async def report_html(self, request: Request, service: Service, diagnosis_id: FromPath[str]) -> Response[str]:
        report = await read_in_thread(request, service.report, diagnosis_id,
                                      request.state.caller.scope)
        html = render_report_html(read_report(report))
        return Response(html, media_type="text/html", headers=HTML_HEADERS)
