"""A rewritten copy of a text that remembers, for every character, which span of the
original it came from, so values found in the rewritten text report offsets into the input."""

from __future__ import annotations

import unicodedata




class Mapped:
    """``text`` plus, per character, the ``[lo, hi)`` span of the original it replaces."""

    __slots__ = ("text", "_lo", "_hi")

    def __init__(self, text: str, lo: list[int] | None = None, hi: list[int] | None = None):
        self.text = text
        self._lo = lo  # None: identity mapping
        self._hi = hi

    def origin(self, i: int, j: int) -> tuple[int, int]:
        """The original span of ``text[i:j]`` (``j > i``)."""
        if self._lo is None:
            return i, j
        return self._lo[i], self._hi[j - 1]

    def rewrite(self, edits: list[tuple[int, int, str]]) -> Mapped:
        """Replace ``text[i:j]`` by ``new`` for each sorted, non-overlapping ``(i, j, new)``, ``j > i``."""
        if not edits:
            return self
        text, n = self.text, len(self.text)
        lo = self._lo if self._lo is not None else list(range(n))
        hi = self._hi if self._hi is not None else list(range(1, n + 1))
        parts: list[str] = []
        nlo: list[int] = []
        nhi: list[int] = []
        pos = 0
        for i, j, new in edits:
            parts.append(text[pos:i])
            nlo.extend(lo[pos:i])
            nhi.extend(hi[pos:i])
            parts.append(new)
            nlo.extend([lo[i]] * len(new))
            nhi.extend([hi[j - 1]] * len(new))
            pos = j
        parts.append(text[pos:])
        nlo.extend(lo[pos:])
        nhi.extend(hi[pos:])
        return Mapped("".join(parts), nlo, nhi)


def nfkc(text: str) -> Mapped:
    """NFKC per character (fullwidth digits, ㎏, ℃, no-break spaces), and a vulgar fraction as
    decimals (:func:`_fraction`)."""
    mapped = Mapped(text)
    if text.isascii():
        return mapped
    edits = []
    for i, c in enumerate(text):
        if not c.isascii():
            if (fraction := _fraction(text, i)) is not None:
                if fraction[0] < i and edits and edits[-1][0] == fraction[0]:
                    edits.pop()  # the no-break space of "1\u00a0½"
                edits.append(fraction)
                continue
            n = "\ufffd" if "\ud800" <= c <= "\udfff" else unicodedata.normalize("NFKC", c)
            if n != c and n:  # (lone surrogates would crash text2num's native code)
                edits.append((i, i + 1, n))
    return mapped.rewrite(edits)


def _fraction(text: str, i: int) -> tuple[int, int, str] | None:
    """The edit that writes the vulgar fraction ``text[i]`` ("½", "¾", "⅓") in decimals, joined to
    the whole number before it ("3½" and "3 ½" are 3.5, "½" alone 0.5); None for any other
    character. NFKC would write "3½" as "31⁄2", read as 31 and 2."""
    c = text[i]
    if unicodedata.category(c) != "No" or not 0 < (value := unicodedata.numeric(c, 0)) < 1:
        return None
    digits = f"{value:.3f}".rstrip("0")  # "0.5", "0.333"
    if i and text[i - 1].isdigit():
        return i, i + 1, digits[1:]
    if i > 1 and text[i - 1] in " \u00a0" and text[i - 2].isdigit():
        return i - 1, i + 1, digits[1:]
    return i, i + 1, digits
