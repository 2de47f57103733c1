"""Every error as ``application/problem+json`` (RFC 9457), naming the field when there is one.

The one exception: a browser asking for a page without a key is sent to ``/login``.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.response import Redirect
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError

from api.services.errors import ServiceError, Unauthorized

log = logging.getLogger("rag_diagnose.api")

PROBLEM = "application/problem+json"


def problem(status: int, title: str, detail: str, field: str | None = None,
            headers: dict[str, str] | None = None, **extra: Any) -> Response:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if field is not None:
        body["field"] = field
    body.update(extra)
    return Response(body, status_code=status, media_type=PROBLEM, headers=headers or {})


def service_error(request: Request, exc: ServiceError) -> Response:
    if isinstance(exc, Unauthorized) and _wants_page(request):
        # A person in a browser: to the login form, and back here afterwards.
        return Redirect(f"/login?{urlencode({'next': request.url.path})}", status_code=303)
    return problem(exc.status, exc.title, exc.detail, exc.field, exc.headers)


def _wants_page(request: Request) -> bool:
    return (request.method == "GET" and not request.url.path.startswith("/v1/")
            and "text/html" in request.headers.get("accept", ""))


def validation_error(_: Request, exc: ValidationException) -> Response:
    # Litestar's own checks (query parameters, a body that is not a JSON object) and the guards'.
    field, detail = _field_and_detail(exc)
    return problem(exc.status_code if exc.status_code < 500 else 400, "bad request", detail, field)


_TITLES = {400: "bad request", 404: "not found", 405: "method not allowed", 413: "request too large",
           415: "unsupported media type"}


def http_error(_: Request, exc: HTTPException) -> Response:
    field, detail = _field_and_detail(exc)
    return problem(exc.status_code, _TITLES.get(exc.status_code, "error"), detail, field,
                   headers=dict(exc.headers or {}))


def _field_and_detail(exc: HTTPException) -> tuple[str | None, str]:
    """``extra=[{"key": field, "message": ...}]``, as Litestar and :mod:`api.guards` raise them."""
    errors = exc.extra if isinstance(exc.extra, list) else []
    field = next((e.get("key") for e in errors if isinstance(e, dict) and e.get("key")), None)
    detail = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors) or exc.detail
    return field, detail


def database_unavailable(request: Request, exc: Exception) -> Response:
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path, type(exc).__name__)
    return problem(503, "unavailable", "the database is unreachable; try again shortly",
                   headers={"Retry-After": "5"})


def internal_error(request: Request, exc: Exception) -> Response:
    log.exception("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(HTTP_500_INTERNAL_SERVER_ERROR, "internal error", "the service failed; see its log")


EXCEPTION_HANDLERS = {
    ServiceError: service_error,
    ValidationException: validation_error,
    HTTPException: http_error,
    OperationalError: database_unavailable,
    InterfaceError: database_unavailable,
    DisconnectionError: database_unavailable,
    Exception: internal_error,
}
