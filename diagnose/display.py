"""How a number reads for people (terminal, report page, JUnit, service pages): one rule.

Floats get a fixed number of decimals, whole numbers and text stay as they are, booleans
read yes/no, and a value the backend could not compute (None) reads as ``missing``. Canonical
number text for keys is another idea (``diagnose.text``).
"""

from __future__ import annotations

import math
from typing import Any

NOT_AVAILABLE = "n/a"


def fixed(value: Any, digits: int = 3, missing: str = NOT_AVAILABLE) -> str:
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else str(value)
    return str(value)


def p_value(p: float | None) -> str:
    """A p-value to four significant digits (``0.0004``, ``0.03125``, ``0.4213``)."""
    return NOT_AVAILABLE if p is None else f"{p:.4g}"
