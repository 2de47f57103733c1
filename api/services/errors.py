"""Service errors; the app turns each into an ``application/problem+json`` answer."""

from __future__ import annotations


class ServiceError(Exception):
    status = 400
    title = "bad request"

    def __init__(self, detail: str, field: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.headers = headers or {}


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
