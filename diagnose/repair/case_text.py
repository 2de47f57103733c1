"""The unified diff between two cases, as the YAML a user writes."""

from __future__ import annotations

import difflib

from diagnose.case import Case
from diagnose.case_file import case_to_yaml


def case_diff(before: Case, after: Case, label: str) -> str:
    """Unified diff (difflib, 2 lines of context) of the two cases as YAML."""
    lines = difflib.unified_diff(
        case_to_yaml(before).splitlines(keepends=True),
        case_to_yaml(after).splitlines(keepends=True),
        fromfile=f"{before.id}.yaml",
        tofile=f"{before.id}.yaml ({label})",
        n=2,
    )
    return "".join(lines)
