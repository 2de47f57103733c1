"""The engine's report sections, reused as the body of the site's diagnosis page.

The engine's template escapes all report text, so its output is safe markup here.
"""

from __future__ import annotations

import msgspec
from markupsafe import Markup

from diagnose.html import render_report_body
from diagnose.report import Report


def report_body(report: dict) -> Markup:
    """The report page's sections for a stored report (contract section 3 JSON)."""
    return Markup(render_report_body(msgspec.convert(report, Report)))
