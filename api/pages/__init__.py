"""Server-rendered pages for prompt engineers (no scripts, no remote resources)."""

from api.pages.controller import PagesController, page_dependencies

__all__ = ["PagesController", "page_dependencies"]
