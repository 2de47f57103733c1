"""Read a case file (YAML or JSON), checking the bytes are UTF-8 before parsing."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import yaml

from diagnose.case import MAX_NESTING, Case, case_from_dict, check_nesting
from diagnose.errors import CaseError, UsageError

_MARK = "\U0010fffd"  # a private-use code point stands in for each undecodable byte


def _mark_bad_bytes(error: UnicodeDecodeError) -> tuple[str, int]:
    return _MARK, error.end


codecs.register_error("diagnose-mark", _mark_bad_bytes)


def load_case(path: str | Path) -> Case:
    """Load and validate a case; raise CaseError naming the field, UsageError for a bad path."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"case file not found: {file}") from None
    except OSError as exc:
        raise UsageError(f"cannot read case file {file}: {exc.strerror}") from None
    try:
        text, undecodable = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        # Only now is _MARK a stand-in: a valid file may hold U+10FFFD itself.
        text, undecodable = raw.decode("utf-8", errors="diagnose-mark"), True
    data = _parse(text, file)
    check_nesting(data)  # before _find_mark, which recurses
    if undecodable:
        field = _find_mark(data, "") or "$"
        raise CaseError(field, "is not valid UTF-8 text", f"{file.name}: undecodable bytes")
    return case_from_dict(data)


def _parse(text: str, file: Path) -> Any:
    try:
        if file.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise CaseError("$", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # both parsers recurse per level: [[[[...]]]] thousands deep
        raise CaseError("$", f"is nested more than {MAX_NESTING} levels deep") from None
    except ValueError as exc:  # an integer of more than 4300 digits (sys.get_int_max_str_digits)
        kind = "JSON" if file.suffix.lower() == ".json" else "YAML"
        raise CaseError("$", f"invalid {kind}: {str(exc).split(';')[0]}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CaseError("$", f"invalid YAML{where}: {problem}") from None


def _find_mark(data: Any, path: str) -> str | None:
    """Dotted path of the first string holding an undecodable byte."""
    if isinstance(data, str):
        return path if _MARK in data else None
    if isinstance(data, dict):
        for key, value in data.items():
            found = _find_mark(value, f"{path}.{key}" if path else str(key))
            if found:
                return found
    if isinstance(data, list):
        for i, value in enumerate(data):
            found = _find_mark(value, f"{path}[{i}]")
            if found:
                return found
    return None


def case_to_yaml(case: Case) -> str:
    """A case as the YAML file a user writes: field order, null and empty fields left out
    (their defaults), multi-line text as block scalars; :func:`load_case` reads it back equal."""
    return yaml.dump(_pruned(msgspec.to_builtins(case)), Dumper=_CaseDumper, sort_keys=False, allow_unicode=True,
                     width=100)


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


class _CaseDumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, text: str) -> Any:
    # Block style keeps passages readable; PyYAML falls back to quoting when a
    # block scalar could not round-trip the text (trailing spaces, tabs, ...).
    style = "|" if "\n" in text and not re.search(r"[ \t]\n|\r", text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_CaseDumper.add_representer(str, _represent_str)
