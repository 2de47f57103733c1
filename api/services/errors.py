"""Service errors; the app turns each into an ``application/problem+json`` answer
(:mod:`api.problems`), and the engine's errors into these first (:data:`ENGINE_ERRORS`), so a
failed job records the same title, detail and field as the answer would carry
(:func:`failure_record`)."""

from __future__ import annotations

from typing import Any

from diagnose.errors import (BackendError, CaseError, DiagnoseError, ModelError, PromptTooLarge, SettingError,
                             UsageError)


class ServiceError(Exception):
    status = 400
    title = "bad request"

    def __init__(self, detail: str, field: str | None = None, headers: dict[str, str] | None = None,
                 facts: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.headers = headers or {}
        self.facts = facts or {}
        """Extension members of the problem answer (e.g. the limit a refusal names)."""


class InvalidCase(ServiceError):
    status, title = 422, "invalid case"


class TooLarge(ServiceError):
    status, title = 413, "request too large"


class NotFound(ServiceError):
    status, title = 404, "not found"


class Conflict(ServiceError):
    status, title = 409, "conflict"


class QueueFull(ServiceError):
    status, title = 503, "queue full"


class RateLimited(ServiceError):
    status, title = 429, "too many requests"


class Unauthorized(ServiceError):
    status, title = 401, "unauthorized"


class SessionEnded(Unauthorized):
    """The sign-in cookie names no live session (signed out, expired, its key revoked): the
    cookie is cleared and nothing is counted against the address."""


class Forbidden(ServiceError):
    status, title = 403, "forbidden"


class InvalidRequest(ServiceError):
    status, title = 422, "invalid request"


class Unavailable(ServiceError):
    status, title = 503, "unavailable"


class InternalError(ServiceError):
    status, title = 500, "internal error"


class Misconfigured(ServiceError):
    status, title = 500, "misconfigured"


class ModelFailed(ServiceError):
    status, title = 500, "model error"


class BackendFailed(ServiceError):
    status, title = 502, "backend failed"


ENGINE_ERRORS: dict[type[DiagnoseError], type[ServiceError]] = {
    PromptTooLarge: TooLarge,
    CaseError: InvalidCase,
    SettingError: Misconfigured,  # the service's own environment, not the client's request
    UsageError: InvalidRequest,
    ModelError: ModelFailed,
    BackendError: BackendFailed,
    DiagnoseError: InternalError,
}
"""The service error each engine error class is; a subclass not listed is its nearest base's."""


def as_service_error(exc: DiagnoseError) -> ServiceError:
    kind = next(ENGINE_ERRORS[cls] for cls in type(exc).__mro__ if cls in ENGINE_ERRORS)
    return kind(str(exc), getattr(exc, "field", None))


def failure_record(exc: ServiceError | DiagnoseError) -> dict[str, Any]:
    """The ``error`` a failed diagnosis records: what its answer would carry."""
    error = exc if isinstance(exc, ServiceError) else as_service_error(exc)
    return {"title": error.title, "detail": error.detail} | ({"field": error.field} if error.field else {})
