"""Static HTML report page: ``render_report_html(report) -> str``; its sections alone: ``render_report_body``."""

from diagnose.html.page import render_report_body, render_report_html

__all__ = ["render_report_body", "render_report_html"]
