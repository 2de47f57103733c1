"""The typed value (:class:`Value`) the text package reads, and the candidate span its readers
(identifiers, dates, the number scanner) propose before overlaps are resolved."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Value:
    """One typed value found in a text."""

    kind: str
    """"quantity" | "money" | "date" | "version" | "percent" | "number" | "range" | "identifier"."""
    key: str
    """Canonical key: equal keys are the same value ("quantity:byte:1610612736", "money:USD:1200",
    "date:2024-03-05", "date:2024-03", "date:2024", "date:--11-22", "version:2.4", "percent:90",
    "range:volt:85:264", "identifier:4008881234", "number:1200")."""
    span: str
    """The text as written in the input."""
    start: int
    end: int
    dimension: str
    """pint dimensionality ("[length]"), currency code ("USD", "USD/year") or ""; a range has its
    endpoints' dimension, or "percent"/"number"."""
    magnitude: float | None
    """Value in the key's units (None for identifiers, dates, versions and ranges)."""
    per: float = 0.0
    """For an amount per span of time, the span as written, in seconds ("4 g a day": 86400); else 0."""


@dataclass
class Candidate:
    """A span one reader claims, with its reading; the longest (then ``prio``) wins an overlap."""

    start: int
    end: int
    kind: str | None  # None: a span that holds no value but must not be read as one ("3月", "5th")
    key: str = ""
    dimension: str = ""
    magnitude: float | None = None
    prio: int = 9
    per: float = 0.0
