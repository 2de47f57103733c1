"""``/v1/library``: the stored prompt library that nightly runs diagnose."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from anyio import to_thread
from litestar import Controller, Request, get, post
from litestar.di import NamedDependency, Provide
from litestar.params import BodyKwarg, QueryParameter

from api.controllers.reads import read_in_thread
from api.openapi import case_body_schema, problem_responses
from api.responses import LibraryEntry, LibraryPushResult
from api.services.diagnoses import DiagnosisService
from api.services.library import LibraryPush, LibraryService


def provide_library(service: NamedDependency[DiagnosisService]) -> LibraryService:
    return LibraryService(service.db, service.settings.limits, service.inline.prompt_tokens)


def library_body_schema() -> dict[str, Any]:
    """``schema_extra`` for the push body: :class:`LibraryPush`'s JSON schema, each case the
    ``Case`` struct's (:func:`api.openapi.case_body_schema`). The body is read as a plain
    mapping, so that a bad case is a 422 naming ``cases[i].<field>``."""
    generated = msgspec.json.schema(LibraryPush)
    schema = generated["$defs"]["LibraryPush"]
    cases = schema["properties"]["cases"]
    cases["items"] = {"type": "object", **case_body_schema()}
    cases.update(minItems=1, description=(
        "The cases to store, each id once; at most `RAG_DIAGNOSE_MAX_LIBRARY_PUSH_CASES` (200) per push."))
    return {"title": schema["title"], "description": '`{"cases": [case, ...]}` (contract section 1).',
            "properties": schema["properties"], "required": schema["required"], "additionalProperties": False}


Library = NamedDependency[LibraryService]


class LibraryController(Controller):
    path = "/v1/library"
    tags = ["nightly"]
    dependencies = {"library": Provide(provide_library, sync_to_thread=False)}

    @post(status_code=200, summary="Push cases into the library",
          responses=problem_responses(400, 401, 413, 415, 422, 429))
    async def push(
        self,
        request: Request,
        library: Library,
        data: Annotated[dict[str, Any], BodyKwarg(description='`{"cases": [case, ...]}` (contract section 1).',
                                                   schema_extra=library_body_schema())],
    ) -> LibraryPushResult:
        """Each case is stored as a version keyed by its content hash (tags left out).

        New content adds a version and makes it current (``added``/``updated``);
        the current content again is a no-op (``unchanged``, or ``retagged`` when
        only its tags changed); an older version's content becomes current again
        (``restored``). Every case is validated first, with the size and token
        checks of ``POST /v1/diagnoses``: one invalid case stores nothing and
        answers 422 (413 when over a limit) naming ``cases[i].<field>``. A push is
        limited in cases and prompt characters, the library in current cases (413
        naming ``cases``).
        """
        return await to_thread.run_sync(library.push_body, data, request.state.caller.key_id)

    @get(summary="Current library cases with their latest nightly verdict",
         responses=problem_responses(400, 401, 429))
    async def list_current(
        self,
        request: Request,
        library: Library,
        tag: Annotated[list[str] | None, QueryParameter(description="Only cases carrying every given tag.")] = None,
    ) -> list[LibraryEntry]:
        scope = request.state.caller.scope
        return await read_in_thread(request, lambda: library.list(tag or (), scope))
