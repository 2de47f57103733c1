"""Comparing typed values: :func:`same_value` (equal within rounding, a coarser date covering
a finer one, a number spelling a version) and :func:`comparable` (they answer the same kind
of question), so that ``comparable and not same_value`` means two values disagree."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from diagnose.text._units import SECONDS_PER_YEAR
from diagnose.text.dates import date_precision
from diagnose.text.identifiers import PART_OF_DAY, version_key
from diagnose.text.value_classes import compared_dimension
from diagnose.text.value_types import Value

__all__ = ["comparable", "half_a_day_later", "range_end", "same_value"]



def _range_ends(key: str) -> tuple[float, float] | None:
    try:
        _, lo, hi = key.rsplit(":", 2)
        return float(lo), float(hi)
    except ValueError:
        return None


def range_end(v: Value, r: Value) -> bool:
    """Whether the quantity ``v`` is one end of the range ``r`` ("85 °C" of "-40 °C to 85 °C"; both
    kept in base units)."""
    ends = _range_ends(r.key) if r.kind == "range" else None
    return (ends is not None and v.kind == "quantity" and v.magnitude is not None
            and v.key.split(":")[1] == r.key.split(":")[1] and any(_close(v.magnitude, end) for end in ends))


_HALF_DAY = 12 * 3600


def half_a_day_later(earlier: Value, later: Value) -> bool:
    """Whether ``later`` is the time of day (or range of them) ``earlier`` names on a 12-hour
    clock, twelve hours on: ``earlier`` written without its part of the day ("2:00–4:00"), so it
    may be the afternoon's ("下午2点至4点", "2:00-4:00 pm")."""
    a, b = _clock_seconds(earlier), _clock_seconds(later)
    return (a is not None and b is not None and len(a) == len(b) and PART_OF_DAY.search(earlier.span) is None
            and all(x < _HALF_DAY and y == x + _HALF_DAY for x, y in zip(a, b)))


def _clock_seconds(v: Value) -> tuple[float, ...] | None:
    """The seconds after midnight of a time of day, or of both ends of a range of them."""
    if v.dimension != "[time_of_day]":
        return None
    return (v.magnitude,) if v.kind == "quantity" else _range_ends(v.key)


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=0.005, abs_tol=1e-12)


def _as_version(v: Value) -> str:
    return v.key.removeprefix("version:") if v.kind == "version" else version_key(v.span.strip())[8:]


def same_value(a: Value, b: Value) -> bool:
    """Same value: equal keys, or same kind+dimension and magnitudes equal within a relative 0.5%
    (rounding: 1.50 kg vs 1.5 kg, or "3 lb 5 oz", 1.502 kg, vs 1.5 kg); percentages at the
    coarser one's written decimals (:func:`_rounded_equal`); bare numbers (counts, years) only
    when equal: "1661" and "1668" are two years, though within 0.5% of each other.

    A plain number equals a version it spells ("2.4" and "v2.4.0"). A date
    given less precisely equals the dates it covers ("2024" and "2024-06-30",
    "11/22" and "2024-11-22"): it does not contradict them."""
    if a.key == b.key:
        return True
    if a.kind == b.kind == "date":
        return date_covers(a.key, b.key) or date_covers(b.key, a.key)
    if {a.kind, b.kind} == {"number", "version"}:
        return _as_version(a) == _as_version(b)
    if a.kind == b.kind and a.kind in ("quantity", "money") and _per_span(a, b):
        return True
    if a.kind == b.kind == "money" and _same_money(a, b):
        return True
    if a.kind != b.kind or a.dimension != b.dimension:
        return False
    if a.kind == "range":
        ea, eb = _range_ends(a.key), _range_ends(b.key)
        return ea is not None and eb is not None and _close(ea[0], eb[0]) and _close(ea[1], eb[1])
    if a.magnitude is None or b.magnitude is None:
        return False
    if a.kind == "percent":
        return _rounded_equal(a, b)
    if a.kind == "number":  # a count or a year: "1661" and "1668" are two, whatever their ratio
        return math.isclose(a.magnitude, b.magnitude, rel_tol=1e-9)
    return _close(a.magnitude, b.magnitude)


def _per_span(a: Value, b: Value) -> bool:
    """An amount and the same amount per a span of time ("3 g" and "3,000 mg a day", "1,200円" and
    "1,200円 a month"): one states the other without its span, which contradicts nothing."""
    rate, amount = (a, b) if a.per else (b, a)
    if not rate.per or amount.per or rate.magnitude is None or amount.magnitude is None:
        return False
    if rate.kind == "money":  # kept per year
        per_span, written = f"{amount.dimension}/year", written_magnitude(rate)
    else:  # kept per second
        per_span, written = f"{amount.dimension} / [time]", rate.magnitude * rate.per
    return rate.dimension == per_span and _close(written, amount.magnitude)


def written_magnitude(v: Value) -> float | None:
    """The figure ``v`` was written with, in its unit: money per a span of time is kept per year, so
    "$24 a month" (USD/year 288) was written 24."""
    if v.magnitude is None or v.kind != "money" or not v.per:
        return v.magnitude
    return v.magnitude * v.per / SECONDS_PER_YEAR


def _same_money(a: Value, b: Value) -> bool:
    """Amounts of money equal but for the unit one or both are per, when that is no span of time
    ("EUR 150" and "EUR 150 per night", "$24 per user" and "24 USD per seat"): a page that names
    no unit, or names it in other words, states the same price."""
    return (compared_dimension(a) == compared_dimension(b) and a.magnitude is not None
            and b.magnitude is not None and _close(a.magnitude, b.magnitude))


def _rounded_equal(a: Value, b: Value) -> bool:
    """Percentages as written: equal when both round to the same figure at the coarser one's
    decimals ("33.3%" = "33.33%", but "99.9%" ≠ "99.95%", a tenth-point step apart)."""
    places = min(len(v.key.rpartition(":")[2].partition(".")[2]) for v in (a, b))
    step = Decimal(1).scaleb(-places)
    ra, rb = (Decimal(repr(v.magnitude)).quantize(step, ROUND_HALF_UP) for v in (a, b))
    return ra == rb


def date_covers(coarse: str, fine: str) -> bool:
    """Whether date key ``coarse`` (a year, a year-month, or a year-less month-day) includes ``fine``."""
    c, f = coarse.removeprefix("date:"), fine.removeprefix("date:")
    if c.startswith("--"):
        return not f.startswith("--") and len(f) == 10 and f.endswith(c[1:])
    return len(c) < len(f) and f.startswith(c + "-") and c[:4].isdigit()


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
    if a.kind == "money":
        return compared_dimension(a) == compared_dimension(b)  # "EUR 12 per ticket" disagrees with "EUR 10"
    return a.dimension == b.dimension
