"""THE text normaliser of the project, for comparing free-text answers (the input stage's
readings and the sampled answers go through the same one)."""

from __future__ import annotations

import re
import unicodedata

import regex

from diagnose.text.mapping import Mapped
from diagnose.text.numerals import chinese_numerals

__all__ = ["normalise_text"]

_COMBINING = regex.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:([, ])\d{3})(?:\1\d{3})*(?![\d]|[.,]\d)")
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d{1,2})(?![\d,])")
_PUNCT = regex.compile(r"(?!\.)\p{P}|(?<!\d)\.|\.(?!\d)")
_SPACES = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """THE text normaliser of the project, for comparing free-text answers.

    NFKC, casefold, accents folded (CJK kept intact), Chinese numerals → Arabic
    digits, digit group separators dropped ("4,411" → "4411", "1 234" → "1234"), a decimal
    comma made a point ("49,99" → "49.99"), punctuation → spaces except "." between digits,
    spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if not text.isascii():
        text = unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", text)))
        text = chinese_numerals(Mapped(text)).text
    text = _GROUPED.sub(lambda m: re.sub(r"[, ]", "", m.group()), text)
    text = _DECIMAL_COMMA.sub(r"\1.\2", text)  # "49,99" → "49.99", as extract_values reads it
    text = _PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()
