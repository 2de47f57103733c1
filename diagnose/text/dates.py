"""Dates in a text: all-digit dates (ISO, 6/30/2024, 2025年3月31日) built with ``datetime.date``,
month-name dates in many languages through dateparser (its locale data also supplies the
month words the candidate regex looks for; slow, so it only sees short regex-found spans,
through an lru_cache), and a date value's precision."""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache

import regex

from diagnose.text._units import resolve_unit
from diagnose.text.mapping import Mapped
from diagnose.text.numerals import era_years
from diagnose.text.value_types import Candidate, Value

_MONTH_KEYS = ("january", "february", "march", "april", "may", "june", "july", "august",
               "september", "october", "november", "december")
_DATE_LANGS = ("en", "fr", "es", "de", "it", "pt", "nl")
#: Month words that are also common words: only written capitalised count ("May 2024", not "may 5").
_CAPITALISED_ONLY = frozenset({"may", "march", "mar", "set", "ago", "out", "gen", "mag", "mai"})
#: Of those, a month French writes in lower case: a date with a day before it or a year after it ("le 3 mai",
#: "mai 2026"), not Italian's "mai" (never).
_LOWER_WITH_DAY_OR_YEAR = frozenset({"mai"})
#: Of those, abbreviations of other languages that English writes before a number ("Gen 2", "Set 5",
#: "Out 3"): a date only with a year ("Gen 2, 2024" in Italian).
_YEAR_ONLY = frozenset({"set", "ago", "out", "gen", "mag"})
_ISO_DATE = re.compile(r"(?<![\d.,/-])(?P<y>[12]\d{3})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?![\d]|[.,/-]\d)")
_ISO_MONTH = re.compile(r"(?<![\d.,/-])(?P<y>[12]\d{3})-(?P<m>0[1-9]|1[0-2])(?![\d]|[-/.]\d)")
_NUM_DATE = re.compile(r"(?<![\d.,/-])(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?![\d]|[.,/-]\d)")
_SHORT_DATE = re.compile(r"(?<![\d.,/-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d]|[.,/-]\d)")
_CJK_DATE = re.compile(r"(?<![\d.])(?P<y>\d{4})\s*[年년](?:\s*(?P<m>\d{1,2})\s*[月월](?:\s*(?P<d>\d{1,2})\s*[日号號일]?)?)?")
_CJK_MONTH_DAY = re.compile(r"(?<![\d.年년])(?P<m>\d{1,2})\s*[月월](?:\s*(?P<d>\d{1,2})\s*[日号號일])?")
_LETTERS = regex.compile(r"\p{L}+")
#: A year of an era: before ("753 BC", "44 av. J.-C.", "27 v. Chr.") or after ("AD 476", "476 CE")
#: the epoch; a year before it is keyed negative ("date:-0753"), as ISO 8601 writes it bar year zero.
#: A bare "AD" or "CE" after a number must end the phrase: "3 AD servers", "2 CE-marked" are no years.
_BEFORE_EPOCH = r"BCE?|B\.C\.(?:E\.)?|av\.\s?J\.?-C\.|a\.\s?C\.|a\.\s?J\.C\.|v\.\s?Chr\."
_AFTER_EPOCH = r"(?:AD|CE)(?![\s-]+[a-z]|-)|A\.D\.|C\.E\.|ap\.\s?J\.?-C\.|d\.\s?C\.|n\.\s?Chr\."
_ERA_YEAR = re.compile(
    rf"(?<![\d.,])(?P<y>[1-9]\d{{0,3}})\s?(?:(?P<bc>{_BEFORE_EPOCH})|{_AFTER_EPOCH})(?![A-Za-z])"
    rf"|(?<![A-Za-z])(?:AD|A\.D\.)\s?(?P<ad>[1-9]\d{{0,3}})(?![\d.,]\d)"
)
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th|er|º|°|\.)?"
_YEAR = r"(?P<y>[12]\d{3})(?!\d)"
_AFTER_DY = re.compile(rf"\.?\s+{_DAY}(?!\d),?\s+{_YEAR}", re.I)
_AFTER_Y = re.compile(rf"\.?,?\s+(?:de\s+)?{_YEAR}", re.I)
_AFTER_D = re.compile(rf"\.?\s+{_DAY}(?![\d:])", re.I)
_BEFORE_D = re.compile(rf"(?<![\d.,])(?:{_DAY}\s+(?:de\s+)?|(?P<od>[0-3]?\d)(?:st|nd|rd|th)\s+of\s+)$", re.I)
"""A day before the month: "4 July", "4 de julio", "4th of July" ("of" only after an ordinal)."""


@lru_cache(maxsize=1)
def _month_words() -> dict[str, tuple[int, tuple[str, ...]]]:
    """Month word → (month number, languages), from dateparser's locale data."""
    from dateparser.languages.loader import default_loader

    found: dict[str, dict[int, set[str]]] = {}
    for lang in _DATE_LANGS:
        info = default_loader.get_locale(lang).info
        for number, key in enumerate(_MONTH_KEYS, 1):
            for word in info.get(key, []):
                if len(word) >= 3:
                    found.setdefault(word.lower(), {}).setdefault(number, set()).add(lang)
    return {w: (next(iter(m)), tuple(sorted(next(iter(m.values()))))) for w, m in found.items() if len(m) == 1}


@lru_cache(maxsize=16)
def _date_parser(languages: tuple[str, ...], order: str):
    from dateparser.date import DateDataParser

    settings = {"DATE_ORDER": order, "PREFER_DAY_OF_MONTH": "first", "RETURN_AS_TIMEZONE_AWARE": False,
                "RELATIVE_BASE": datetime(2000, 1, 1), "PREFER_DATES_FROM": "current_period"}
    return DateDataParser(languages=list(languages), settings=settings)


@lru_cache(maxsize=4096)
def _dateparser_date(span: str, languages: tuple[str, ...], order: str) -> date | None:
    try:
        found = _date_parser(languages, order).get_date_data(span).date_obj
    except Exception:  # dateparser can raise on odd input; the regex groups are the fallback
        return None
    return found.date() if found else None


def _date_key(y: int | None, m: int | None, d: int | None) -> str | None:
    try:
        if y is not None and m is not None and d is not None:
            return "date:" + date(y, m, d).isoformat()
        if y is not None and m is not None:
            return f"date:{date(y, m, 1):%Y-%m}"
        if m is not None and d is not None:
            return f"date:--{date(2000, m, d):%m-%d}"
    except ValueError:
        return None
    return f"date:{y:04d}" if y is not None else None


def _date(start: int, end: int, y=None, m=None, d=None) -> Candidate | None:
    key = _date_key(y, m, d)
    return None if key is None else Candidate(start, end, "date", key, prio=2)


def _month_name_dates(w: str) -> list[Candidate]:
    months = _month_words()
    out = []
    for t in _LETTERS.finditer(w):
        word = t.group()
        low = word.lower()
        if low not in months:
            continue
        number, langs = months[low]
        s, e = t.start(), t.end()
        before = _BEFORE_D.search(w, max(0, s - 12), s)
        after_y, after_dy, after_d = _AFTER_Y.match(w, e), _AFTER_DY.match(w, e), _AFTER_D.match(w, e)
        if low in _CAPITALISED_ONLY and not word[0].isupper() and not (
                low in _LOWER_WITH_DAY_OR_YEAR and (before or after_y)):
            continue
        day_before = (before["d"] or before["od"]) if before else None
        if before and after_y:
            span, y, d, order = (before.start(), after_y.end()), after_y["y"], day_before, "DMY"
        elif after_dy:
            span, y, d, order = (s, after_dy.end()), after_dy["y"], after_dy["d"], "MDY"
        elif after_y:
            span, y, d, order = (s, after_y.end()), after_y["y"], None, "MDY"
        elif low in _YEAR_ONLY:
            continue
        elif before:
            span, y, d, order = (before.start(), e), None, day_before, "DMY"
        elif after_d:
            span, y, d, order = (s, after_d.end()), None, after_d["d"], "MDY"
        else:
            continue
        y = int(y) if y else None
        d = int(d) if d else None
        if y is not None and d is not None:
            parsed = _dateparser_date(w[span[0] : span[1]], langs, order)
            if parsed is not None:
                number, d = parsed.month, parsed.day
        cand = _date(span[0], span[1], y, number, d)
        if cand is not None:
            out.append(cand)
    return out


def date_claims(w: str) -> list[Candidate]:
    out = []
    add = out.append
    for m in _ISO_DATE.finditer(w):
        add(_date(m.start(), m.end(), int(m["y"]), int(m["m"]), int(m["d"])))
    for m in _ISO_MONTH.finditer(w):
        add(_date(m.start(), m.end(), int(m["y"]), int(m["m"])))
    for m in _NUM_DATE.finditer(w):
        a, b, y, sep = int(m["a"]), int(m["b"]), m["y"], m["s"]
        if len(y) == 2 and sep != "/":
            continue
        year = int(y) if len(y) == 4 else 2000 + int(y) if int(y) < 70 else 1900 + int(y)
        day_first = (sep == "." and b <= 12) or a > 12  # "/" and "-" are month-first (US)
        add(_date(m.start(), m.end(), year, b if day_first else a, a if day_first else b))
    for m in _SHORT_DATE.finditer(w):
        a, b = int(m["a"]), int(m["b"])
        follower = re.match(r"\s?([A-Za-z]+)", w[m.end() : m.end() + 12])
        if a <= 12 and not (follower and resolve_unit(follower.group(1))):
            add(_date(m.start(), m.end(), None, a, b))  # "11/22": a year-less date
    for m in _ERA_YEAR.finditer(w):
        year = int(m["y"] or m["ad"])
        add(Candidate(m.start(), m.end(), "date", f"date:-{year:04d}" if m["bc"] else f"date:{year:04d}", prio=2))
    for m in _CJK_DATE.finditer(w):
        y = int(m["y"])
        if m["m"] is None and not 1000 <= y <= 2100:
            continue
        add(_date(m.start(), m.end(), y, int(m["m"]) if m["m"] else None, int(m["d"]) if m["d"] else None))
    for m in _CJK_MONTH_DAY.finditer(w):
        if m["d"]:
            add(_date(m.start(), m.end(), None, int(m["m"]), int(m["d"])))
        elif 1 <= int(m["m"]) <= 12:
            add(Candidate(m.start(), m.end(), None, prio=2))  # "3月" is March, not three months
    if _LETTERS.search(w):
        out.extend(_month_name_dates(w))
    return [c for c in out if c is not None]


def date_precision(v: Value) -> str:
    body = v.key.removeprefix("date:")
    if body.startswith("--"):
        return "month-day"
    return "year" if len(body) <= 5 else "dated"


def dates_in(text: str) -> list[tuple[int, int, date]]:
    """The dates in ``text`` that name a year, in order, as (start, end, date); of
    overlapping spans the longest. A month without a day reads as its first day, a year
    alone as its 1 January; a day and month without a year, and a year before the epoch, are
    left out. A year of an era is
    its Gregorian year ("令和6年4月1日")."""
    mapped = era_years(Mapped(text))
    found = sorted((c for c in date_claims(mapped.text) if c.kind == "date"), key=lambda c: (c.start, c.start - c.end))
    out: list[tuple[int, int, date]] = []
    for cand in found:
        body = cand.key.removeprefix("date:")
        if body.startswith("-") or (out and cand.start < out[-1][1]):  # no month-day, no year before AD 1
            continue
        year, month, day = (int(part) for part in (body.split("-") + ["1", "1"])[:3])
        out.append((*mapped.origin(cand.start, cand.end), date(year, month, day)))
    return out


def parse_date(value: object) -> date | None:
    """A single date given as a value (``date``, ``datetime``, ISO text such as
    ``2026-02-01T09:00:00Z``, or a written date in a supported language), else None."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
    except ValueError:
        found = dates_in(value)
        return found[0][2] if len(found) == 1 else None
