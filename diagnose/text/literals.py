"""Digit literals: the value of "4,411", "49,99" or "1.234.567" by price-parser's separator
rules, and the canonical text of a magnitude in keys."""

from __future__ import annotations

import re
from functools import lru_cache

from price_parser.parser import parse_number



# --- digit literals -------------------------------------------------------------

#: A digit literal: grouped thousands ("4,411", "1 234 567", "1.234,5") or plain
#: ("2.4", "49,99").  Space grouping needs a 1–3 digit head, so "2024 100" is two numbers.
LITERAL = re.compile(
    r"(?<![A-Za-z0-9.,_])(?P<sign>[-−](?=\d))?"
    r"(?P<num>\d{1,3}(?P<sep>[,.' ])\d{3}(?:(?P=sep)\d{3})*(?:(?!(?P=sep))[.,]\d+)?(?![\d])"
    r"|\d+(?:[.,]\d+)?)(?![\d])"
)


@lru_cache(maxsize=8192)
def parse_literal(num: str) -> float | None:
    """The value of a literal matched by :data:`LITERAL`.

    A lone "." is a decimal point ("1.500" is 1.5, as English and CJK texts
    mean it); otherwise price-parser decides ("4,411" → 4411, "49,99" → 49.99,
    "1.234.567" → 1234567)."""
    if len(num) > 40:
        return None
    if num.count(".") == 1 and "," not in num and " " not in num and "'" not in num:
        return float(num)
    amount = parse_number(num.replace("'", ","))
    return None if amount is None else float(amount)


def format_number(x: float) -> str:
    """Canonical text of a magnitude in keys: 15 significant digits (float noise dropped), no trailing zeros."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    s = f"{x:.15g}"
    if "e" in s:
        mantissa, exp = s.split("e")
        s = f"{mantissa}e{int(exp)}"
    return "0" if s in ("-0", "0") else s
