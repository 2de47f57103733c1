"""Output checks for the case's ``constraints`` (feeds ``compliance_rate``).

One function per constraint type from :mod:`diagnose.case`; :func:`check_constraint`
dispatches on the struct. The sampling stage checks its samples with one
:class:`ConstraintChecker` per diagnosis.

A ``regex`` constraint is the case author's pattern run on model output, so it
runs with a time limit (:mod:`diagnose.text.patterns`: the ``regex`` module,
not the stdlib ``re``, which backtracks without limit holding the GIL). A pattern
stopped at its limit has an unknown result, neither a pass nor a fail
(:class:`ConstraintTimeout`, :attr:`ConstraintChecker.stopped`); the triage rule
``sampling.constraint_timeout`` reports it.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from diagnose.case import (
    Constraint,
    JsonConstraint,
    MaxWordsConstraint,
    MustIncludeConstraint,
    RegexConstraint,
)
from diagnose.text.patterns import MAX_PATTERN_SIZE, PatternError, compile_pattern, search
from diagnose.sampling.settings import SamplingSettings

__all__ = [
    "MAX_PATTERN_SIZE",
    "ConstraintChecker",
    "ConstraintTimeout",
    "PatternError",
    "RegexStop",
    "check_constraint",
    "compile_pattern",
    "passes_all",
]

log = logging.getLogger(__name__)
_clock = time.perf_counter  # the budget's clock (wall time)

REGEX_TIMEOUT_S: float = SamplingSettings.regex_timeout_s
"""Default time limit of one match (``Settings.sampling.regex_timeout_s``)."""
REGEX_BUDGET_S: float = SamplingSettings.regex_budget_s
"""Default time one regex constraint may take over a diagnosis (``Settings.sampling.regex_budget_s``)."""


class ConstraintTimeout(TimeoutError):
    """A regex constraint was stopped at its time limit: whether the text matches is unknown."""

    def __init__(self, pattern: str, timeout_s: float) -> None:
        super().__init__(f"regex constraint {pattern!r} was stopped after {timeout_s:g} s")
        self.pattern = pattern
        self.timeout_s = timeout_s


# --- json ----------------------------------------------------------------------------------

_NOT_JSON = object()


def _fenced_body(stripped: str) -> str | None:
    """The body of a fenced block that is the whole (stripped) text, else None.

    ```json ... ``` or ``` ... ```: an opening fence, spaces or tabs, an optional
    ``json`` tag (any case), then the body up to a closing fence at the very end.
    Plain string operations: the equivalent regex backtracks polynomially on a
    fence followed by a long run of spaces, which a sampled output can be.
    """
    if len(stripped) < 6 or not (stripped.startswith("```") and stripped.endswith("```")):
        return None
    inner = stripped[3:-3].lstrip(" \t")
    if inner[:4].lower() == "json":
        inner = inner[4:]
    return inner.strip()


def _parse_json(text: str) -> object:
    """The JSON value of ``text`` (stripped, or one fenced block), else ``_NOT_JSON``."""
    stripped = text.strip()
    candidates = [stripped]
    body = _fenced_body(stripped)
    if body is not None:
        candidates.append(body)
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the parser's depth
            continue
    return _NOT_JSON


def _check_json(constraint: JsonConstraint, text: str) -> bool:
    value = _parse_json(text)
    if value is _NOT_JSON:
        return False
    if not constraint.keys:
        return True
    return isinstance(value, dict) and all(key in value for key in constraint.keys)


# --- one check -----------------------------------------------------------------------------


def check_constraint(constraint: Constraint, text: str, timeout_s: float = REGEX_TIMEOUT_S) -> bool:
    """Whether ``text`` (one sample's output) satisfies ``constraint``.

    * ``json``: the stripped text, or the body of a fenced block that is the whole
      stripped text (```json ... ``` or ``` ... ```), parses as JSON; with ``keys``
      it must be an object holding every key.
    * ``regex``: the pattern is found anywhere in the text, as ``re.search`` finds
      it; a match that runs past ``timeout_s`` raises :class:`ConstraintTimeout`
      (the answer is unknown, not False).
    * ``max_words``: ``len(text.split()) <= max``.
    * ``must_include``: ``text`` contains the string, ignoring case.
    """
    if isinstance(constraint, JsonConstraint):
        return _check_json(constraint, text)
    if isinstance(constraint, RegexConstraint):
        try:
            return search(compile_pattern(constraint.pattern), text, timeout_s)
        except TimeoutError:
            raise ConstraintTimeout(constraint.pattern, timeout_s) from None
    if isinstance(constraint, MaxWordsConstraint):
        return len(text.split()) <= constraint.max
    if isinstance(constraint, MustIncludeConstraint):
        return constraint.text.casefold() in text.casefold()
    raise TypeError(f"unknown constraint type: {type(constraint).__name__}")


def passes_all(constraints: Sequence[Constraint], text: str) -> bool:
    """Whether ``text`` satisfies every constraint (True when there are none).

    Raises :class:`ConstraintTimeout` when a regex constraint cannot be decided in time.
    """
    return all(check_constraint(c, text) for c in constraints)


# --- a diagnosis' samples --------------------------------------------------------------------


@dataclass(frozen=True)
class RegexStop:
    """A regex constraint that is no longer checked in this diagnosis."""

    constraint: int
    """Its index in ``case.constraints``."""
    pattern: str
    checked: int
    """Texts it had decided before it was stopped."""
    spent_s: float
    """Time it took in all (wall clock)."""


class ConstraintChecker:
    """Checks a diagnosis' samples against the case's constraints, with time limits on regexes.

    Each match of a regex constraint may run ``timeout_s`` (the ``regex`` module's
    limit), and all its matches together ``budget_s`` (wall clock): however many
    samples there are, one constraint costs at most about ``budget_s``. A regex
    constraint that runs past either is stopped: it is not run again for this
    checker (one diagnosis), and the samples of every later :meth:`check` (and of
    the one where it stopped) are judged on the other constraints only.
    """

    def __init__(
        self,
        constraints: Sequence[Constraint],
        timeout_s: float = REGEX_TIMEOUT_S,
        budget_s: float = REGEX_BUDGET_S,
    ) -> None:
        if timeout_s <= 0 or budget_s <= 0:
            raise ValueError("regex time limits must be > 0")
        self.constraints = list(constraints)
        self.timeout_s = timeout_s
        self.budget_s = budget_s
        self._compiled = {
            i: compile_pattern(c.pattern) for i, c in enumerate(self.constraints) if isinstance(c, RegexConstraint)
        }
        self._spent = dict.fromkeys(self._compiled, 0.0)
        self._checked = dict.fromkeys(self._compiled, 0)
        self.stopped: dict[int, RegexStop] = {}
        """Regex constraints stopped so far, by index in ``constraints``."""

    def check(self, texts: Sequence[str]) -> tuple[list[bool], list[int]]:
        """``(flags, unknown)``: per text, whether it passes every constraint that could be
        decided, and the (sorted) indices of the constraints left out of every flag.

        A constraint is decided for all of ``texts`` or left out for all of them, so
        the flags of one call always judge the same constraints.
        """
        flags = [True] * len(texts)
        for index, constraint in enumerate(self.constraints):
            if index in self.stopped:
                continue
            if index in self._compiled:
                results = self._regex_results(index, texts)
                if results is None:
                    continue
            else:
                results = [check_constraint(constraint, text) for text in texts]
            flags = [f and r for f, r in zip(flags, results)]
        return flags, sorted(self.stopped)

    def _regex_results(self, index: int, texts: Sequence[str]) -> list[bool] | None:
        """Each text's match, or None once the constraint is stopped."""
        compiled = self._compiled[index]
        results = []
        for text in texts:
            left = self.budget_s - self._spent[index]
            if left <= 0:
                self._stop(index)
                return None
            started = _clock()
            try:
                found = search(compiled, text, min(self.timeout_s, left))
            except TimeoutError:
                found = None
            self._spent[index] += _clock() - started
            if found is None:
                self._stop(index)
                return None
            self._checked[index] += 1
            results.append(found)
        return results

    def _stop(self, index: int) -> None:
        pattern = self.constraints[index].pattern  # type: ignore[union-attr]
        stop = RegexStop(index, pattern, self._checked[index], round(self._spent[index], 3))
        self.stopped[index] = stop
        log.warning("regex constraint %d %r stopped after %d texts, %.3f s (limits: %g s a match, %g s in all); "
                    "its compliance is unknown", index, pattern, stop.checked, stop.spent_s,
                    self.timeout_s, self.budget_s)
