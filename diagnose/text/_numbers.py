"""Reading numbers for :mod:`diagnose.text.values`.

* :class:`Mapped`: a rewritten copy of a text that remembers, for every
  character, which span of the original it came from, so values found in the
  rewritten text report offsets into the input.
* :func:`prepare`: NFKC, Chinese numerals → digits (cn2an), spelled-out numbers
  → digits (text2num), each as a :class:`Mapped` rewrite.
* :func:`parse_literal`: the value of a digit literal ("4,411", "49,99",
  "1.234.567"), by price-parser's separator rules.
* :func:`read_measure`: a literal with its currency, scale ("2.7 million", "3万"),
  percent sign, unit (resolved by :mod:`._units`) or money rate ("per year").
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass
from functools import lru_cache

import cn2an
from price_parser.parser import parse_number
from text_to_num import find_numbers

from diagnose.text._units import ALIASES, CODES, SYMBOLS, WORDS, Unit, resolve_unit
from diagnose.text.sentences import HAN, KANA


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

#: A few function words per text2num language, to pick the language of a text.
_STOPWORDS = {
    "en": set("the and of to is in for with are was that this from by on at".split()),
    "fr": set("le la les des du de est et une un pour dans avec sont au aux sur par qui il elle nous vous ce cette ne pas".split()),
    "es": set("el los las del es y una para con por que se al como más".split()),
    "de": set("der die das und ist mit für ein eine den dem nicht von zu auf im".split()),
    "it": set("il gli della di che è per con non una sono nel alla".split()),
    "pt": set("o os da do das dos e é para com não uma em no na".split()),
    "nl": set("de het een en van is voor met niet op zijn dat".split()),
}
_WORD = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)*|[^\w\s]")
_SCALE_VALUES = {1e3, 1e6, 1e9, 1e12}
_UNIT_WORDS = frozenset({"second", "seconde", "segundo", "secondo", "sekunde"})
_MONTH_WORDS = frozenset({"sept", "dez"})  # number words that are also month abbreviations
#: Number words of one language that are everyday words of another ("due" to, an "elf"):
#: never read as numbers when the language was only guessed from the number words.
_FALSE_FRIENDS = frozenset({"due", "elf", "sei", "tree", "nove", "otto", "tien"})


def _covered(found) -> int:
    return sum(o.end - o.start for o in found)


def guess_language(text: str) -> str | None:
    """The text2num language whose function words the text uses most (None without Latin words)."""
    words = [w.lower() for w in _WORD.findall(text) if w.isascii() or w[0] < "\u0250"]
    if not words:
        return None
    best, score = None, 0
    for lang, stop in _STOPWORDS.items():
        hits = sum(w in stop for w in words)
        if hits > score:
            best, score = lang, hits
    return best or ""  # "": no function word, let the numbers decide ("quatorze jours")


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

    Returns the rewrite and the positions (in it) of numbers that came from a
    lone "one"/"un"/"une": those count only when a unit follows ("one hour")."""
    text = mapped.text
    lang = guess_language(text)
    if lang is None:
        return mapped, frozenset()
    tokens = [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    try:
        found = find_numbers(tokens, lang, 0) if lang else []
        if not found:  # the language whose number words cover most of the text, English first on ties
            found = max((find_numbers(tokens, other, 0) for other in _STOPWORDS if other != lang), key=_covered)
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
        if single and first.t.lower() in _MONTH_WORDS and re.match(r"\.?\s*\d", text[first.end : first.end + 3]):
            continue  # "Sept. 3": the month, not French "seven"
        if single and occ.value in _SCALE_VALUES and occ.start > 0:
            prev = tokens[occ.start - 1]
            if prev.t[0].isdigit():
                continue  # "2.7 million": the scanner applies the scale
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


def prepare(text: str) -> tuple[Mapped, frozenset[int]]:
    """The text values are read from: NFKC, then Chinese and spelled-out numerals as digits."""
    mapped = chinese_numerals(nfkc(text))
    return spelled_numbers(mapped)


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


# --- a number and what qualifies it: currency, scale, percent, unit, rate -----------------------

_RESTATED = re.compile(r"\s?[(（]\s?(?P<n>\d+(?:[.,]\d+)?)\s?[)）]")
_SCALE = re.compile(
    r"\s?(?P<w>(?i:thousand|millions?|billions?|trillions?|milliards?|mn|bn|mio|mrd|tn))(?![A-Za-z])"
    r"|(?P<g>[kKMB])(?![A-Za-z0-9])|\s?(?P<c>万亿|千万|百万|十万|万|萬|亿|億|千|兆)"
)
_SCALES = {"thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
           "trillion": 1e12, "trillions": 1e12, "milliard": 1e9, "milliards": 1e9, "mn": 1e6,
           "bn": 1e9, "mio": 1e6, "mrd": 1e9, "tn": 1e12, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9,
           "万亿": 1e12, "千万": 1e7, "百万": 1e6, "十万": 1e5, "万": 1e4, "萬": 1e4, "亿": 1e8,
           "億": 1e8, "千": 1e3, "兆": 1e12}
_PERCENT = re.compile(
    r"\s?(?:%|‰|(?i:percent|per\s?cent|pour\s?cent|por\s?ciento|por\s?cento|prozent)(?![A-Za-z])|パーセント)"
)


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_SYMBOL_ALT = _alternation(SYMBOLS)
_CUR_BEFORE = re.compile(rf"(?:(?P<sym>{_SYMBOL_ALT})|(?<![A-Za-z])(?P<code>[A-Z]{{3}}))\s?$")
CURRENCY_AT = re.compile(rf"(?:{_SYMBOL_ALT}|[A-Z]{{3}})\s?")
_CUR_AFTER = re.compile(
    rf"\s?(?:(?P<code>[A-Z]{{3}})(?![A-Za-z])|(?P<sym>{_SYMBOL_ALT})"
    rf"|(?P<word>(?i:{_alternation(w for w in WORDS if w.isascii())})(?![A-Za-z])|{_alternation(w for w in WORDS if not w.isascii())}))"
)
_CJK_UNITS = re.compile(r"\s?(" + _alternation(w for w in ALIASES if not w.isascii() and not w.startswith("°")) + ")")
_UNIT_TOKEN = re.compile(
    r"\s?(?P<u>(?:°\s?[CF](?![A-Za-z])|[A-Za-zµμΩ][A-Za-zµμΩ]*[23²³]?)"
    r"(?P<den>\s?/\s?[A-Za-zµμΩ]+[23²³]?|\s+per\s+[A-Za-z]+)?)"
)
_ACDC = re.compile(r"\s?(?:AC|DC|ac|dc)(?![A-Za-z])")
_PER = re.compile(r"\s?(?:/\s?|(?i:per|a|an|each|par|pro|por)\s+|每)(?P<w>[A-Za-z]+|[年月天日周时])")
_CJK_PER = re.compile(r"\s?/\s?(小时|小時|時間|分钟|分鐘|秒|天|日|周|週|年|月|个月)")
_PER_CJK = {"年": "year", "月": "month", "天": "day", "日": "day", "周": "week", "时": "hour"}
_ORDINAL = re.compile(r"(?:st|nd|rd|th|er|ère|eme|ème|e|º|ª)(?![A-Za-z])")
_DECADE = re.compile(r"'?s(?![A-Za-z])")
LATIN = re.compile(r"[A-Za-zÀ-ɏ]")
_SECONDS_PER_YEAR = 31557600.0


@dataclass
class Measure:
    """A number as read by :func:`read_measure`; values.py turns it into a value or a range end."""

    start: int
    end: int
    value: float
    digits: str  # the literal as written
    plain: bool  # no sign, separator, decimal or scale
    currency: str = ""
    unit: Unit | None = None
    percent: bool = False
    rate: str = ""  # money per: "year", "user"
    rate_factor: float = 1.0
    word: str = ""  # "ordinal" ("5th"), "decade" ("1990s"): glued suffixes that make it no quantity

    @property
    def bare(self) -> bool:
        return not (self.currency or self.unit or self.percent)


def _currency_code(found: re.Match, yen: str) -> str:
    if found.group("code"):
        code = found.group("code")
        return "CNY" if code == "RMB" else code if code in CODES else ""
    if found.groupdict().get("word"):
        return WORDS.get(found.group("word").lower(), WORDS.get(found.group("word"), ""))
    sym = SYMBOLS[found.group("sym")]
    return yen if sym == "¥" else sym


#: Unit aliases of several words, longest first (a single token would stop at "degrees").
_MULTIWORD_FORMS = {k.lower(): k for k in ALIASES if " " in k}
_MULTIWORD_UNIT = re.compile(
    r"\s*(" + "|".join(re.escape(k) for k in sorted(_MULTIWORD_FORMS, key=len, reverse=True)) + r")(?![\w])",
    re.IGNORECASE,
)


def read_measure(m: str, lit: re.Match, yen: str) -> Measure | None:
    """The number matched by :data:`LITERAL` at ``lit`` in ``m``, with what qualifies it
    (currency before or after, scale, percent, unit, money rate); ``yen`` is what "¥" means."""
    s = lit.start()
    if s >= 2 and m[s - 1] == "-" and LATIN.match(m[s - 2]):
        return None  # "COVID-19", "ISO-8601"
    digits = lit.group("num")
    value = parse_literal(digits)
    if value is None:
        return None
    sign = lit.group("sign")
    value = -value if sign else value
    meas = Measure(s, lit.end(), value, digits, plain=not sign and digits.isdigit())
    restated = _RESTATED.match(m, meas.end)
    if restated and parse_literal(restated["n"]) == abs(value):
        meas.end = restated.end()  # "sixty (60) minutes"
    before = _CUR_BEFORE.search(m, max(0, s - 8), s)
    if before and (code := _currency_code(before, yen)):
        meas.currency, meas.start = code, before.start()
    scale = _SCALE.match(m, meas.end)
    if scale:
        word = scale["w"] or scale["g"] or scale["c"]
        after = _CUR_AFTER.match(m, scale.end())
        if word != "B" or meas.currency or (after and _currency_code(after, yen)):
            meas.value *= _SCALES.get(word, _SCALES.get(word.lower(), 1.0))
            meas.end, meas.plain = scale.end(), False
    if meas.plain and (glued := _ORDINAL.match(m, meas.end)):
        meas.word, meas.end = "ordinal", glued.end()
        return meas
    if meas.plain and len(digits) == 4 and digits.endswith("0") and (decade := _DECADE.match(m, meas.end)):
        meas.word, meas.end = "decade", decade.end()
        return meas
    if _PERCENT.match(m, meas.end) and not meas.currency:
        meas.percent, meas.end = True, _PERCENT.match(m, meas.end).end()
        return meas
    after = _CUR_AFTER.match(m, meas.end)
    if after and (code := _currency_code(after, yen)) and (not meas.currency or code == meas.currency):
        meas.currency, meas.end = code, after.end()
    if meas.currency:
        _money_rate(m, meas)
        return meas
    cjk = _CJK_UNITS.match(m, meas.end)
    if cjk and (unit := resolve_unit(cjk.group(1))):
        meas.unit, meas.end = unit, cjk.end()
        per = _CJK_PER.match(m, cjk.end())
        if per and (rate := resolve_unit(f"{cjk.group(1)}/{per.group(1)}")):
            meas.unit, meas.end = rate, per.end()  # "350公里/小时"
        return meas
    multi = _MULTIWORD_UNIT.match(m, meas.end)
    if multi and (unit := resolve_unit(_MULTIWORD_FORMS[multi.group(1).lower()])):
        meas.unit, meas.end = unit, multi.end()  # "100 degrees Celsius", "600 requests per minute"
        return meas
    token = _UNIT_TOKEN.match(m, meas.end) or _hyphenated_unit(m, meas.end)
    if token:
        unit, end = resolve_unit(token["u"]), token.end()
        if unit is None and token["den"]:
            unit, end = resolve_unit(token["u"][: token.start("den") - token.start("u")]), token.start("den")
        if unit is not None:
            meas.unit, meas.end = unit, end
            if unit.label == "volt" and (acdc := _ACDC.match(m, end)):
                meas.end = acdc.end()
    return meas


#: A compound adjective's measure word: "16-week", "two-year", "30-day" (lowercase, 3+ letters,
#: so "10-K" or "3-D" stay plain numbers).
_HYPHEN_WORD = re.compile(r"-(?=[a-z]{3,}(?![A-Za-z0-9-]))")


def _hyphenated_unit(m: str, end: int) -> re.Match | None:
    """The unit token after a hyphen glued to the number, as :data:`_UNIT_TOKEN` would match it."""
    hyphen = _HYPHEN_WORD.match(m, end)
    return _UNIT_TOKEN.match(m, hyphen.end()) if hyphen else None


def _money_rate(m: str, meas: Measure) -> None:
    per = _PER.match(m, meas.end)
    if not per:
        return
    word = per["w"]
    unit = resolve_unit(_PER_CJK.get(word, word))
    if unit is not None and unit.dimension == "[time]":
        meas.rate, meas.rate_factor = "year", _SECONDS_PER_YEAR / unit.factor
    elif (per.group().strip()[:1] in "/p") and word.isascii() and len(word) > 1:
        word = word.lower()
        meas.rate = word[:-1] if len(word) > 3 and word.endswith("s") else word
    else:
        return
    meas.end = per.end()




def yen_code(text: str) -> str:
    """What "¥" means here: yen, unless the text reads as Chinese."""
    if KANA.search(text) or re.search(r"円|日元|(?i:yen|JPY)", text):
        return "JPY"
    if HAN.search(text) or re.search(r"元|人民币|(?i:yuan|RMB|CNY)", text):
        return "CNY"
    return "JPY"
