"""Typed values in a sentence (quantities, money, dates, versions, percents,
ranges, identifiers, plain numbers), so two documents' claims can be compared.

"1.5 GB" and "1536 MB", "$4.82B" and "4.82 billion dollars", "两年" and
"24个月", "2025年3月31日" and "2025-03-31" get equal keys; "142 m" and "97 m"
are :func:`~diagnose.text.compare.comparable` but not :func:`~diagnose.text.compare.same_value`,
which means they disagree. Identifiers, versions and times (:mod:`diagnose.text.identifiers`)
and dates (:mod:`diagnose.text.dates`) are claimed first; the number scanner here reads the
rest, and :func:`extract_values` resolves overlaps.

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

import re
from dataclasses import replace

from diagnose.text._units import SECONDS_PER_YEAR
from diagnose.text.compare import same_value
from diagnose.text.dates import date_claims
from diagnose.text.identifiers import identifier_claims
from diagnose.text.literals import LITERAL, format_number
from diagnose.text.mapping import Mapped
from diagnose.text.measures import CURRENCY_AT, LATIN, Measure, read_measure, yen_code
from diagnose.text.numerals import prepare
from diagnose.text.value_types import Candidate, Value

__all__ = ["extract_values"]


def _resolve(cands: list[Candidate]) -> list[Candidate]:
    """Non-overlapping candidates, the longest (then the most specific) first."""
    chosen: list[Candidate] = []
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
    r"fy|en|depuis|dès|année|desde|hasta|año|seit|im|jahr|bis|anno|nel|dal|em|de)\.?\s+|(?i:mid|mi|pre|post)-|[(\[]\s?"
    r"|(?<![A-Za-z\d])(?:Q[1-4]|H[12]|FY)\s?)$"  # a quarter or half of a (fiscal) year: "Q3 2024", "FY2025"
)
_DIGITLESS_TIME = re.compile(r"noon|midday|midnight")
_NEXT_WORD = re.compile(r"\s?([^\W\d_]+)")
_THE_BEFORE = re.compile(r"(?<![A-Za-z])(?i:the)\s$")
_CONJUNCTIONS = frozenset({"and", "or", "et", "ou", "und", "oder", "y", "o", "e", "和", "与", "及", "或"})


def _is_year(m: str, meas: Measure, context: bool | None = None) -> bool:
    if not (meas.plain and meas.bare and len(meas.digits) == 4 and 1000 <= meas.value <= 2100):
        return False
    if context is None:
        context = bool(_YEAR_BEFORE.search(m, max(0, meas.start - 16), meas.start))
    if context:
        return True
    if meas.value < 1800:
        return False
    follower = _NEXT_WORD.match(m, meas.end)
    # "the 2010 census", "the 2019 election": a year that names an event is still a year
    return not (follower and follower.group(1).lower() not in _CONJUNCTIONS) or bool(
        _THE_BEFORE.search(m, max(0, meas.start - 5), meas.start))


def _single(m: str, meas: Measure, weak: frozenset[int]) -> Candidate:
    """The value a lone measure stands for."""
    c = Candidate(meas.start, meas.end, None)
    if meas.word == "decade" and 1000 <= meas.value <= 2100:
        c.kind, c.key = "date", f"date:{meas.digits}s"  # "the 1990s"
    elif meas.word:
        pass  # "5th"
    elif meas.currency:
        dim = f"{meas.currency}/{meas.rate}" if meas.rate else meas.currency
        amount = meas.value * meas.rate_factor
        c.kind, c.key, c.dimension, c.magnitude = "money", f"money:{dim}:{format_number(amount)}", dim, amount
        c.per = SECONDS_PER_YEAR / meas.rate_factor if meas.rate.endswith("year") else 0.0
    elif meas.percent:
        c.kind, c.key, c.magnitude = "percent", f"percent:{format_number(meas.value)}", meas.value
    elif meas.unit is not None:
        v = meas.unit.convert(meas.value)
        c.kind, c.key, c.dimension, c.magnitude = "quantity", f"quantity:{meas.unit.label}:{format_number(v)}", meas.unit.dimension, v
        c.per = meas.per
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


def _range(a: Measure, b: Measure) -> Candidate | None:
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
    return Candidate(a.start, b.end, "range", f"range:{label}:{format_number(lo)}:{format_number(hi)}", dim)


def _short_end_year(m: str, a: Measure, b: Measure, connector: str, context: bool) -> str | None:
    """The year a span of years ends in when it is written with its last two digits after a dash
    ("1990–95": "1995"; "1999–00": "2000"), else None: the end must follow the start, within a
    span short enough to be written so."""
    if connector.strip() not in ("-", "–", "—") or not (b.plain and b.bare and len(b.digits) == 2):
        return None
    if not _is_year(m, a, context):
        return None
    year = int(a.digits[:2] + b.digits)
    year += 100 if year <= a.value else 0
    return str(year) if year - a.value < 50 else None


_COMPOUND_JOINT = re.compile(r"\s(?:(?:and|et|und|y|e)\s)?")


def _compound(m: str, a: Measure, yen: str) -> Measure:
    """``a`` with the smaller units that follow it joined on, as one amount: "1 hour 30 minutes"
    (= 90 minutes), "6 feet 2 inches", "2 hours and 15 minutes". Each part is a whole number of a
    unit larger than the next; no comma, so "5 days, 8 hours a day" stays two."""
    total, last = a, a
    while (last.unit is not None and not last.unit.offset and not last.per and float(last.value).is_integer()
           and (joint := _COMPOUND_JOINT.match(m, last.end)) and (lit := LITERAL.match(m, joint.end()))):
        b = read_measure(m, lit, yen)
        if b is None or b.unit is None or b.unit.dimension != a.unit.dimension or b.per or b.unit.factor >= last.unit.factor:
            break
        total = replace(total, end=b.end, value=total.value + b.value * b.unit.factor / a.unit.factor, plain=False)
        last = b
    return total


def _scan(m: str, weak: frozenset[int], yen: str) -> list[Candidate]:
    """Numbers left after the claims, read with their units, as values or ranges."""
    out: list[Candidate] = []
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
                out.append(Candidate(a.start, a.end, "date", f"date:{a.digits}"))  # "1998–2001": two years
                out.append(Candidate(b.start, b.end, "date", f"date:{b.digits}"))
                pos = b.end
                continue
            if (end_year := _short_end_year(m, a, b, connector.group(), context)) is not None:
                out.append(Candidate(a.start, a.end, "date", f"date:{a.digits}"))  # "1990–95": 1990 and 1995
                out.append(Candidate(b.start, b.end, "date", f"date:{end_year}"))
                pos = b.end
                continue
            both = _range(a, b)
            if both is not None:
                out.append(both)
                pos = b.end
                continue
        single = _single(m, _compound(m, a, yen), weak)
        pos = max(pos, single.end)
        if single.kind is not None:
            out.append(single)
    return out


# --- putting it together ------------------------------------------------------------------


def _to_value(c: Candidate, mapped: Mapped, text: str) -> Value:
    start, end = mapped.origin(c.start, c.end)
    return Value(c.kind, c.key, text[start:end], start, end, c.dimension, c.magnitude, c.per)


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
                out[-1] = replace(p, span=text[p.start : end], end=end)
                continue
        out.append(v)
    return out


def extract_values(text: str) -> list[Value]:
    """All typed values in text, in text order, no overlapping spans (the longest/most specific reading wins)."""
    if not text or not isinstance(text, str):
        return []
    mapped, weak = prepare(text)
    w = mapped.text
    if not any(ch.isdigit() for ch in w):  # only identifiers and "noon" can be written without digits
        found = _resolve(identifier_claims(w)) if "." in w or _DIGITLESS_TIME.search(w) else []
        return [_to_value(c, mapped, text) for c in found]
    claims = _resolve(identifier_claims(w) + date_claims(w))
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
