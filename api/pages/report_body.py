"""The engine's report page, reused as the body of the site's diagnosis page.

:func:`diagnose.html.render_report_html` renders a whole document; the site
keeps what sits inside its ``<main>`` so that the diagnosis page shows exactly
the report page's sections, inside the site's navigation. Report text is
escaped by the engine's template, so the only literal ``<main>`` tags are the
template's own.
"""

from __future__ import annotations

import re

import msgspec
from markupsafe import Markup

from diagnose.html import render_report_html
from diagnose.report import Report

_MAIN = re.compile(r"<main\b[^>]*>(?P<body>.*)</main>", re.DOTALL)


def report_body(report: dict) -> Markup:
    """The report page's ``<main>`` content for a stored report (contract section 3 JSON)."""
    page = render_report_html(msgspec.convert(report, Report))
    found = _MAIN.search(page)
    if found is None:
        raise ValueError("the engine's report page has no <main> element")
    return Markup(found.group("body"))
