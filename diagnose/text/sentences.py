"""Sentences and content tokens, for any script (CJK included).

Regex splitting rather than a segmenter library: retrieved chunks are full of
flattened tables (``| a | b |``), bullets and navigation dumps, where "sentence"
means "a line or cell group that states one thing"; pysbd and friends are tuned
for prose and are slower by two orders of magnitude on such text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""Kana, CJK ideographs and Hangul: scripts written without spaces between words."""
LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
"""Latin letters with their accented forms ("é", "Ø", "ł"), for a character class: Latin-1's
"×" and "÷" sit among them and are left out, so "5×3" is no name."""
LATIN_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
"""The capitals among :data:`LATIN` that Latin-1 holds ("É", "Ø"; "Ł" of Latin Extended is not)."""
_CJK_CHAR = re.compile(f"[{CJK}]")
KANA = re.compile(r"[\u3040-\u30ff]")
"""Hiragana and katakana: text with them is Japanese."""
HAN = re.compile(r"[\u4e00-\u9fff]")
"""CJK unified ideographs (Chinese characters, also in Japanese)."""
#: Sentence ends: Latin stops followed by space, CJK stops (no space needed),
#: line breaks, row breaks of flattened tables (two pipes in a row: the cells
#: of one row stay together, so a row states one thing) and bullets.
_BREAK = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])|\n+|\|(?:\s*\|)+|\s•\s|\s·\s")
_LATIN_WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*", re.UNICODE)
#: Function words of the question languages: they carry no topic, so they never
#: make a sentence look relevant. Grammar words only, no topic vocabulary.
FUNCTION_WORDS = frozenset(
    """a an the of in on at to for from by with and or is was are were be been being am does did do
    done has have had what who whom whose when where which why how that this these those as it its
    his her their our your my we you they he she i me him them us there here than then so if not
    no can could will would shall should may might must any some all each per via into about
    le la les un une des du de et ou est sont en au aux pour par avec sur dans que qui quoi quel
    quelle quels quelles ce cet cette ces il elle ils elles on ne pas se sa son ses leur leurs""".split()
)
CJK_FUNCTION_CHARS = frozenset("的是了在和与及或吗呢吧么什哪谁几多少怎样何个这那有也都而就被把对之其为以于请问")
"""Chinese grammar characters (particles, pronouns, question words) that cut content grams."""
_KANA = re.compile(r"[\u3040-\u309f]")  # hiragana: Japanese grammar (particles, endings)


@dataclass(frozen=True)
class Sentence:
    start: int
    """Character offset in the document."""
    text: str


_CLAUSE_BREAK = re.compile(r"(?<!\d)[,，](?!\d)|[;:；：、]|\s(?i:and|but|while|whereas|et|mais|tandis que|alors que)\s|而|但")
"""Where a sentence's clauses meet: punctuation (not a digit group's comma) and the coordinating
words of the supported languages."""


def clause_end(sentence: str, at: int) -> int:
    """Where the clause of ``sentence`` that holds the character at ``at`` ends: after "12 kg in
    Economy" of "12 kg in Economy and 18 kg in Business" for the "12"."""
    return next((m.start() for m in _CLAUSE_BREAK.finditer(sentence, at)), len(sentence))


def split_sentences(text: str, max_chars: int = 400) -> list[Sentence]:
    """The document's sentences in order, each at most ``max_chars`` (longer runs
    are cut at the last space before the limit, so a table dump is not one claim)."""
    out: list[Sentence] = []
    pos = 0
    for part in _BREAK.split(text):
        start = text.find(part, pos)
        start = pos if start < 0 else start
        pos = start + len(part)
        while part.strip():
            piece = part
            if len(piece) > max_chars:
                cut = piece.rfind(" ", 0, max_chars)
                piece = piece[: cut if cut > max_chars // 2 else max_chars]
            lead = len(piece) - len(piece.lstrip())
            if piece.strip():
                out.append(Sentence(start + lead, piece.strip()))
            start += len(piece)
            part = part[len(piece):]
    return out


def is_cjk(char: str) -> bool:
    return bool(_CJK_CHAR.match(char))


def cjk_share(text: str) -> float:
    """Share of the non-space characters of ``text`` that are CJK."""
    chars = [c for c in text if not c.isspace()]
    return sum(1 for c in chars if _CJK_CHAR.match(c)) / len(chars) if chars else 0.0


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def content_tokens(text: str) -> list[str]:
    """Topic-bearing tokens of ``text``, in order, without repeats.

    Latin-script words are folded (case, accents), function words dropped and
    cut to a 5-character stem ("limits" and "limited" meet). CJK runs are cut at
    grammar characters (and hiragana) and give character bigrams, or the lone
    character of a one-character piece."""
    folded = fold(text)
    out: list[str] = []
    piece = ""
    for c in folded + " ":
        if _CJK_CHAR.match(c) and c not in CJK_FUNCTION_CHARS and not _KANA.match(c):
            piece += c
            continue
        if piece:
            out += [a + b for a, b in zip(piece, piece[1:])] or [piece]
            piece = ""
    for word in _LATIN_WORD.findall(_CJK_CHAR.sub(" ", folded)):
        if word not in FUNCTION_WORDS and not word.isdigit():
            out.append(MEASURE_ADJECTIVES.get(word, word[:5]))
    return list(dict.fromkeys(out))


MEASURE_ADJECTIVES = {
    **dict.fromkeys(("high", "tall"), "heigh"), "long": "lengt", "deep": "depth",
    **dict.fromkeys(("wide", "broad"), "width"), "heavy": "weigh",
    **dict.fromkeys(("haut", "hauts", "haute", "hautes"), "haute"),
    **dict.fromkeys(("longs", "longue", "longues", "longueur", "longueurs"), "lengt"),
    "hoch": "hohe", "lang": "lange", "tief": "tiefe", **dict.fromkeys(("alto", "alta"), "altur"),
}
"""The adjective a measure is stated with, as the stem of its noun ("324 m *high*" answers "the
*height*", « 12 m *haut* » « la *hauteur* », "8 m *tief*" "die *Tiefe*")."""


def overlap(question_tokens: list[str], text: str) -> float:
    """Share 0..1 of the question's content tokens found in ``text``'s tokens."""
    if not question_tokens:
        return 0.0
    have = set(content_tokens(text))
    return sum(1 for t in question_tokens if t in have) / len(question_tokens)
