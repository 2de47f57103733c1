"""``/v1/nightly-runs``: regression runs over the stored library, fanned out over the workers."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from anyio import to_thread
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, JSONBody, QueryParameter

from api.controllers.reads import read_in_thread
from api.openapi import links_from, problem_responses
from api.responses import NightlyRunView
from api.services.diagnoses import DiagnosisService
from api.services.nightly import NightlyService


class NightlyRunRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The body of ``POST /v1/nightly-runs``; every field is optional, as is the body."""

    tags: Annotated[list[str], msgspec.Meta(
        description="Run the current cases carrying every one of these tags (none: all of them).")] = []
    baseline: Annotated[str | None, msgspec.Meta(
        description="The run to compare with; default: the latest done run with the same tags.")] = None
    fail_on: Annotated[Literal["warn", "fail", "never"], msgspec.Meta(
        description="The case status at which the run's `gate` is `fail`.")] = "fail"
    seed_offset: Annotated[int | None, msgspec.Meta(
        description="Extension: fixed sample seeds, in [0, 2^31 - 2^16]; default: derived from the run id "
                    "(fresh samples each run).")] = None
    library: Annotated[Literal["own", "shared"] | None, msgspec.Meta(
        description="Which library to run: `own` (the calling key's pushes) or `shared` (the cases "
                    "`diagnose library push` stored, which belong to no key; admin keys only). Default: "
                    "`own`, and for an admin key whose own library holds no matching case, `shared`.")] = None


def provide_nightly(service: NamedDependency[DiagnosisService]) -> NightlyService:
    # One admission for runs and single diagnoses: the same capacity, counted in the same step.
    return NightlyService(service.db, service.queue, settings=service.settings, admission=service.admission)


Nightly = NamedDependency[NightlyService]

_RUN = "/v1/nightly-runs/{run_id}"
LINKS_TO_THE_RUN = links_from(202, "run_id", {
    "read": ("get", _RUN),
    "junit": ("get", f"{_RUN}/junit.xml"),
    "summary_md": ("get", f"{_RUN}/summary.md"),
})


class NightlyRunsController(Controller):
    path = "/v1/nightly-runs"
    tags = ["nightly"]
    dependencies = {"nightly": Provide(provide_nightly, sync_to_thread=False)}

    @post(status_code=202, summary="Start a nightly run over the stored library", operation_class=LINKS_TO_THE_RUN,
          responses=problem_responses(400, 401, 415, 422, 429, 503))
    async def start(self, request: Request, nightly: Nightly,
                    data: JSONBody[NightlyRunRequest | None] = None) -> NightlyRunView:
        """Queue one diagnosis per current library case and answer ``202 {id, status, links}``.

        The run is admitted like single diagnoses, under the same capacity: when its
        cases do not fit the free capacity it is refused whole (503 with
        ``Retry-After``) and nothing is stored; a run larger than the whole capacity is
        a 422 naming ``tags``.

        When the last case finishes, the run is compared with its baseline: ``summary``
        holds per-case comparisons with their evidence, ``counts`` and ``gate``
        (``fail`` when a case reaches ``fail_on``, ``warn`` when a case regressed below it).
        """
        body = data or NightlyRunRequest()
        caller = request.state.caller
        return await to_thread.run_sync(lambda: nightly.start_run(
            body.tags, body.baseline, body.fail_on, body.seed_offset, owner=caller.key_id, library=body.library,
            admin=caller.role == "admin"))

    @get(summary="Recent nightly runs with progress and counts", responses=problem_responses(400, 401, 429))
    async def list_recent(
        self,
        request: Request,
        nightly: Nightly,
        status: Annotated[Literal["running", "done", "failed"] | None, QueryParameter()] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    ) -> list[NightlyRunView]:
        scope = request.state.caller.scope
        return await read_in_thread(request, lambda: nightly.list(status=status, limit=limit, scope=scope))

    @get("/{run_id:str}", summary="A nightly run: progress (finished/total), summary when done",
         responses=problem_responses(400, 401, 404, 429))
    async def read(self, request: Request, nightly: Nightly, run_id: FromPath[str]) -> NightlyRunView:
        scope = request.state.caller.scope
        return await read_in_thread(request, lambda: nightly.get(run_id, scope=scope))

    @get("/{run_id:str}/junit.xml", media_type="application/xml", summary="JUnit XML, one test case per case",
         responses=problem_responses(400, 401, 404, 409, 429))
    async def junit(self, request: Request, nightly: Nightly, run_id: FromPath[str]) -> Response[str]:
        xml = await read_in_thread(request, nightly.junit, run_id, request.state.caller.scope)
        return Response(xml, media_type="application/xml")

    @get("/{run_id:str}/summary.md", media_type="text/markdown", summary="Markdown summary for a PR comment",
         responses=problem_responses(400, 401, 404, 409, 429))
    async def summary_md(self, request: Request, nightly: Nightly, run_id: FromPath[str]) -> Response[str]:
        markdown = await read_in_thread(request, nightly.markdown, run_id, request.state.caller.scope)
        return Response(markdown, media_type="text/markdown; charset=utf-8")
