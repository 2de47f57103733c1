"""Checks every ``/v1`` request passes before its handler runs."""

from __future__ import annotations

import re

import numpy as np
from anyio import to_thread
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException, SerializationException, ValidationException
from litestar.handlers.base import BaseRouteHandler
from litestar.params import BodyKwarg

from diagnose.case import MAX_NESTING


def reject_nul_bytes(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """A NUL (``%00``) in a path or query parameter is a 400 naming the parameter.

    PostgreSQL cannot compare or store a NUL in text, so such a value would
    otherwise fail in the database as a 500; SQLite answers the same way.
    """
    values = [*connection.path_params.items(), *connection.query_params.multi_items()]
    for name, value in values:
        if isinstance(value, str) and "\x00" in value:
            raise ValidationException(
                f"{name}: must not contain a NUL character (%00)",
                extra=[{"key": name, "message": f"{name}: must not contain a NUL character (%00)"}])


def reject_repeated_parameters(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    """A query parameter that takes one value, given twice (``?mode=inputs&mode=run``), is a
    400 naming it: which one counts would otherwise be the framework's silent choice."""
    counts: dict[str, int] = {}
    for name, _ in connection.query_params.multi_items():
        counts[name] = counts.get(name, 0) + 1
    repeated = {name for name, n in counts.items() if n > 1}
    if not repeated:
        return
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        query = getattr(kwarg, "query", None) or name
        takes_many = any(f.is_non_string_collection for f in (field, *field.inner_types))  # list | None too
        if query in repeated and not takes_many:
            message = f"{query}: given {counts[query]} times; it takes one value"
            raise ValidationException(message, extra=[{"key": query, "message": message}])


#: ``application/json`` and the structured-syntax suffix ``application/*+json`` (RFC 6839).
_JSON_MEDIA_TYPE = re.compile(r"application/(?:[\w.!#$&^-]+\+)?json", re.I)


async def json_bodies_only(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    """A route that reads a JSON body takes only a JSON body, decoded here or answered 4xx.

    1. 415 unless ``Content-Type`` is ``application/json`` (or ``application/*+json``);
       no Content-Type is accepted only without a body (``curl -X POST``). A browser
       sends ``text/plain`` and form bodies cross-site without a CORS preflight, so
       accepting them would let any web page start work on a keyless service.
    2. 400 naming ``body`` when it nests more than :data:`MAX_NESTING` levels: the JSON
       decoder recurses per level and 10,000 levels were a ``RecursionError`` (500).
    3. 400 naming ``body`` when it is not JSON; the handler reuses the decoded value.
    """
    if not isinstance(connection, Request) or not _reads_json(handler):
        return
    header = connection.headers.get("content-type")
    media_type = header.split(";", 1)[0].strip() if header is not None else None
    if media_type is not None and not _JSON_MEDIA_TYPE.fullmatch(media_type):
        _unsupported(connection, f"Content-Type {media_type or '(empty)'!r}: send the body as application/json")
    body = await connection.body()
    if not body:
        return
    if media_type is None:
        _unsupported(connection, "no Content-Type: send the body as application/json")
    if await to_thread.run_sync(json_nesting_exceeds, body, MAX_NESTING):  # numpy lets go of the GIL
        _bad_body(f"nested more than {MAX_NESTING} levels deep")
    try:
        await connection.json()
    except SerializationException as exc:  # also invalid UTF-8, and numbers beyond a double
        _bad_body(f"not valid JSON: {exc}")


def _reads_json(handler: BaseRouteHandler) -> bool:
    data = handler.parsed_data_field
    if data is None:
        return False
    kwarg = data.kwarg_definition
    return (kwarg.media_type if isinstance(kwarg, BodyKwarg) else RequestEncodingType.JSON) == RequestEncodingType.JSON


def _unsupported(connection: Request, detail: str) -> None:
    headers = {"Accept-Post": "application/json"} if connection.method == "POST" else None
    raise ClientException(detail, status_code=415, headers=headers,
                          extra=[{"key": "Content-Type", "message": detail}])


def _bad_body(reason: str) -> None:
    raise ValidationException(f"body: {reason}", extra=[{"key": "body", "message": f"body: {reason}"}])


_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[list(b"[{")], _DELTA[list(b"]}")] = 1, -1
_QUOTE = np.zeros(256, dtype=np.uint8)
_QUOTE[ord('"')] = 1


def json_nesting_exceeds(body: bytes, limit: int) -> bool:
    """Whether arrays and objects in the JSON ``body`` nest more than ``limit`` deep.

    Read from the bytes, before any decoder recurses, in one vectorised pass:
    escaped backslashes and quotes dropped, every quote left opens or closes a
    string, and the running sum of brackets outside strings is the depth. A body
    with no more than ``limit`` brackets at all is answered without that pass.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    raw = np.frombuffer(body.replace(b"\\\\", b"").replace(b'\\"', b""), dtype=np.uint8)
    steps = _DELTA[raw]
    steps[np.bitwise_xor.accumulate(_QUOTE[raw]).view(bool)] = 0  # inside a string
    return int(steps.cumsum(dtype=np.int32).max(initial=0)) > limit
