"""A life's two ends: the bracketed span after a name, and the end a question asks for.

An encyclopedia opens a person's page with "Name (9 July 1848 – 25 July 1912)": the first date
is a birth, the second a death. Asked when someone died, the first date is no answer, however
near the question's words it stands; asked when they were born, the second is none.
:func:`lifespan_end` says which end a date is, :func:`asked_life_event` which end a question asks
for, and :func:`asked_end` turns an answer that gives the whole span into the end asked for.
Words of the supported languages' grammar of birth and death, no topic words.
"""

from __future__ import annotations

import re
from typing import Literal

from diagnose.text.value_types import Value

__all__ = ["LifeEvent", "asked_end", "asked_life_event", "lifespan_end"]

LifeEvent = Literal["birth", "death"]

_DEATH = re.compile(
    r"\b(?:die|died|dies|death|pass(?:ed)?\s+away|décès|décédée?|meurt|mourut|mort|morte|starb|gestorben|"
    r"tod|todes|murió|muerte|morì|morto|morta|overleed|overlijden)\b|去世|逝世|死亡|亡くな|死去|没年",
    re.IGNORECASE)
_BIRTH = re.compile(
    r"\b(?:born|birth|birthday|née?|naissance|naquit|geboren|geburt|nació|nacimiento|nato|nata|nascita)\b|"
    r"出生|生于|生まれ|誕生",
    re.IGNORECASE)
_SPAN_DASH = re.compile(r"\s*[–—]\s*|\s+-\s+|(?<=\d)-(?=\d)")
_YEAR = re.compile(r"(?<!\d)\d{3,4}(?!\d)")
_MAX_END_CHARS = 40
"""Longest end of a lifespan ("c. 1699 or 1701", "29 October 1751"): a longer bracket is prose."""


def asked_life_event(question: str) -> LifeEvent | None:
    """Which end of a life the question asks for ("When did … die?": ``death``), or None (neither,
    or both)."""
    death, birth = bool(_DEATH.search(question)), bool(_BIRTH.search(question))
    return "death" if death and not birth else "birth" if birth and not death else None


def lifespan_end(text: str, v: Value) -> LifeEvent | None:
    """``birth`` or ``death`` when the date ``v`` (found in ``text``) is one end of a bracketed
    span of two dates ("(1568–1619)", "(26 June 1624 – 18 June 1668)"), else None."""
    if v.kind != "date":
        return None
    opens, closes = text.rfind("(", 0, v.start), text.find(")", v.end)
    if opens < 0 or closes < 0 or ")" in text[opens:v.start] or "(" in text[v.end:closes]:
        return None
    inside = text[opens + 1:closes]
    dash = _SPAN_DASH.search(inside)
    if dash is None:
        return None
    ends = inside[:dash.start()], inside[dash.end():]
    if not all(_YEAR.search(e) and len(e.strip()) <= _MAX_END_CHARS for e in ends):
        return None
    return "birth" if v.start - opens - 1 < dash.start() else "death"


def asked_end(v: Value, text: str, in_text: list[Value], life_event: LifeEvent | None) -> Value:
    """``v``, or, where ``v`` is a whole lifespan ("1786-1838", read as the answer to "When was …
    born?") that ``text`` writes as a bracketed span (``in_text``: its values), the end
    ``life_event`` asks for, as the text writes it ("1786" of "(1786–1838)")."""
    if life_event is None or v.kind != "range":
        return v
    years = {int(y) for y in _YEAR.findall(v.span)}
    ends = {lifespan_end(text, w): w for w in in_text if _year_of(w) in years}
    return ends[life_event] if {"birth", "death"} <= ends.keys() else v


def _year_of(v: Value) -> int | None:
    """The year of a date value ("date:1834-04-11": 1834), else None."""
    m = re.match(r"date:(-?\d{4})", v.key) if v.kind == "date" else None
    return int(m.group(1)) if m else None
