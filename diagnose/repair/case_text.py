"""A case as the YAML a user writes, and the unified diff between two cases."""

from __future__ import annotations

import difflib
from typing import Any

import msgspec
import yaml

from diagnose.case import Case


def case_yaml(case: Case) -> str:
    """The case as YAML, in field order, leaving out empty and null fields."""
    return yaml.safe_dump(_pruned(msgspec.to_builtins(case)), sort_keys=False, allow_unicode=True, width=100)


def case_diff(before: Case, after: Case, label: str) -> str:
    """Unified diff (difflib, 2 lines of context) of the two cases as YAML."""
    lines = difflib.unified_diff(
        case_yaml(before).splitlines(keepends=True),
        case_yaml(after).splitlines(keepends=True),
        fromfile=f"{before.id}.yaml",
        tofile=f"{before.id}.yaml ({label})",
        n=2,
    )
    return "".join(lines)


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value
