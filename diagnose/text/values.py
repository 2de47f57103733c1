"""Typed values in a sentence (quantities, money, dates, versions, percents,
ranges, identifiers, plain numbers), so two documents' claims can be compared.

"1.5 GB" and "1536 MB", "$4.82B" and "4.82 billion dollars", "两年" and
"24个月", "2025年3月31日" and "2025-03-31" get equal keys; "142 m" and "97 m"
are :func:`comparable` but not :func:`same_value`, which means they disagree.

Libraries, one line each:

* pint: unit parsing and conversion (km/h, mg, °C, req/min) — a units table we would otherwise rewrite badly.
* dateparser: month-name dates in many languages (its locale data also supplies the month words the
  candidate regex looks for); slow, so it only sees short regex-found spans, through an lru_cache.
  All-digit dates (ISO, 6/30/2024, 2025年3月31日) need no language and are built with ``datetime.date``.
* price-parser: digit-literal separators ("4,411", "49,99", "1.234.567") and its ISO 4217 code list.
* packaging: version canonicalisation ("v2.4.0" == "2.4").
* cn2an: Chinese numerals (两 贰 二十四 八千八百四十八点八六) to digits.
* text2num: spelled-out numbers in en/fr/es/de/it/pt/nl ("sixty", "quatorze", "one hour"), with offsets.
* phonenumbers is not used: a phone number's key here is its digits, and its matcher needs a region
  and rejects non-geographic numbers such as 400-888-1234.

Conventions: KB/MB/GB/TB are binary (1.5 GB == 1536 MB), bits are decimal
(1 Gbps == 1000 Mbps); 1 year == 12 months == 365.25 days and 1 week == 7 days
(pint's calendar); a bare 4-digit number 1000–2100 is a year after "in", "since",
"depuis", ... or, from 1800 on, when no word follows it; money per time is
expressed per year ("$24/month" == "288 USD per year"); "¥" is JPY unless the
text reads as Chinese; a lone "." in a literal is a decimal point ("1.500" is 1.5).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import lru_cache

import regex
from packaging.utils import canonicalize_version
from packaging.version import InvalidVersion, Version

from diagnose.text.literals import LITERAL, format_number
from diagnose.text.mapping import Mapped
from diagnose.text.measures import CURRENCY_AT, LATIN, Measure, read_measure, yen_code
from diagnose.text.numerals import prepare
from diagnose.text._units import resolve_unit

__all__ = ["Value", "comparable", "extract_values", "same_value"]


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


@dataclass
class _Cand:
    start: int
    end: int
    kind: str | None  # None: a span that holds no value but must not be read as one ("3月", "5th")
    key: str = ""
    dimension: str = ""
    magnitude: float | None = None
    prio: int = 9


# --- identifiers, versions, times: claimed before numbers are read -------------------------

_TLDS = frozenset(
    """com net org io dev ai app co jp cn fr de uk us eu info biz gov edu mil int cloud tech me tv
    ru br in au ca es it nl se ch kr tw hk sg nz be at dk fi no pl pt cz ie il mx ar za local
    internal lan corp site online xyz""".split()
)
_URL = re.compile(r"(?<![A-Za-z])(?:https?|ftp)://[^\s<>\"'\])（）【】「」『』。，、；！？]+", re.I)
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}(?![A-Za-z0-9])")
_HOST = re.compile(
    r"(?<![A-Za-z0-9@._-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
)
_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?(?![\d]|\.\d)")
_PHONE = re.compile(
    r"(?<![A-Za-z0-9+.,/-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,5}(?:[ .-]\d{2,8}){1,4}(?![A-Za-z0-9]|[.,/-]\d)"
)
_VERSION = re.compile(
    r"(?:(?<![A-Za-z])(?:version|versión|ver\.?|release|build|バージョン|版本)\s*:?\s*|(?<![A-Za-z0-9])(?P<v>[vV])\s?)?"
    r"(?<![\d.])(?P<ver>\d+(?:\.\d+)*+(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre)\.?\d*)?)(?!\w|\.\d)",
    re.I,
)
_TIME = re.compile(
    r"(?<![\d:.])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d)?(?:\s?(?P<ap>[ap])\.?m\.?(?![A-Za-z]))?"
    r"|(?P<h2>1[0-2]|0?[1-9])\s?(?P<ap2>[ap])\.?m\.?(?![A-Za-z])"
    r"|(?P<h3>[01]?\d|2[0-3])\s?[点點時时]\s?(?:(?P<m3>[0-5]?\d)\s?分(?!钟|鐘)|(?P<half>半)))(?![\d:])",
    re.I,
)
_TIME_TO = re.compile(r"\s*(?:[-–—~〜]|to|à)\s*", re.I)


def _phone_ok(s: str) -> bool:
    digits = re.sub(r"\D", "", s)
    groups = [g for g in re.split(r"[ .()+-]+", s) if g]
    if not 7 <= len(digits) <= 15:
        return False
    if "+" in s or "(" in s:
        return True
    seps = set(re.findall(r"[ .-]", s))
    if len(groups) < 3 and len(digits) < 10:
        return False  # "85-264", "1998-2001"
    if all(len(g) == 4 and 1900 <= int(g) <= 2100 for g in groups):
        return False  # a row of years
    if seps <= {" ", "."} and len(seps) == 1 and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
        return False  # thousands: "12 345 678"
    if seps == {" "} and not all(len(g) >= 3 for g in groups[1:]):
        return len(groups) == 5 and all(len(g) == 2 for g in groups) and s[0] == "0"  # "01 23 45 67 89"
    return True


def _version_key(ver: str) -> str:
    try:
        return "version:" + canonicalize_version(Version(ver), strip_trailing_zero=True)
    except InvalidVersion:
        return "version:" + ver.lower()


def _thousands_like(ver: str) -> bool:
    parts = ver.split(".")
    return len(parts[0]) <= 3 and all(len(p) == 3 and p.isdigit() for p in parts[1:])


def _identifier_claims(w: str) -> list[_Cand]:
    out = []
    for m in _URL.finditer(w):
        s = m.group().rstrip(".,;:!?")
        out.append(_Cand(m.start(), m.start() + len(s), "identifier", "identifier:" + s.lower().rstrip("/"), prio=0))
    for m in _EMAIL.finditer(w):
        out.append(_Cand(m.start(), m.end(), "identifier", "identifier:" + m.group().lower(), prio=1))
    for m in _HOST.finditer(w):
        if m.group(1).lower() in _TLDS or m.group().lower().startswith("www."):
            out.append(_Cand(m.start(), m.end(), "identifier", "identifier:" + m.group().lower(), prio=7))
    for m in _IPV4.finditer(w):
        out.append(_Cand(m.start(), m.end(), "identifier", "identifier:" + m.group(), prio=4))
    for m in _PHONE.finditer(w):
        if _phone_ok(m.group()):
            out.append(_Cand(m.start(), m.end(), "identifier", "identifier:" + re.sub(r"\D", "", m.group()), prio=5))
    for m in _VERSION.finditer(w):
        ver = m.group("ver")
        has_context = m.group() != ver
        if not has_context and (ver.count(".") < 2 or _thousands_like(ver) or not ver[-1].isdigit()):
            continue
        start = m.start("v") if m.group("v") else m.start("ver")
        out.append(_Cand(start, m.end(), "version", _version_key(ver), prio=6))
    times = []
    for m in _TIME.finditer(w):
        hour = int(m.group("h") or m.group("h2") or m.group("h3"))
        ampm = (m.group("ap") or m.group("ap2") or "").lower()
        hour = hour % 12 + (12 if ampm == "p" else 0) if ampm else hour
        seconds = hour * 3600 + (30 if m.group("half") else int(m.group("m") or m.group("m3") or 0)) * 60
        times.append(_Cand(m.start(), m.end(), "quantity", f"quantity:time_of_day:{seconds}", "[time_of_day]", seconds, 3))
    for a, b in zip(times, times[1:]):
        if _TIME_TO.fullmatch(w, a.end, b.start):
            lo, hi = a.magnitude, b.magnitude
            out.append(_Cand(a.start, b.end, "range", f"range:time_of_day:{lo:g}:{hi:g}", "[time_of_day]", None, 3))
    return out + times


# --- dates --------------------------------------------------------------------------------

_MONTH_KEYS = ("january", "february", "march", "april", "may", "june", "july", "august",
               "september", "october", "november", "december")
_DATE_LANGS = ("en", "fr", "es", "de", "it", "pt", "nl")
#: Month words that are also common words: only written capitalised count ("May 2024", not "may 5").
_CAPITALISED_ONLY = frozenset({"may", "march", "mar", "set", "ago", "out", "gen", "mag", "mai"})
_ISO_DATE = re.compile(r"(?<![\d.,/-])(?P<y>[12]\d{3})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?![\d]|[.,/-]\d)")
_ISO_MONTH = re.compile(r"(?<![\d.,/-])(?P<y>[12]\d{3})-(?P<m>0[1-9]|1[0-2])(?![\d]|[-/.]\d)")
_NUM_DATE = re.compile(r"(?<![\d.,/-])(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?![\d]|[.,/-]\d)")
_SHORT_DATE = re.compile(r"(?<![\d.,/-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d]|[.,/-]\d)")
_CJK_DATE = re.compile(r"(?<![\d.])(?P<y>\d{4})\s*[年년](?:\s*(?P<m>\d{1,2})\s*[月월](?:\s*(?P<d>\d{1,2})\s*[日号號일]?)?)?")
_CJK_MONTH_DAY = re.compile(r"(?<![\d.年년])(?P<m>\d{1,2})\s*[月월](?:\s*(?P<d>\d{1,2})\s*[日号號일])?")
_LETTERS = regex.compile(r"\p{L}+")
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th|er|º|°|\.)?"
_YEAR = r"(?P<y>[12]\d{3})(?!\d)"
_AFTER_DY = re.compile(rf"\.?\s+{_DAY}(?!\d),?\s+{_YEAR}", re.I)
_AFTER_Y = re.compile(rf"\.?,?\s+(?:de\s+)?{_YEAR}", re.I)
_AFTER_D = re.compile(rf"\.?\s+{_DAY}(?![\d:])", re.I)
_BEFORE_D = re.compile(rf"(?<![\d.,]){_DAY}\s+(?:de\s+)?$", re.I)


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


def _date(start: int, end: int, y=None, m=None, d=None) -> _Cand | None:
    key = _date_key(y, m, d)
    return None if key is None else _Cand(start, end, "date", key, prio=2)


def _month_name_dates(w: str) -> list[_Cand]:
    months = _month_words()
    out = []
    for t in _LETTERS.finditer(w):
        word = t.group()
        low = word.lower()
        if low not in months or (low in _CAPITALISED_ONLY and not word[0].isupper()):
            continue
        number, langs = months[low]
        s, e = t.start(), t.end()
        before = _BEFORE_D.search(w, max(0, s - 12), s)
        after_y, after_dy, after_d = _AFTER_Y.match(w, e), _AFTER_DY.match(w, e), _AFTER_D.match(w, e)
        if before and after_y:
            span, y, d, order = (before.start(), after_y.end()), after_y["y"], before["d"], "DMY"
        elif after_dy:
            span, y, d, order = (s, after_dy.end()), after_dy["y"], after_dy["d"], "MDY"
        elif after_y:
            span, y, d, order = (s, after_y.end()), after_y["y"], None, "MDY"
        elif before:
            span, y, d, order = (before.start(), e), None, before["d"], "DMY"
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


def _date_claims(w: str) -> list[_Cand]:
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
    for m in _CJK_DATE.finditer(w):
        y = int(m["y"])
        if m["m"] is None and not 1000 <= y <= 2100:
            continue
        add(_date(m.start(), m.end(), y, int(m["m"]) if m["m"] else None, int(m["d"]) if m["d"] else None))
    for m in _CJK_MONTH_DAY.finditer(w):
        if m["d"]:
            add(_date(m.start(), m.end(), None, int(m["m"]), int(m["d"])))
        elif 1 <= int(m["m"]) <= 12:
            add(_Cand(m.start(), m.end(), None, prio=2))  # "3月" is March, not three months
    if _LETTERS.search(w):
        out.extend(_month_name_dates(w))
    return [c for c in out if c is not None]


def _resolve(cands: list[_Cand]) -> list[_Cand]:
    """Non-overlapping candidates, the longest (then the most specific) first."""
    chosen: list[_Cand] = []
    for c in sorted(cands, key=lambda c: (c.start - c.end, c.prio, c.start)):
        if all(c.end <= o.start or c.start >= o.end for o in chosen):
            chosen.append(c)
    return sorted(chosen, key=lambda c: c.start)


# --- numbers with their units: the scanner ----------------------------------------------

_BLOCK = "\ue000"  # stands in for claimed characters, so the scanner skips them
_CONNECT = re.compile(r"\s?(?:[-–—~〜]|(?i:to|à|au|a|bis|até|tot|al|and|et|und|y|e)(?![A-Za-z])|至|到)\s?")
_AND = frozenset({"and", "et", "und", "y", "e"})
_BETWEEN = re.compile(r"(?i:between|entre|zwischen|tra)\s+$")
_YEAR_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?i:in|since|from|until|till|through|by|before|after|during|circa|ca|c|around|year|early|late|mid|"
    r"fy|en|depuis|dès|année|desde|hasta|año|seit|im|jahr|bis|anno|nel|dal|em|de)\.?\s+|[(\[]\s?)$"
)
_NEXT_WORD = re.compile(r"\s?([^\W\d_]+)")
_CONJUNCTIONS = frozenset({"and", "or", "et", "ou", "und", "oder", "y", "o", "e", "和", "与", "及", "或"})


def _is_year(m: str, meas: Measure, context: bool | None = None) -> bool:
    if not (meas.plain and meas.bare and len(meas.digits) == 4 and 1000 <= meas.value <= 2100):
        return False
    if context is None:
        context = bool(_YEAR_BEFORE.search(m, max(0, meas.start - 16), meas.start))
    if context:
        return True
    follower = _NEXT_WORD.match(m, meas.end)
    return meas.value >= 1800 and not (follower and follower.group(1).lower() not in _CONJUNCTIONS)


def _single(m: str, meas: Measure, weak: frozenset[int]) -> _Cand:
    """The value a lone measure stands for."""
    c = _Cand(meas.start, meas.end, None)
    if meas.word == "decade" and 1000 <= meas.value <= 2100:
        c.kind, c.key = "date", f"date:{meas.digits}s"  # "the 1990s"
    elif meas.word:
        pass  # "5th"
    elif meas.currency:
        dim = f"{meas.currency}/{meas.rate}" if meas.rate else meas.currency
        amount = meas.value * meas.rate_factor
        c.kind, c.key, c.dimension, c.magnitude = "money", f"money:{dim}:{format_number(amount)}", dim, amount
    elif meas.percent:
        c.kind, c.key, c.magnitude = "percent", f"percent:{format_number(meas.value)}", meas.value
    elif meas.unit is not None:
        v = meas.unit.convert(meas.value)
        c.kind, c.key, c.dimension, c.magnitude = "quantity", f"quantity:{meas.unit.label}:{format_number(v)}", meas.unit.dimension, v
    elif LATIN.match(m, meas.end):
        pass  # "5G", "3D": names, not values
    elif meas.start in weak:
        pass  # a lone spelled "one": a pronoun or article more often than a number
    elif meas.plain and len(meas.digits) >= 9:
        c.kind, c.key = "identifier", "identifier:" + meas.digits
    elif _is_year(m, meas):
        c.kind, c.key = "date", f"date:{meas.digits}"
    else:
        c.kind, c.key, c.magnitude = "number", f"number:{format_number(meas.value)}", meas.value
    return c


def _range(a: Measure, b: Measure) -> _Cand | None:
    """The range a–b, or None when the two do not measure the same thing."""
    a, b = replace(a), replace(b)
    if a.bare and not b.bare:
        a.currency, a.unit, a.percent, a.rate, a.rate_factor = b.currency, b.unit, b.percent, b.rate, b.rate_factor
    elif b.bare and not a.bare:
        b.currency, b.unit, b.percent, b.rate, b.rate_factor = a.currency, a.unit, a.percent, a.rate, a.rate_factor
    if a.currency != b.currency or a.percent != b.percent or a.rate != b.rate:
        return None
    if (a.unit is None) != (b.unit is None) or (a.unit and a.unit.dimension != b.unit.dimension):
        return None
    if a.unit is not None:
        lo, hi, label, dim = a.unit.convert(a.value), b.unit.convert(b.value), a.unit.label, a.unit.dimension
    elif a.currency:
        label = dim = f"{a.currency}/{a.rate}" if a.rate else a.currency
        lo, hi = a.value * a.rate_factor, b.value * b.rate_factor
    else:
        label = dim = "percent" if a.percent else "number"
        lo, hi = a.value, b.value
    if lo > hi:
        return None  # "3-1" is a score, "12345-678" a reference: ranges are written low to high
    return _Cand(a.start, b.end, "range", f"range:{label}:{format_number(lo)}:{format_number(hi)}", dim)


def _scan(m: str, weak: frozenset[int], yen: str) -> list[_Cand]:
    """Numbers left after the claims, read with their units, as values or ranges."""
    out: list[_Cand] = []
    pos = 0
    while (lit := LITERAL.search(m, pos)) is not None:
        a = read_measure(m, lit, yen)
        if a is None:
            pos = lit.end()
            continue
        pos = a.end
        connector = _CONNECT.match(m, a.end)
        b_lit = LITERAL.match(m, connector.end()) if connector else None
        if b_lit is None and connector and a.currency:  # "$10–$20": a currency before the second number
            cur = CURRENCY_AT.match(m, connector.end())
            b_lit = LITERAL.match(m, cur.end()) if cur else None
        if b_lit is not None and connector.group().strip().lower() in _AND:
            if not _BETWEEN.search(m, max(0, a.start - 10), a.start):
                b_lit = None  # "and" joins a range only after "between"
        if b_lit is not None and (b := read_measure(m, b_lit, yen)) is not None:
            context = bool(_YEAR_BEFORE.search(m, max(0, a.start - 16), a.start))
            if _is_year(m, a, context) and b.bare and len(b.digits) == 4 and (context or _is_year(m, b)):
                out.append(_Cand(a.start, a.end, "date", f"date:{a.digits}"))  # "1998–2001": two years
                out.append(_Cand(b.start, b.end, "date", f"date:{b.digits}"))
                pos = b.end
                continue
            both = _range(a, b)
            if both is not None:
                out.append(both)
                pos = b.end
                continue
        single = _single(m, a, weak)
        pos = max(pos, single.end)
        if single.kind is not None:
            out.append(single)
    return out


# --- putting it together ------------------------------------------------------------------


def _to_value(c: _Cand, mapped: Mapped, text: str) -> Value:
    start, end = mapped.origin(c.start, c.end)
    return Value(c.kind, c.key, text[start:end], start, end, c.dimension, c.magnitude)


def _merge_restatements(values: list[Value], text: str) -> list[Value]:
    """"60 minutes (one hour)": a value restated in parentheses right after it is one value."""
    out: list[Value] = []
    for v in values:
        if out:
            p = out[-1]
            gap, tail = text[p.end : v.start], text[v.end : v.end + 3]
            close = re.match(r"\s?[)）]", tail)
            if re.fullmatch(r"\s?[(（]\s?", gap) and close and same_value(p, v):
                end = v.end + close.end()
                out[-1] = Value(p.kind, p.key, text[p.start : end], p.start, end, p.dimension, p.magnitude)
                continue
        out.append(v)
    return out


def extract_values(text: str) -> list[Value]:
    """All typed values in text, in text order, no overlapping spans (the longest/most specific reading wins)."""
    if not text or not isinstance(text, str):
        return []
    mapped, weak = prepare(text)
    w = mapped.text
    if not any(ch.isdigit() for ch in w):  # only identifiers can be written without digits
        found = _resolve(_identifier_claims(w)) if "." in w else []
        return [_to_value(c, mapped, text) for c in found]
    claims = _resolve(_identifier_claims(w) + _date_claims(w))
    masked = list(w)
    for c in claims:
        masked[c.start : c.end] = _BLOCK * (c.end - c.start)
    found = claims + _scan("".join(masked), weak, yen_code(w))
    found = [c for c in sorted(found, key=lambda c: c.start) if c.kind is not None and not _ordinal(w, c.start)]
    return _merge_restatements([_to_value(c, mapped, text) for c in found], text)


_ORDINAL_BEFORE = ("第",)


def _ordinal(w: str, start: int) -> bool:
    """A counted position ("第一年": the first year), not an amount."""
    return w[max(0, start - 1):start] in _ORDINAL_BEFORE


# --- comparing ----------------------------------------------------------------------------


def _range_ends(key: str) -> tuple[float, float] | None:
    try:
        _, lo, hi = key.rsplit(":", 2)
        return float(lo), float(hi)
    except ValueError:
        return None


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=0.005, abs_tol=1e-12)


def _as_version(v: Value) -> str:
    return v.key.removeprefix("version:") if v.kind == "version" else _version_key(v.span.strip())[8:]


def same_value(a: Value, b: Value) -> bool:
    """Same value: equal keys, or same kind+dimension and magnitudes equal within a relative 0.5%
    (rounding: 1.50 kg vs 1.5 kg; 3 lb 5 oz is NOT required to equal 1.5 kg).

    A plain number equals a version it spells ("2.4" and "v2.4.0"). A date
    given less precisely equals the dates it covers ("2024" and "2024-06-30",
    "11/22" and "2024-11-22"): it does not contradict them."""
    if a.key == b.key:
        return True
    if a.kind == b.kind == "date":
        return _date_covers(a.key, b.key) or _date_covers(b.key, a.key)
    if {a.kind, b.kind} == {"number", "version"}:
        return _as_version(a) == _as_version(b)
    if a.kind != b.kind or a.dimension != b.dimension:
        return False
    if a.kind == "range":
        ea, eb = _range_ends(a.key), _range_ends(b.key)
        return ea is not None and eb is not None and _close(ea[0], eb[0]) and _close(ea[1], eb[1])
    if a.magnitude is None or b.magnitude is None:
        return False
    return _close(a.magnitude, b.magnitude)


def _date_covers(coarse: str, fine: str) -> bool:
    """Whether date key ``coarse`` (a year, a year-month, or a year-less month-day) includes ``fine``."""
    c, f = coarse.removeprefix("date:"), fine.removeprefix("date:")
    if c.startswith("--"):
        return not f.startswith("--") and len(f) == 10 and f.endswith(c[1:])
    return len(c) < len(f) and f.startswith(c + "-") and c[:4].isdigit()


def date_precision(v: Value) -> str:
    body = v.key.removeprefix("date:")
    if body.startswith("--"):
        return "month-day"
    return "year" if len(body) <= 5 else "dated"


def comparable(a: Value, b: Value) -> bool:
    """Whether a and b answer the same kind of question (same kind and same dimension; a year-only
    date is comparable with a full date; a plain number is comparable with a number or a version),
    so that `comparable and not same_value` means they disagree.

    A year-less date ("11/22") is not comparable with a year-only one ("2024")."""
    if {a.kind, b.kind} == {"number", "version"}:
        return True
    if a.kind != b.kind:
        return False
    if a.kind == "date":
        return {date_precision(a), date_precision(b)} != {"year", "month-day"}
    return a.dimension == b.dimension
