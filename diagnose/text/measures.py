"""A number and what qualifies it: a literal with its currency, scale ("2.7 million", "3万"),
percent sign, unit (resolved by :mod:`._units`) or money rate ("per year")."""

from __future__ import annotations

import re
from dataclasses import dataclass


from diagnose.text._units import ALIASES, CODES, SECONDS_PER_YEAR, SYMBOLS, WORDS, Unit, resolve_unit
from diagnose.text.sentences import HAN, KANA, LATIN as _LATIN_LETTERS

from diagnose.text.literals import parse_literal
from diagnose.text.roles import named_span, per_time, rate_after, rate_before, unit_word


# --- a number and what qualifies it: currency, scale, percent, unit, rate -----------------------

_RESTATED = re.compile(r"\s?[(（]\s?(?P<n>\d+(?:[.,]\d+)?)\s?[)）]")
_SCALE = re.compile(
    r"\s?(?P<w>(?i:thousand|mil\s+mill(?:ones|ón|on)|mil\s+milh(?:ões|ão)|millions?|millionen|milliarden?|millones|millón"
    r"|milion[ei]|miliard[oi]|milh(?:ões|ão)|bilh(?:ões|ão)|miljoen(?:en)?|miljard(?:en)?|billions?|trillions?"
    r"|milliards?|lakhs?|crores?|mn|bn|mio|mrd|tn))(?![A-Za-z])"
    r"|(?P<g>[kKMBm])(?![A-Za-z0-9])|\s?(?P<c>万亿|千万|百万|十万|万|萬|亿|億|千|兆)"
)
_SCALES = {"thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
           "trillion": 1e12, "trillions": 1e12, "milliard": 1e9, "milliards": 1e9, "mn": 1e6,
           "lakh": 1e5, "lakhs": 1e5, "crore": 1e7, "crores": 1e7,
           "millionen": 1e6, "milliarde": 1e9, "milliarden": 1e9, "millón": 1e6, "millon": 1e6, "millones": 1e6,
           "milione": 1e6, "milioni": 1e6, "miliardo": 1e9, "miliardi": 1e9, "milhão": 1e6, "milhões": 1e6,
           "bilhão": 1e9, "bilhões": 1e9, "miljoen": 1e6, "miljoenen": 1e6, "miljard": 1e9, "miljarden": 1e9,
           "mil millones": 1e9, "mil millón": 1e9, "mil millon": 1e9, "mil milhões": 1e9, "mil milhão": 1e9,
           "bn": 1e9, "mio": 1e6, "mrd": 1e9, "tn": 1e12, "k": 1e3, "K": 1e3, "M": 1e6, "m": 1e6, "B": 1e9,
           "万亿": 1e12, "千万": 1e7, "百万": 1e6, "十万": 1e5, "万": 1e4, "萬": 1e4, "亿": 1e8,
           "億": 1e8, "千": 1e3, "兆": 1e12}
_SCALE_OF = re.compile(r"\s+(?i:de|d['’]|di)\s?")
#: After a glued "m", a plural noun (or "people") says what is counted in millions: "2.3m users", "5m
#: tonnes", "1m barrels"; not "a 10m wall", "5m high", "30m across" nor a race's "the 400m hurdles".
_COUNTED_AFTER_M = re.compile(r"[^\S\n]+(?:people|(?!across\b|hurdles\b)[a-z]{2,}s)\b")


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
#: A unit token on the number's line; an exponent may stand apart when the superscript was lost
#: ("165 km 2 (64 sq mi)").
_UNIT_TOKEN = re.compile(
    r"[^\S\n]?(?P<u>(?:°\s?[CF](?![A-Za-z])|[A-Za-zµμΩ][A-Za-zµμΩ]*(?:[23²³](?!\d)|\s[23](?=\s?[(\[),;.]|\s*$))?)"
    r"(?P<den>\s?/\s?[A-Za-zµμΩ]+[23²³]?|\s+per\s+[A-Za-z]+)?)"
)
_ACDC = re.compile(r"\s?(?:AC|DC|ac|dc)(?![A-Za-z])")
_PER = re.compile(r"\s?(?:/\s?|(?i:per|a|an|each|par|pro|por)\s+|每)(?P<w>[A-Za-z]+|[年月天日周时])")
_AND_PER = re.compile(r"\s+(?i:and|et|y|und)\s+(?i:per|par|por|pro)\s+(?P<w>[A-Za-z]+)")
_CJK_PER = re.compile(r"\s?/\s?(小时|小時|時間|分钟|分鐘|秒|天|日|周|週|年|月|个月)")
_PER_CJK = {"年": "year", "月": "month", "天": "day", "日": "day", "周": "week", "时": "hour"}
_ORDINAL = re.compile(r"(?:st|nd|rd|th|er|ère|eme|ème|e|º|ª)(?![A-Za-z])")
_DECADE = re.compile(r"'?s(?![A-Za-z])")
LATIN = re.compile(f"[{_LATIN_LETTERS}]")


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
    per: float = 0.0  # an amount per span of time: the span in seconds ("4 g a day": 86400)

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


#: Unit aliases of several words, longest first (a single token would stop at "degrees", or at
#: the "N" of "N·m"), also as a compound adjective ("a 30-business-day review").
_MULTIWORD_FORMS = {k.lower(): k for k in ALIASES if re.search(r"[A-Za-z][\s·.-]+[A-Za-z]", k)}
_MULTIWORD_UNIT = re.compile(
    r"(?:\s*|-)(" + "|".join(re.escape(k) for k in sorted(_MULTIWORD_FORMS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)


_NUMBER_PREFIXES = frozenset({"mid", "mi", "pre", "post", "early", "late"})


def _names_before(m: str, hyphen: int) -> bool:
    """Whether the word that ends at ``hyphen`` holds a letter, so that a number after the hyphen
    ends a name ("COVID-19", "A320-200", "batch-vm-03"), however long the word, unless the word is a
    prefix of the number ("mid-1990s", "pre-2008")."""
    start = hyphen
    while start > 0 and (m[start - 1].isalnum() or m[start - 1] == "_"):
        start -= 1
    word = m[start:hyphen]
    return LATIN.search(word) is not None and word.lower() not in _NUMBER_PREFIXES


def read_measure(m: str, lit: re.Match, yen: str) -> Measure | None:
    """The number matched by :data:`LITERAL` at ``lit`` in ``m``, with what qualifies it
    (currency before or after, scale, percent, unit, money rate); ``yen`` is what "¥" means."""
    s = lit.start()
    if s >= 2 and m[s - 1] == "-" and _names_before(m, s - 1):
        return None  # "COVID-19", "ISO-8601", an aircraft's "A310-324"
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
        of = _SCALE_OF.match(m, scale.end()) if scale["w"] else None  # "3 millions d'euros", "2 milioni di euro"
        after = _CUR_AFTER.match(m, of.end() if of else scale.end())
        money_after = bool(after and _currency_code(after, yen))
        # "B" and "m" scale only money ("$4B", "£2.3m") and "m" things counted ("2.3m users"); "5m" alone is
        # five metres
        if word not in ("B", "m") or meas.currency or money_after \
                or word == "m" and _COUNTED_AFTER_M.match(m, scale.end()):
            meas.value *= _SCALES.get(word) or _SCALES.get(re.sub(r"\s+", " ", word.lower()), 1.0)
            meas.end, meas.plain = of.end() if of and money_after else scale.end(), False
            if m.startswith(".", meas.end) and (dotted := _CUR_AFTER.match(m, meas.end + 1)) \
                    and _currency_code(dotted, yen):
                meas.end += 1  # an abbreviated scale's dot before the currency: "2,5 Mrd. Euro"
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
        return _per_time(m, meas)
    multi = _MULTIWORD_UNIT.match(m, meas.end)
    if multi and (unit := resolve_unit(_MULTIWORD_FORMS[multi.group(1).lower()])):
        meas.unit, meas.end = unit, multi.end()  # "100 degrees Celsius", "600 requests per minute"
        return _per_time(m, meas)
    token = _UNIT_TOKEN.match(m, meas.end) or _hyphenated_unit(m, meas.end)
    if token:
        unit, end = resolve_unit(token["u"]), token.end()
        if unit is None and token["den"]:
            unit, end = resolve_unit(token["u"][: token.start("den") - token.start("u")]), token.start("den")
        if unit is not None:
            meas.unit, meas.end = unit, end
            if unit.label == "volt" and (acdc := _ACDC.match(m, end)):
                meas.end = acdc.end()
            if token["den"] and end == token.end() and (span := named_span(token["den"])) is not None:
                meas.per = span.factor  # "3,000 mg/day", "3,000 mg per day": per day, as "3,000 mg a day" is
            return _per_time(m, meas)
    return meas


def _per_time(m: str, meas: Measure) -> Measure:
    """An amount per span of time ("4 g a day", "8 g par jour", "每日4克", "4 g in 24 hours") is a rate."""
    after = rate_after(m, meas.end)
    span = after[0] if after else rate_before(m, meas.start)
    rate = per_time(meas.unit, span) if span is not None else None
    if rate is not None:
        meas.unit, meas.end, meas.per = rate, after[1] if after else meas.end, span.factor
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
        after = rate_after(m, meas.end, adverb_only=True)  # "$9 monthly", "EUR 40 daily"; not "$120 in 7 days"
        if after is not None:
            meas.rate, meas.rate_factor, meas.end = "year", SECONDS_PER_YEAR / after[0].factor, after[1]
        elif (span := rate_before(m, meas.start, bare_one=False)) is not None:  # "每月29美元", "月額2,900円"
            meas.rate, meas.rate_factor = "year", SECONDS_PER_YEAR / span.factor
        return
    word = per["w"]
    unit = resolve_unit(_PER_CJK.get(word, word))
    if unit is not None and unit.dimension == "[time]":
        meas.rate, meas.rate_factor = "year", SECONDS_PER_YEAR / unit.factor
    elif (per.group().strip()[:1] in "/p") and word.isascii() and len(word) > 1:
        meas.rate = unit_word(word)
        then = _PER.match(m, per.end()) or _AND_PER.match(m, per.end())
        span = resolve_unit(then["w"]) if then else None
        if span is not None and span.dimension == "[time]":  # "$12 per user per month", "€8 par utilisateur et par mois"
            meas.rate, meas.rate_factor = f"{meas.rate}/year", SECONDS_PER_YEAR / span.factor
            per = then  # the rate ends after its span
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
