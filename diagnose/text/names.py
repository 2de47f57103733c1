"""Proper names in Latin-script text: runs of capitalised words ("Mike Oldfield",
"Slim the Mobster", "Orion Facilities Management"), for answers that are names.

Capitalisation is the only cue (no gazetteer): a run may hold lower-case
joining words (of, the, de, &; not "and", which joins two names) between capitalised ones; a lone
capitalised word that opens a sentence is skipped (it is capitalised for
being first), unless the caller knows it as a name (written capitalised mid-sentence elsewhere).
"""

from __future__ import annotations

import re

from diagnose.text.sentences import FUNCTION_WORDS, fold

_WORD = r"[A-Z][\w'’&-]*(?:\.[A-Z][\w'’&-]*)*"
_RUN = re.compile(rf"(?<![\w'’]){_WORD}(?:\s+(?:(?:of|the|de|du|la|von|van|&)\s+){{0,2}}(?:{_WORD}|\d+\b))*")


def proper_names(text: str, known: frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """``(name, start)`` for each run of capitalised words in ``text``, in order. ``known``: folded
    single words that are names wherever they stand, a sentence's first word too ("Argentina won…"
    where another sentence has "…beating Argentina")."""
    out = []
    for m in _RUN.finditer(text):
        name = m.group(0).rstrip(".'’-")
        words = name.split()
        opens = m.start() == 0 or re.search(r"[.!?:;]\s*$|^\s*$", text[:m.start()][-3:] or " ")
        if len(words) == 1 and (opens and fold(name) not in known or fold(name) in FUNCTION_WORDS):
            continue
        while words and fold(words[0]) in FUNCTION_WORDS:
            words = words[1:]
        if words:
            out.append((" ".join(words), m.start()))
    return out


def name_key(name: str) -> str:
    """Grouping key of a name: folded, punctuation dropped ("The Go-Go's" -> "the go gos")."""
    return " ".join(re.findall(r"[^\W_]+", fold(name).replace("'", "").replace("’", "")))


def abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` is written as the initials of ``name``: "R" for "Republican", "U.K." for
    "United Kingdom", "NFL" for "National Football League" (joining words such as "of" may be
    skipped). Only a short run of capitals counts, and ``name`` must be longer than it."""
    letters = short.replace(".", "").strip()
    if not (1 <= len(letters) <= 5 and letters.isalpha() and letters.isupper()):
        return False
    words = re.findall(r"[^\W\d_]+", name)
    if len(" ".join(words)) <= len(letters):
        return False
    initials = "".join(w[0] for w in words).upper()
    capitals = "".join(w[0] for w in words if fold(w) not in FUNCTION_WORDS).upper()
    return letters in (initials, capitals)


_JOINING = frozenset({"of", "the", "de", "du", "la", "von", "van", "&"})


def _as_name(text: str) -> list[str] | None:
    """The words of ``text`` when all of it is one name of two capitalised words or more ("Manchester
    United", "the Democratic Party", "Kim Jong-un"; joining words may stand between), else None."""
    words = text.strip().rstrip(".").split()
    while words and fold(words[0]) in ("the", "a", "an"):
        words = words[1:]
    capitalised = [w for w in words if re.fullmatch(_WORD + r"[.,]?", w)]
    if len(capitalised) < 2 or any(w not in capitalised and w not in _JOINING for w in words):
        return None
    return words


def named_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are two names told apart by one word in the same place: "Manchester
    United" and "Manchester City", "the Democratic Party" and "the Republican Party", "North
    Carolina" and "South Carolina", "Kim Jong-un" and "Kim Jong-il": two things, however alike
    they read (an embedding puts such pairs closer than many paraphrases)."""
    x, y = _as_name(a), _as_name(b)
    if x is None or y is None or len(x) != len(y):
        return False
    return sum(fold(p) != fold(q) for p, q in zip(x, y)) == 1
