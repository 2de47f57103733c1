"""Output checks for the case's ``constraints`` (feeds ``compliance_rate``).

One function per constraint type from :mod:`diagnose.case`; :func:`check_constraint`
dispatches on the struct, :func:`passes_all` is what the sampling run calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from diagnose.case import (
    Constraint,
    JsonConstraint,
    MaxWordsConstraint,
    MustIncludeConstraint,
    RegexConstraint,
)

__all__ = ["check_constraint", "passes_all"]

# The whole (stripped) output is one fenced block: ```json ... ``` or ``` ... ```.
_FENCE = re.compile(r"\A```[ \t]*(?:json)?[ \t]*\n?(?P<body>.*?)\n?[ \t]*```\Z", re.S | re.I)
_NOT_JSON = object()


def _parse_json(text: str) -> object:
    """The JSON value of ``text`` (stripped, or one fenced block), else ``_NOT_JSON``."""
    stripped = text.strip()
    candidates = [stripped]
    fenced = _FENCE.match(stripped)
    if fenced:
        candidates.append(fenced.group("body").strip())
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return _NOT_JSON


def _check_json(constraint: JsonConstraint, text: str) -> bool:
    value = _parse_json(text)
    if value is _NOT_JSON:
        return False
    if not constraint.keys:
        return True
    return isinstance(value, dict) and all(key in value for key in constraint.keys)


def check_constraint(constraint: Constraint, text: str) -> bool:
    """Whether ``text`` (one sample's output) satisfies ``constraint``.

    * ``json``: the stripped text, or the body of a fenced block that is the whole
      stripped text (```json ... ``` or ``` ... ```), parses as JSON; with ``keys``
      it must be an object holding every key.
    * ``regex``: ``re.search(pattern, text)`` finds a match.
    * ``max_words``: ``len(text.split()) <= max``.
    * ``must_include``: ``text`` contains the string, ignoring case.
    """
    if isinstance(constraint, JsonConstraint):
        return _check_json(constraint, text)
    if isinstance(constraint, RegexConstraint):
        return re.search(constraint.pattern, text) is not None
    if isinstance(constraint, MaxWordsConstraint):
        return len(text.split()) <= constraint.max
    if isinstance(constraint, MustIncludeConstraint):
        return constraint.text.casefold() in text.casefold()
    raise TypeError(f"unknown constraint type: {type(constraint).__name__}")


def passes_all(constraints: Sequence[Constraint], text: str) -> bool:
    """Whether ``text`` satisfies every constraint (True when there are none)."""
    return all(check_constraint(c, text) for c in constraints)
