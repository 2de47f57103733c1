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
    """NFKC per character (fullwidth digits, ㎏, ℃, no-break spaces)."""
    mapped = Mapped(text)
    if text.isascii():
        return mapped
    edits = []
    for i, c in enumerate(text):
        if not c.isascii():
            n = "\ufffd" if "\ud800" <= c <= "\udfff" else unicodedata.normalize("NFKC", c)
            if n != c and n:  # (lone surrogates would crash text2num's native code)
                edits.append((i, i + 1, n))
    return mapped.rewrite(edits)
