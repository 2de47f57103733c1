"""Checks every ``/v1`` request passes before its handler runs."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import ValidationException
from litestar.handlers.base import BaseRouteHandler


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
