"""Render a :class:`Report` to one self-contained HTML page.

The page makes no network request: CSS is inlined from
``templates/report.css``, charts are inline SVG, and a Content-Security-Policy
meta tag forbids scripts and remote resources.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from diagnose.html.view import build_page
from diagnose.report import Report

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = "report.html.j2"
BODY_TEMPLATE = "report_body.html.j2"


def template_environment(*first: Path) -> Environment:
    """The one Jinja setup of every page (autoescaped, undefined names are errors); the
    directories in ``first`` are searched before the report's templates."""
    return Environment(
        loader=FileSystemLoader([*first, TEMPLATES]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_report_html(report: Report) -> str:
    """Return the report as a standalone HTML document (no scripts, no remote resources)."""
    return template_environment().get_template(TEMPLATE).render(page=build_page(report))


def render_report_body(report: Report) -> str:
    """Only the report's sections (what the page's ``<main>`` holds), for embedding in
    another page that brings its own document, styles and security headers."""
    return template_environment().get_template(BODY_TEMPLATE).render(page=build_page(report))
