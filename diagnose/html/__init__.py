"""Static HTML report page: ``render_report_html(report) -> str``."""

from diagnose.html.page import render_report_html

__all__ = ["render_report_html"]
