"""Jinja rendering of the site pages, with the strict security headers on every answer.

Templates live in ``api/pages/templates``; the engine's ``report.css`` is found
through the same loader so that the site and the report page look alike.
Autoescaping is on and undefined names fail loudly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Response

from api.security import HTML_HEADERS
from diagnose.html.page import template_environment

TEMPLATES = Path(__file__).resolve().parent / "templates"


class Renderer:
    def __init__(self) -> None:
        self.env = template_environment(TEMPLATES)

    def html(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def page(self, template: str, status_code: int = 200, headers: dict[str, str] | None = None,
             **context: Any) -> Response[str]:
        return Response(self.html(template, **context), status_code=status_code, media_type="text/html",
                        headers={**HTML_HEADERS, **(headers or {})})

    def error(self, status_code: int, title: str, detail: str, active: str = "") -> Response[str]:
        return self.page("error.html.j2", status_code, title=title, detail=detail, active=active)
