"""What the OpenAPI document says beyond the handlers' Python types.

* The case body of ``POST /v1/diagnoses`` is taken as a plain mapping, so that a
  bad case is this service's 422 naming the field rather than Litestar's own
  400; :func:`case_body_schema` documents it from the engine's ``Case`` struct,
  with the ranges :func:`diagnose.case.validate_case` enforces.
* Every error is ``application/problem+json`` (:mod:`api.problems`);
  :func:`problem_responses` documents the ones a route can answer, replacing
  Litestar's generic 400.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.openapi.datastructures import ResponseSpec

from diagnose import case as case_module
from diagnose.case import Case

PROBLEM_MEDIA_TYPE = "application/problem+json"

_MEANING = {
    400: "The query, path or body could not be read (not JSON, not an object, a bad parameter).",
    401: "API keys are configured and the request has no valid `Authorization: Bearer KEY`.",
    404: "No diagnosis with this id.",
    409: "The diagnosis is not in a state that allows this (no report yet, already finished).",
    413: "The request or the case is over a size limit; `field` names which.",
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
