"""Numerals written in words or Chinese characters, read as digits: :func:`prepare` gives the
text values are read from (NFKC, Chinese numerals by cn2an, spelled-out numbers by text2num),
each step a :class:`~diagnose.text.mapping.Mapped` rewrite."""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

import cn2an
import roman
from text_to_num import alpha2digit, find_numbers

from diagnose.text._units import ALIASES, WORDS

from diagnose.text.language import LANGUAGE_WORDS, guess_language
from diagnose.text.literals import format_number
from diagnose.text.mapping import Mapped, nfkc


# --- Chinese numerals -----------------------------------------------------------

_CN_DIGITS = "零〇一二两兩三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖"
_CN_ALL = _CN_DIGITS + "十拾百佰千仟万萬亿億"
_CN_RUN = re.compile(f"(百分之)?([{_CN_ALL}]+(?:点[{_CN_DIGITS}]+)?)")
_HAS_DIGIT = re.compile(f"[{_CN_DIGITS}十拾]")
#: What may follow a lone numeral character for it to be a number: unit and
#: currency words and common classifiers ("一些", "统一", "十分重要" stay words).
_CN_FOLLOWERS = tuple(
    sorted(
        {w for w in ALIASES if not w.isascii() and w != "分"}
        | {w for w in WORDS if not w.isascii()}
        | set("个個位名人次件台项條条种種岁歲号號本枚回倍层層度月")
        | {"点半", "点钟", "點鐘"},
        key=len,
        reverse=True,
    )
)


@lru_cache(maxsize=4096)
def _cn_value(run: str) -> str | None:
    if len(run) > 24:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return format_number(float(cn2an.cn2an(run, "normal")))
        except Exception:  # cn2an raises ValueError and others on non-numbers ("万一")
            return None


def chinese_numerals(mapped: Mapped) -> Mapped:
    """Chinese numeral runs → Arabic digits, by cn2an; 百分之X → X%.

    A lone numeral character is converted only before a unit, currency word or
    classifier, or after 第, so words such as 一些 or 统一 are left alone."""
    text = mapped.text
    if not _HAS_DIGIT.search(text):
        return mapped
    edits = []
    for m in _CN_RUN.finditer(text):
        percent, run = m.group(1), m.group(2)
        if not _HAS_DIGIT.search(run):
            continue
        if len(run) == 1 and not percent:
            after = text[m.end() : m.end() + 4]
            before = text[m.start() - 1 : m.start()]
            if before != "第" and not after.startswith(_CN_FOLLOWERS):
                continue
        value = _cn_value(run)
        if value is None:
            continue
        edits.append((m.start(), m.end(), value + "%" if percent else value))
    return mapped.rewrite(edits)


# --- spelled-out numbers (text2num) -------------------------------------------------

_TOKEN = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)*|[^\w\s]")
_SCALE_VALUES = {1e3, 1e6, 1e9, 1e12}
_UNIT_WORDS = frozenset({"second", "seconde", "segundo", "secondo", "sekunde"})
_MONTH_WORDS = frozenset({"sept", "dez"})  # number words that are also month abbreviations
#: Number words of one language that are everyday words of another ("due" to, an "elf"):
#: never read as numbers when the language was only guessed from the number words.
_FALSE_FRIENDS = frozenset({"due", "elf", "sei", "tree", "nove", "otto", "tien", "once", "doses"})


def _covered(found) -> int:
    return sum(o.end - o.start for o in found)


class _Token:
    __slots__ = ("t", "start", "end")

    def __init__(self, t: str, start: int, end: int):
        self.t, self.start, self.end = t, start, end

    def text(self) -> str:
        return self.t

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


def spelled_numbers(mapped: Mapped) -> tuple[Mapped, frozenset[int]]:
    """Spelled-out numbers → digits ("sixty" → 60, "quatorze" → 14), by text2num.

    A text whose function words name its language is read in that language alone ("Are 3 doses
    enough?" holds no English number word, though Spanish reads "doses" as 2). Returns the rewrite
    and the positions (in it) of numbers that came from a lone "one"/"un"/"une": those count only
    when a unit follows ("one hour")."""
    text = mapped.text
    lang = guess_language(text)
    if lang is None:
        return mapped, frozenset()
    tokens = [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    try:
        if lang:
            found = find_numbers(tokens, lang, 0)
        else:  # no function word: the language whose number words cover most of the text, English first on ties
            found = max((find_numbers(tokens, other, 0) for other in LANGUAGE_WORDS), key=_covered)
            found = [o for o in found if not (o.end - o.start == 1 and tokens[o.start].t.lower() in _FALSE_FRIENDS)]
    except Exception:  # text2num is a native extension: never let it break extraction
        return mapped, frozenset()
    edits: list[tuple[int, int, str, bool]] = []
    for occ in found:
        if occ.is_ordinal or not re.fullmatch(r"\d+(?:\.\d+)?", occ.text):
            continue
        first, last = tokens[occ.start], tokens[occ.end - 1]
        single = occ.end - occ.start == 1
        if single and first.t.lower() in _UNIT_WORDS:
            continue  # "per second"
        if re.match(r"[ \u00a0]\d", text[last.end:last.end + 2]):
            continue  # "one 500 mg tablet": a count of the amount after it; as digits it would join it ("1 500")
        if single and first.t.lower() in _MONTH_WORDS and re.match(r"\.?\s*\d", text[first.end : first.end + 3]):
            continue  # "Sept. 3": the month, not French "seven"
        if single and occ.value >= 100 and occ.start > 0 and tokens[occ.start - 1].t[0].isdigit():
            continue  # "2.7 million": the scanner applies the scale; "99 cents" is no 99 100
        if single and occ.value in _SCALE_VALUES and occ.start > 0:
            prev = tokens[occ.start - 1]
            if edits and edits[-1][1] == prev.end and "." in edits[-1][2]:
                # "four point eight two billion": text2num yields 4.82 and 1000000000
                i, _, digits, _ = edits[-1]
                edits[-1] = (i, last.end, format_number(float(digits) * occ.value), False)
                continue
        edits.append((first.start, last.end, occ.text, single and occ.value == 1))
    if not edits:
        return mapped, frozenset()
    weak, shift = set(), 0
    for i, j, new, is_weak in edits:
        if is_weak:
            weak.add(i + shift)
        shift += len(new) - (j - i)
    return mapped.rewrite([(i, j, new) for i, j, new, _ in edits]), frozenset(weak)


# --- years of an era -------------------------------------------------------------

#: The year before each era's first (Japanese imperial eras, the Republic of China's calendar).
_ERA_BASE = {"令和": 2018, "平成": 1988, "昭和": 1925, "大正": 1911, "明治": 1867, "民国": 1911, "民國": 1911}
_ERA_YEAR = re.compile(f"({'|'.join(_ERA_BASE)})(元|\\d{{1,3}})年")


def era_years(mapped: Mapped) -> Mapped:
    """A year of an era as its Gregorian year: "令和5年" → "2023年", "平成元年" → "1989年",
    "民国38年" → "1949年" (after :func:`chinese_numerals`: "令和五年" too)."""
    edits = [(m.start(), m.end(), f"{_ERA_BASE[m[1]] + (1 if m[2] == '元' else int(m[2]))}年")
             for m in _ERA_YEAR.finditer(mapped.text)]
    return mapped.rewrite(edits)


def prepare(text: str) -> tuple[Mapped, frozenset[int]]:
    """The text values are read from: NFKC, then Chinese and spelled-out numerals as digits, and a
    year of an era as its Gregorian year."""
    mapped = era_years(chinese_numerals(nfkc(text)))
    return spelled_numbers(mapped)


# --- the numbers that tell two names apart ----------------------------------------

_ROMAN_WORD = re.compile(r"\b[IVXLCDM]+\b")


def number_marks(text: str) -> frozenset[int]:
    """The numbers a short answer is told apart by: digits, number words and ordinals in the
    text's language ("Second", "2nd", "deuxième"), and Roman numerals after a capitalised word
    ("Louis XIV"; "I" only as the last word, where it is no pronoun): "the First Carrow War" {1},
    "World War II" {2}; "CD Projekt" none."""
    lang = guess_language(text) or "en"
    try:
        digits = alpha2digit(text, lang, threshold=0)
    except Exception:  # text2num is a native extension: never let it break a comparison
        digits = text
    marks = {int(d) for d in re.findall(r"\d+", digits)}
    words = [w.strip(".,;:!?()") for w in text.split()]
    for k in range(1, len(words)):
        numeral, before = words[k], words[k - 1]
        if not _ROMAN_WORD.fullmatch(numeral) or not before[:1].isupper():
            continue
        if numeral == "I" and k < len(words) - 1:
            continue  # a pronoun
        try:
            marks.add(roman.fromRoman(numeral))
        except roman.InvalidRomanNumeralError:
            continue
    return frozenset(marks)
