"""The README and docs/: every relative link reaches a file and, with a fragment, one of its
headings; the configuration page is what the settings classes generate today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _tokens(path: Path):
    return MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    tokens = _tokens(path)
    seen: dict[str, int] = {}
    found = set()
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type != "heading_open":
            continue
        slug = re.sub(r"[^\w\- ]", "", inline.content.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path) -> list[str]:
    def walk(tokens):
        for token in tokens:
            if token.type == "link_open":
                yield token.attrGet("href")
            yield from walk(token.children or [])

    return list(walk(_tokens(path)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for href in links(page):
        if re.match(r"[a-z]+:", href):  # http:, https:, mailto:
            continue
        target, _, fragment = href.partition("#")
        file = (page.parent / target).resolve() if target else page
        if not file.exists():
            broken.append(href)
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(href)
    assert broken == [], f"{page.name}: broken links {broken}"


def test_every_docs_page_is_reachable_from_the_readme():
    linked = {(ROOT / href.partition("#")[0]).resolve() for href in links(ROOT / "README.md")}
    assert {p.resolve() for p in PAGES[1:]} <= linked


def test_the_configuration_page_is_generated_from_the_settings():
    from api.config_docs import render

    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is stale: python -m api.config_docs > docs/configuration.md")


def test_every_setting_is_documented():
    from api.config_docs import SERVICE_GROUPS, engine_rows, service_rows

    rows = engine_rows() + [row for cls, _ in SERVICE_GROUPS for row in service_rows(cls)]
    assert all(meaning.strip() for _, _, meaning in rows), [v for v, _, m in rows if not m.strip()]


def test_the_readme_stays_a_door():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 180


def _shell_commands(path: Path) -> list[str]:
    """Each command of the page's code blocks, continuation lines (``\\``) joined."""
    blocks = [t.content for t in _tokens(path) if t.type == "fence"]
    return [c for block in blocks for c in re.sub(r"\\\n\s*", " ", block).splitlines()]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_curl_to_the_api_carries_a_key(path: Path):
    """A service with keys answers 401 to a request without one: the documented calls send it."""
    calls = [c for c in _shell_commands(path) if "curl" in c and "/v1/" in c]
    keyless = [c.strip() for c in calls if "Authorization: Bearer" not in c and '"$AUTH"' not in c]
    assert not keyless, keyless


def test_the_case_format_page_shows_every_case_field():
    """docs/case-format.md's example holds every field a case file may carry."""
    import msgspec

    from diagnose.case import Case, SamplingSpec
    from diagnose.document import Document

    example = next(t.content for t in _tokens(ROOT / "docs" / "case-format.md") if t.type == "fence")
    shown = set(re.findall(r"^\s*(?:- )?([a-z_]+):", example, re.M))
    fields = {f.name for struct in (Case, Document, SamplingSpec) for f in msgspec.structs.fields(struct)}
    assert not fields - shown, sorted(fields - shown)
