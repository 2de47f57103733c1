"""Which kind of question a typed value answers: its class (kind and dimension).

Below the stages, so the input stage (each document's answer) and the sampling stage
(each sample's answer) read values the same way.
"""

from __future__ import annotations

from diagnose.text._units import resolve_unit
from diagnose.text.value_types import Value

__all__ = ["compared_dimension", "per_unit_currency", "value_class"]


def value_class(v: Value) -> tuple[str, str]:
    """Values of one class answer the same kind of question (a year and a day are both
    dates; "0–70 °C" and "85 °C" both temperatures)."""
    kind = {"version": "number", "range": "quantity"}.get(v.kind, v.kind)
    if v.kind == "range" and v.dimension in ("number", "percent"):
        kind = v.dimension
    return kind, compared_dimension(v)


def compared_dimension(v: Value) -> str:
    """What ``v`` is compared in: for money per a unit that is no span of time its currency
    (:func:`per_unit_currency`), else its dimension (a unit's, a currency, a currency per year)."""
    return per_unit_currency(v) or v.dimension


def per_unit_currency(v: Value) -> str | None:
    """The currency of an amount of money per a unit that is no span of time ("EUR 150 per night",
    "$4.95 per order": "EUR", "USD"): it states the same kind of answer as the bare amount, which
    "EUR 180 a night" is read as. None for any other value; money per time is kept per year, a
    rate apart, and so is money per a unit and per time ("$12 per user per month": "USD/year")."""
    if v.kind != "money" or "/" not in v.dimension:
        return None
    currency, _, unit = v.dimension.partition("/")
    if unit.endswith("/year"):  # "$12 per user per month": per time, as "$12 a month" is
        return f"{currency}/year"
    named = resolve_unit(unit) or resolve_unit(unit.lower())
    return None if named is not None and named.dimension == "[time]" else currency
