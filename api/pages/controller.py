"""The site's HTML pages: recent diagnoses, one diagnosis, two side by side, library, nightly runs.

Each handler reads through :class:`PageQueries`, builds a view model and
renders one template, all of it as a read (:func:`api.controllers.reads.read_handler`: a
thread of its own, 503 past the read deadline). Pages sit on the guarded router, like ``/v1``.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, QueryParameter

from api.controllers.reads import read_handler
from api.db.session import Database
from api.pages.compare import compare_page
from api.pages.diagnoses import diagnosis_page, diagnosis_rows
from api.pages.library import library_rows
from api.pages.nightly import run_page, run_row, trend
from api.pages.queries import PageQueries
from api.pages.render import Renderer

Queries = NamedDependency[PageQueries]
Pages = NamedDependency[Renderer]
Html = Response[str]


def _scope(request: Request) -> int | None:
    """Whose work the signed-in key may see (:attr:`api.services.auth.Caller.scope`)."""
    return request.state.caller.scope


def page_dependencies(db: Database) -> dict[str, Provide]:
    """What :class:`PagesController` needs, for ``create_app``'s dependencies."""
    queries, renderer = PageQueries(db), Renderer()
    return {"page_queries": Provide(lambda: queries, sync_to_thread=False),
            "page_renderer": Provide(lambda: renderer, sync_to_thread=False)}


class PagesController(Controller):
    path = "/"
    tags = ["pages"]
    include_in_schema = False

    @get("/")
    @read_handler
    def index(self, request: Request, page_queries: Queries, page_renderer: Pages,
              case_id: Annotated[str | None, QueryParameter(max_length=128)] = None) -> Html:
        rows = diagnosis_rows(page_queries.recent(case_id=case_id, scope=_scope(request)))
        return page_renderer.page("index.html.j2", rows=rows, case_id=case_id, active="diagnoses")

    @get("/diagnoses/{diagnosis_id:str}")
    @read_handler
    def diagnosis(self, request: Request, page_queries: Queries, page_renderer: Pages,
                  diagnosis_id: FromPath[str]) -> Html:
        scope = _scope(request)
        detail = page_queries.diagnosis(diagnosis_id, scope)
        if detail is None:
            return page_renderer.error(404, "Not found", f"There is no diagnosis {diagnosis_id!r}.", "diagnoses")
        previous = page_queries.previous_done(detail.summary, scope) if detail.report is not None else None
        return page_renderer.page("diagnosis.html.j2", page=diagnosis_page(detail, previous), active="diagnoses")

    @get("/compare/{baseline_id:str}/{current_id:str}")
    @read_handler
    def compare(self, request: Request, page_queries: Queries, page_renderer: Pages, baseline_id: FromPath[str],
                current_id: FromPath[str]) -> Html:
        details = [page_queries.diagnosis(i, _scope(request)) for i in (baseline_id, current_id)]
        for wanted, detail in zip((baseline_id, current_id), details):
            if detail is None:
                return page_renderer.error(404, "Not found", f"There is no diagnosis {wanted!r}.", "diagnoses")
            if detail.report is None:
                return page_renderer.error(
                    409, "No report yet", f"Diagnosis {wanted} is {detail.summary.status}; it has no report to compare.",
                    "diagnoses")
        return page_renderer.page("compare.html.j2", page=compare_page(*details), active="diagnoses")

    @get("/library")
    @read_handler
    def library(self, request: Request, page_queries: Queries, page_renderer: Pages) -> Html:
        rows = library_rows(page_queries.library(_scope(request)))
        return page_renderer.page("library.html.j2", rows=rows, active="library")

    @get("/nightly")
    @read_handler
    def nightly(self, request: Request, page_queries: Queries, page_renderer: Pages) -> Html:
        runs = page_queries.runs(scope=_scope(request))
        return page_renderer.page("nightly.html.j2", rows=[run_row(r) for r in runs], trend=trend(runs),
                                  active="nightly")

    @get("/nightly/{run_id:str}")
    @read_handler
    def nightly_run(self, request: Request, page_queries: Queries, page_renderer: Pages, run_id: FromPath[str]) -> Html:
        detail = page_queries.run(run_id, _scope(request))
        if detail is None:
            return page_renderer.error(404, "Not found", f"There is no nightly run {run_id!r}.", "nightly")
        return page_renderer.page("nightly_run.html.j2", page=run_page(detail), active="nightly")


__all__ = ["PagesController", "page_dependencies"]
