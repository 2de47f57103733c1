"""Compiling and running a case's regex constraint safely (imports nothing of the engine).

The stdlib ``re`` engine backtracks without limit while holding the GIL: the
pattern ``(.*)*\\x00`` on a 30-character output takes minutes, and nothing else in
the process runs meanwhile. Patterns are therefore run by the ``regex`` module
(``VERSION0``: the ``re`` syntax and semantics), which takes a time limit per
match and releases the GIL while it matches. Its compiler unrolls counted
repeats, so a pattern is also bounded in size before it is compiled.

:mod:`diagnose.case` validates with :func:`compile_pattern`, and
:mod:`diagnose.sampling.constraints` checks samples with it and :func:`search`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from re import _parser as _re_parser  # the stdlib's own parser: the pattern's structure, for its size

import regex

__all__ = ["MAX_PATTERN_SIZE", "PatternError", "compile_pattern", "search"]

MAX_PATTERN_SIZE = 10_000
"""Most elements a pattern may have once its counted repeats are unrolled.

The ``regex`` module unrolls ``x{n}`` (and the minimum of ``x{n,m}``) when it
compiles, in time proportional to that size and holding the GIL:
``((a{1000}){1000}){1000}`` would take hours. ``a{10000}`` compiles in
milliseconds; no output check needs more."""

_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


class PatternError(ValueError):
    """A regex constraint's pattern cannot be compiled (or is too large to)."""


def _subpatterns(value: object) -> Iterator[_re_parser.SubPattern]:
    """The sub-patterns inside one parsed item's argument (groups, branches, lookarounds)."""
    if isinstance(value, _re_parser.SubPattern):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _subpatterns(item)


def _unrolled_size(items: _re_parser.SubPattern, cap: int) -> int:
    """Elements of the parsed pattern, each repeat counted ``max(min, 1)`` times (stops past ``cap``)."""
    total = 0
    for op, arg in items:
        if getattr(op, "name", str(op)) in _REPEATS:
            low, _high, body = arg
            total += max(low, 1) * _unrolled_size(body, cap)
        else:
            total += 1 + sum(_unrolled_size(sub, cap) for sub in _subpatterns(arg))
        if total > cap:
            break
    return total


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> regex.Pattern:
    """The compiled form a regex constraint is checked with (and validated with, at case load).

    The pattern must be valid for Python's ``re`` (the documented syntax) and for
    the ``regex`` module that runs it, and small enough to compile quickly
    (:data:`MAX_PATTERN_SIZE`); otherwise :class:`PatternError` says why.
    """
    try:
        re.compile(pattern)
        size = _unrolled_size(_re_parser.parse(pattern), MAX_PATTERN_SIZE)
    except (re.error, OverflowError, RecursionError) as exc:  # a{99999999999}, 1000 nested groups
        raise PatternError(str(exc)) from None
    if size > MAX_PATTERN_SIZE:
        raise PatternError(
            f"too large: more than {MAX_PATTERN_SIZE} elements once its counted repeats "
            "are unrolled (nested {n} repeats multiply)"
        )
    try:
        return regex.compile(pattern, regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise PatternError(str(exc)) from None


def search(compiled: regex.Pattern, text: str, timeout_s: float) -> bool:
    """Whether ``re.search`` would find the pattern in ``text``; ``TimeoutError`` after ``timeout_s``.

    ``timeout_s`` is the ``regex`` module's limit (the matching's CPU time); the GIL is
    released while it matches (``concurrent``), so other threads keep running.
    """
    return compiled.search(text, timeout=timeout_s, concurrent=True) is not None
