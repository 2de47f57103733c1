"""Which kind of question a typed value answers: its class (kind and dimension).

Below the stages, so the input stage (each document's answer) and the sampling stage
(each sample's answer) read values the same way.
"""

from __future__ import annotations

from diagnose.text.value_types import Value

__all__ = ["value_class"]


def value_class(v: Value) -> tuple[str, str]:
    """Values of one class answer the same kind of question (a year and a day are both
    dates; "0–70 °C" and "85 °C" both temperatures)."""
    kind = {"version": "number", "range": "quantity"}.get(v.kind, v.kind)
    if v.kind == "range" and v.dimension in ("number", "percent"):
        kind = v.dimension
    return kind, v.dimension
