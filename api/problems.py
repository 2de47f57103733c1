"""Every error as ``application/problem+json`` (RFC 9457), naming the field when there is one.

Litestar's problem-details plugin does the RFC 9457 part: :class:`ProblemDetailsException`
writes the body (``type``, ``title``, ``status``, ``detail`` and extension members) with its
headers (``Retry-After``, ``WWW-Authenticate``, ``Accept-Post``), and the plugin answers it and
converts the exceptions of :data:`CONVERSIONS` into it. What stays here is what the plugin
leaves to the application:

* the ``field`` member: Litestar and :mod:`api.guards` name the offending parameter in
  ``extra=[{"key": ..., "message": ...}]``, which the plugin's own conversion would copy as
  an ``extra`` list, with the detail as the title (:func:`from_http_exception`);
* this service's errors (:mod:`api.services.errors`, which know nothing of HTTP), the engine's
  (:mod:`diagnose.errors`, each class the service error of
  :data:`api.services.errors.ENGINE_ERRORS`) and a title per status;
* what needs the request, which a conversion does not see: a browser asking for a page
  without a key is sent to ``/login``; an unreachable database (503, ``Retry-After``) and
  any other failure (a 500 that says nothing of it) are logged with the method and path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException, ProblemDetailsPlugin
from litestar.response import Redirect
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError

from api.security import SESSION_COOKIE
from api.services.errors import ServiceError, SessionEnded, Unauthorized, as_service_error
from diagnose.errors import DiagnoseError

log = logging.getLogger("rag_diagnose.api")


def problem(status: int, title: str, detail: str, field: str | None = None,
            headers: Mapping[str, str] | None = None, **extra: Any) -> ProblemDetailsException:
    """A problem to raise (or answer with ``.to_response(request)``); ``field`` names the
    offending request field, ``extra`` adds members (``/healthz`` adds its queue facts)."""
    members = ({"field": field} if field is not None else {}) | extra
    return ProblemDetailsException(detail=detail, status_code=status, title=title, type_="about:blank",
                                   headers=dict(headers or {}), extra=members or None)


_TITLES = {400: "bad request", 404: "not found", 405: "method not allowed", 413: "request too large",
           415: "unsupported media type"}


def from_http_exception(exc: HTTPException) -> ProblemDetailsException:
    field, detail = _field_and_detail(exc)
    if exc.status_code == 413 and field is None:  # Litestar's own: over request_max_body_size
        field, detail = "body", f"body: {detail} (RAG_DIAGNOSE_MAX_BODY_BYTES)"
    return problem(exc.status_code, _TITLES.get(exc.status_code, "error"), detail, field, exc.headers)


def from_validation_exception(exc: ValidationException) -> ProblemDetailsException:
    """Litestar's own checks (query parameters, a body that is not a JSON object) and the guards'."""
    field, detail = _field_and_detail(exc)
    return problem(exc.status_code if exc.status_code < 500 else 400, "bad request", detail, field)


def from_service_error(exc: ServiceError) -> ProblemDetailsException:
    return problem(exc.status, exc.title, exc.detail, exc.field, exc.headers, **exc.facts)


def from_engine_error(exc: DiagnoseError) -> ProblemDetailsException:
    return from_service_error(as_service_error(exc))


def _field_and_detail(exc: HTTPException) -> tuple[str | None, str]:
    """``extra=[{"key": field, "message": ...}]``, as Litestar and :mod:`api.guards` raise them."""
    errors = exc.extra if isinstance(exc.extra, list) else []
    field = next((e.get("key") for e in errors if isinstance(e, dict) and e.get("key")), None)
    detail = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors) or exc.detail
    return field, detail


CONVERSIONS: dict[type[Exception], Callable[[Any], ProblemDetailsException]] = {
    HTTPException: from_http_exception,
    ValidationException: from_validation_exception,
    ServiceError: from_service_error,
    DiagnoseError: from_engine_error,
}


def problem_details_plugin() -> ProblemDetailsPlugin:
    """``plugins=`` entry of the app: answers :class:`ProblemDetailsException` and converts :data:`CONVERSIONS`."""
    return ProblemDetailsPlugin(ProblemDetailsConfig(exception_to_problem_detail_map=CONVERSIONS))


def unauthorized(request: Request, exc: Unauthorized) -> Response:
    if _wants_page(request):
        # A person in a browser: to the login form, and back here afterwards.
        response: Response = Redirect(f"/login?{urlencode({'next': request.url.path})}", status_code=303)
    else:
        response = from_service_error(exc).to_response(request)
    if isinstance(exc, SessionEnded):
        response.delete_cookie(SESSION_COOKIE, path="/")  # a stale cookie is not sent again
    return response


def _wants_page(request: Request) -> bool:
    return (request.method == "GET" and not request.url.path.startswith("/v1/")
            and "text/html" in request.headers.get("accept", ""))


DATABASE_RETRY_AFTER = {"Retry-After": "5"}
"""What ``Retry-After`` says when the database is unreachable or busy (``/healthz`` too)."""


def database_unavailable(request: Request, exc: Exception) -> Response:
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path, type(exc).__name__)
    return problem(503, "unavailable", "the database is unreachable or busy; try again shortly",
                   headers=DATABASE_RETRY_AFTER).to_response(request)


def internal_error(request: Request, exc: Exception) -> Response:
    log.exception("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(HTTP_500_INTERNAL_SERVER_ERROR, "internal error", "the service failed; see its log").to_response(request)


EXCEPTION_HANDLERS = {
    Unauthorized: unauthorized,
    OperationalError: database_unavailable,
    InterfaceError: database_unavailable,
    DisconnectionError: database_unavailable,
    Exception: internal_error,
}
"""The handlers beside the plugin's: those that need the request."""
