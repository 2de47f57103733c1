"""How values read on the pages: times, numbers, deltas and JSON evidence.

Every function returns plain text; the templates escape it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DASH = "—"


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: str
    block: bool = False
    """True when ``value`` is pretty JSON, shown preformatted."""


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
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else str(value)
    return str(value)


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
    """Evidence as rows; nested structures become pretty JSON blocks."""
    rows = []
    for key, item in data.items():
        if isinstance(item, (dict, list, tuple)):
            rows.append(KeyValue(str(key), json.dumps(item, indent=2, ensure_ascii=False, default=str), block=True))
        else:
            rows.append(KeyValue(str(key), number(item)))
    return rows


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def brief(data: Any, limit: int = 60) -> str:
    """A value in a table cell: a finding by its rule, structures as clipped one-line JSON."""
    if isinstance(data, dict) and "rule" in data:
        return f"{data['rule']} ({data.get('severity', '?')})"
    return clip(value(data), limit)


def short_id(identifier: str | None) -> str:
    return identifier[:8] if identifier else DASH
