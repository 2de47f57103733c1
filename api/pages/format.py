"""How values read on the pages: times, numbers, deltas and JSON evidence.

Every function returns plain text; the templates escape it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from diagnose.display import fixed
from diagnose.html.view import KeyValue
from diagnose.html.view import key_values as engine_key_values

DASH = "—"


def when(moment: dt.datetime | None) -> str:
    """``2025-01-31 14:05 UTC``; SQLite hands back naive datetimes, which are UTC here."""
    if moment is None:
        return DASH
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def day(moment: dt.datetime) -> str:
    """``01-31``: short enough for a chart label."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%m-%d")


def number(value: Any, digits: int = 3) -> str:
    return fixed(value, digits, missing=DASH)


def signed(delta: float, digits: int = 3) -> str:
    """``+0.250`` / ``−0.100`` / ``±0`` (below display precision)."""
    if abs(delta) < 0.5 * 10 ** -digits:
        return "±0"
    return f"{delta:+.{digits}f}".replace("-", "−")


def value(data: Any) -> str:
    """A JSON value on one line: numbers formatted, structures as compact JSON."""
    if isinstance(data, (dict, list, tuple)):
        return json.dumps(data, ensure_ascii=False, default=str, separators=(", ", ": "))
    return number(data)


def key_values(data: Mapping[str, Any]) -> list[KeyValue]:
    """Evidence as rows (the report page's rule), numbers as the pages show them."""
    return engine_key_values(data, scalar=number)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def brief(data: Any, limit: int = 60) -> str:
    """A value in a table cell: a finding by its rule, structures as clipped one-line JSON."""
    if isinstance(data, dict) and "rule" in data:
        return f"{data['rule']} ({data.get('severity', '?')})"
    return clip(value(data), limit)


def short_id(identifier: str | None) -> str:
    return identifier[:8] if identifier else DASH
