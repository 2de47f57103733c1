"""What the OpenAPI document says beyond the handlers' Python types.

* The case body of ``POST /v1/diagnoses`` is taken as a plain mapping, so that a
  bad case is this service's 422 naming the field rather than Litestar's own
  400; :func:`case_body_schema` documents it from the engine's ``Case`` struct,
  with the ranges :func:`diagnose.case.validate_case` enforces.
* Every error is ``application/problem+json`` (:mod:`api.problems`);
  :func:`problem_responses` documents the ones a route can answer, replacing
  Litestar's generic 400.
* :func:`links_from` documents, on an operation that creates a resource, the
  OpenAPI links to the operations that read it (its ``id`` as their path
  parameter), so that a client or a stateful fuzzer can follow them.
* :func:`schema_router` serves the document (``/schema/openapi.json``, ``.yaml``)
  and a Swagger UI page (``/schema``, ``/schema/swagger``) whose scripts and
  stylesheet come from the ``swagger-ui-py`` package's files, served by this
  site: nothing is loaded from a CDN, there is no inline script, and the page
  carries :data:`DOCS_POLICY`.
"""

from __future__ import annotations

import html
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from litestar import Request, Response, Router, get
from litestar.datastructures import ResponseHeader
from litestar.exceptions import NotFoundException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Link, OpenAPIResponse, Operation
from litestar.response import File
from litestar.types import Guard

from diagnose import case as case_module
from diagnose.case import Case

PROBLEM_MEDIA_TYPE = "application/problem+json"

_MEANING = {
    400: "The query, path or body could not be read (not JSON, not an object, a bad parameter).",
    401: "API keys are configured and the request has no valid `Authorization: Bearer KEY`.",
    404: "No diagnosis with this id.",
    409: "The diagnosis is not in a state that allows this (no report yet, already finished).",
    413: "The request or the case is over a size limit; `field` names which.",
    415: "The body is not `application/json` (or `application/*+json`); see `Accept-Post`.",
    422: "The case is invalid; `field` names the offending field (e.g. `sampling.top_p`).",
    429: "Rate limit of the API key (or client address) exceeded; see `Retry-After`.",
    503: "The queue is full or the service cannot take work; see `Retry-After`.",
}


class Problem(msgspec.Struct, kw_only=True):
    """An error (RFC 9457). Extra members may follow (``/healthz`` adds its queue facts)."""

    type: str
    title: str
    status: int
    detail: str
    field: str | None = None
    """The offending request field, as a path (``documents[2].id``), when there is one."""


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """``responses=`` for a route handler: each status as a problem+json answer."""
    return {
        status: ResponseSpec(data_container=Problem, media_type=PROBLEM_MEDIA_TYPE,
                             description=_MEANING[status], generate_examples=False)
        for status in statuses
    }


def links_from(status: int, parameter: str, targets: dict[str, tuple[str, str]]) -> type[Operation]:
    """``operation_class=`` for a route that creates a resource: its ``status`` answer links to
    ``targets`` (link name: ``(method, path)``), each given ``parameter`` from the answer's ``id``.

    The links name their targets by ``operationRef`` (a JSON pointer to the path and method),
    so the document's operation ids stay Litestar's own.
    """
    links = {
        name: Link(operation_ref=_operation_ref(method, path), parameters={parameter: "$response.body#/id"},
                   description=f"`{method.upper()} {path}` with `{parameter}` set to this answer's `id`.")
        for name, (method, path) in targets.items()
    }

    def __post_init__(self: Operation) -> None:
        response = (self.responses or {}).get(str(status))
        if isinstance(response, OpenAPIResponse):
            response.links = {**(response.links or {}), **links}

    return dataclass(type("LinkedOperation", (Operation,), {"__post_init__": __post_init__}))


def _operation_ref(method: str, path: str) -> str:
    """``#/paths/~1v1~1diagnoses~1{diagnosis_id}/get``: RFC 6901 escapes ``~`` and ``/``."""
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method.lower()


def case_body_schema() -> dict[str, Any]:
    """``schema_extra`` for the case body: the ``Case`` struct's JSON schema, inlined.

    msgspec writes ``$ref``\\s into ``$defs``; an OpenAPI document resolves ``#`` at
    its root, so the definitions are inlined (a case has no recursive types) and
    the constraint union keeps ``anyOf`` without its ``$defs`` discriminator mapping.
    """
    generated = msgspec.json.schema(Case)
    definitions = generated["$defs"]
    schema = _inline(definitions["Case"], definitions)
    _add_ranges(schema)
    return {key: schema[key] for key in ("title", "description", "properties", "required", "additionalProperties")}


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
    return {key: _inline(value, definitions) for key, value in node.items() if key != "discriminator"}


def _add_ranges(schema: dict[str, Any]) -> None:
    """What :func:`diagnose.case.validate_case` checks beyond types, where JSON Schema can say it."""
    properties = schema["properties"]
    properties["id"]["pattern"] = case_module._ID_PATTERN.pattern
    properties["question"]["pattern"] = r"\S"
    properties["documents"]["items"]["properties"]["id"]["pattern"] = r"\S"
    sampling = properties["sampling"]["properties"]
    sampling["seeds"].update(minimum=1, maximum=case_module.MAX_SEEDS)
    sampling["temperatures"].update(minItems=1, maxItems=case_module.MAX_TEMPERATURES, uniqueItems=True)
    sampling["temperatures"]["items"].update(minimum=0, maximum=case_module.MAX_TEMPERATURE)
    sampling["top_p"].update(exclusiveMinimum=0, maximum=1)
    sampling["top_k"].update(minimum=0)
    sampling["repetition_penalty"].update(exclusiveMinimum=0, maximum=case_module.MAX_REPETITION_PENALTY)
    sampling["max_new_tokens"].update(minimum=1, maximum=case_module.MAX_NEW_TOKENS)
    for variant in properties["constraints"]["items"]["anyOf"]:
        fields = variant["properties"]
        if "max" in fields:
            fields["max"]["minimum"] = 1
        if variant["title"] == "MustIncludeConstraint":
            fields["text"]["minLength"] = 1


# -- the document and its docs page, under /schema ---------------------------------------------
SCHEMA_PATH = "/schema"
DOCS_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Swagger UI served from this site: its scripts and stylesheet from ``/schema/assets``
(no inline script), the document fetched from ``/schema/openapi.json``. Inline styles
and ``data:`` images are Swagger UI's own (style attributes, SVG icons)."""
_ASSETS = f"{SCHEMA_PATH}/assets"
_SWAGGER_FILES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css"}
_SWAGGER_INIT = f"""window.ui = SwaggerUIBundle({{
  url: "{SCHEMA_PATH}/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
}});
"""


def swagger_ui_files() -> Path:
    """Swagger UI's built files as the ``swagger-ui-py`` package ships them (Apache-2.0)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is missing; reinstall rag-diagnose")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


class LocalSwaggerPlugin(OpenAPIRenderPlugin):
    """Swagger UI from this site's ``/schema/assets``; the page itself holds no script."""

    def __init__(self, path: str | Sequence[str] = "/swagger") -> None:
        super().__init__(path=path, favicon='<link rel="icon" href="data:,">', style="")
        self.files = swagger_ui_files()
        missing = [name for name in _SWAGGER_FILES if not (self.files / name).is_file()]
        if missing:
            raise RuntimeError(f"swagger-ui-py lacks {missing} in {self.files}")

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        title = html.escape(str(openapi_schema["info"]["title"]))
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
{self.favicon}
<title>{title} · API</title>
<link rel="stylesheet" href="{_ASSETS}/swagger-ui.css">
<script src="{_ASSETS}/swagger-ui-bundle.js" defer></script>
<script src="{_ASSETS}/swagger-init.js" defer></script>
</head>
<body>
<div id="swagger-ui"></div>
</body>
</html>
""".encode()

    def receive_router(self, router: Router) -> None:
        files = self.files

        @get("/assets/{name:str}", sync_to_thread=False, include_in_schema=False)
        def asset(name: FromPath[str]) -> Response:
            if name == "swagger-init.js":
                return Response(_SWAGGER_INIT, media_type="text/javascript")
            if name not in _SWAGGER_FILES:
                raise NotFoundException(f"no asset {name!r}")
            return File(files / name, media_type=_SWAGGER_FILES[name], content_disposition_type="inline")

        router.register(asset)


def schema_router(guards: Sequence[Guard]) -> Router:
    """``openapi_router=`` for the app: the document and the docs page, behind ``guards``.

    Only Swagger UI is served (Litestar's ReDoc, Elements and RapiDoc pages load
    their scripts from a CDN); every answer carries the docs page's policy.
    """
    return Router(
        path=SCHEMA_PATH,
        route_handlers=[],
        guards=list(guards),
        include_in_schema=False,
        response_headers=[ResponseHeader(name="Content-Security-Policy", value=DOCS_POLICY),
                          ResponseHeader(name="X-Content-Type-Options", value="nosniff")],
    )


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """Swagger UI first, so it is also the page at ``/schema`` itself."""
    return [LocalSwaggerPlugin(), JsonRenderPlugin(), YamlRenderPlugin()]
