"""The role a value plays and the role a question asks for.

- A rate: an amount per span of time ("4 g a day", "2 g daily", "8 g par jour", "每日4克",
  "1日4,000mg", "4 g in 24 hours"). :func:`rate_after` and :func:`rate_before` find the span an
  amount is per; :func:`asked_rate` whether the question asks for an amount per time
  ("the maximum daily dose", "par jour", "每天", "1日あたり"); :func:`named_span` the span a table's
  label gives its cells ("Price per month", "月額"), and :func:`as_rate` a cell's amount in that role.
- A count: a bare number before the noun it counts ("a five-step process", "the last two
  steps"). :func:`counted_word` is that noun; :func:`listed_things` the things a question asks
  to be listed ("what are the *steps*"), which a count of them does not answer unless the
  question asks how many (:func:`asks_count`).

Grammar words of each supported language (English, French, Chinese, Japanese), no topic words.
"""

from __future__ import annotations

import re
from dataclasses import replace

from diagnose.text._units import SECONDS_PER_YEAR, Unit, resolve_unit
from diagnose.text.literals import format_number
from diagnose.text.sentences import FUNCTION_WORDS, LATIN, fold
from diagnose.text.value_types import Value

__all__ = ["as_rate", "asked_rate", "asks_count", "counted_things", "counted_word", "counts", "is_whole", "listed_things", "named_span",
           "named_unit", "names_word", "per_time", "rate_after", "rate_before", "unit_word"]

_ADVERBS = {"daily": "day", "hourly": "hour", "weekly": "week", "monthly": "month", "yearly": "year",
            "annually": "year", "annual": "year", "quotidien": "day", "quotidienne": "day", "quotidiens": "day",
            "quotidiennes": "day", "hebdomadaire": "week", "mensuel": "month", "mensuelle": "month",
            "annuel": "year", "annuelle": "year", "月": "month"}  # 每月, 月額: 月 alone is a date's month elsewhere
_PER_WORD = r"(?i:a|an|per|each|every\s+single|par|pro)"
_SPAN_NEXT = "|".join([_PER_WORD, "in", "within", "over", *(w for w in _ADVERBS if w.isascii())])
_WHAT_OF = rf"(?:\s+(?i:of|de)\s+[{LATIN}][\w-]*(?:\s+[{LATIN}][\w-]*)?(?=\s+(?i:{_SPAN_NEXT})\b))?"
"""What an amount is of, between it and its span of time ("4,000 mg *of Velorin* a day", "4 g *de
sirop* par jour"): one or two words."""
_AFTER = re.compile(
    _WHAT_OF +
    rf"\s?(?:/\s?(?P<slash>[A-Za-z]+)\b|{_PER_WORD}\s+(?P<per>[A-Za-zé]+)\b"
    rf"|(?i:in|within|over|en|sur)\s+(?:(?i:any|a|one|une?)\s+)?(?P<n>\d+)[\s-]?(?P<span>[A-Za-z]+)\b"
    rf"|(?P<adv>[A-Za-z]+)\b)"
)
_CJK_TIME = "小时|小時|時間|天|日|周|週|月|年"
_BEFORE = re.compile(
    rf"(?P<each>每|毎|一|1)(?P<w>{_CJK_TIME})(?P<particle>あたり|当たり|に|内|均)?\D{{0,6}}$"
    rf"|(?P<n>\d+)(?P<span>{_CJK_TIME})(?:以内|内|之内)\D{{0,6}}$"
    rf"|(?P<amount>[年月日天周週])(?:額|额|费|費)\D{{0,6}}$"  # 月額2,900円, 年费299元
)
_LONE_SPAN = "年月日"
_WORD_BEFORE = re.compile(r"[\u4e00-\u9fff\d]")
"""A character that makes a lone span part of a word or a date ("今月", "3月"): then it is no rate."""
_ASKED = re.compile(
    rf"\b(?P<pw>{_PER_WORD})\s+(?P<per>[A-Za-zé]+)\b(?=(?:\s+(?P<next>[A-Za-z]+))?)|(?P<adv>\b[A-Za-z]+\b)|(?:每|毎|一|1|日)(?P<w>{_CJK_TIME})(?:あたり|当たり|に|均)?"
    rf"|(?P<amount>[年月日天周週])(?:額|额|费|費)"  # 月額, 年费: the amount per month, per year
)


def _time(word: str, n: float = 1.0) -> Unit | None:
    """The span of ``n`` ``word`` (a time unit), or None when ``word`` names no time."""
    word = _ADVERBS.get(word.lower(), word)
    unit = resolve_unit(word) or resolve_unit(word.lower())
    if unit is None or unit.dimension != "[time]" or n <= 0:
        return None
    return Unit(unit.label, unit.dimension, unit.factor * n)


def per_time(unit: Unit, span: Unit) -> Unit | None:
    """``unit`` per ``span`` ("g" per day); None for what is no amount per time (a time, a rate,
    a temperature)."""
    if unit.offset or "/" in unit.dimension or unit.dimension == "[time]":
        return None
    return Unit(f"{unit.label}/{span.label}", f"{unit.dimension} / [time]", unit.factor / span.factor)


def rate_after(text: str, end: int, adverb_only: bool = False) -> tuple[Unit, int] | None:
    """The span of time the amount ending at ``end`` is per, from the words after it, and where
    they end: "a day", "/day", "daily", "par jour", "in 24 hours" (None when they name none);
    with ``adverb_only``, only an adverb ("daily", "monthly", "annual")."""
    m = _AFTER.match(text, end)
    if m is None or adverb_only and m["adv"] is None:
        return None
    if m["adv"] is not None:
        span = _time(m["adv"]) if m["adv"].lower() in _ADVERBS else None
    elif m["n"] is not None:
        span = _time(m["span"], float(m["n"]))
    else:
        span = _time(m["slash"] or m["per"])
    return (span, m.end()) if span is not None else None


def rate_before(text: str, start: int, bare_one: bool = True) -> Unit | None:
    """The span of time an amount starting at ``start`` is per, from a CJK qualifier before it
    in its clause ("每日最多4克", "1日あたり4,000mg", "24小时内4克", "月額2,900円", "月2,980円"). Without
    ``bare_one``, "一"/"1" and a span with no particle after it is no qualifier: before money,
    "1月" is January more often than "a month"."""
    if start >= 1 and text[start - 1] in _LONE_SPAN and (start < 2 or not _WORD_BEFORE.match(text[start - 2])):
        return _time(text[start - 1])  # "は月2,980円": a span opening its phrase, right before the amount
    m = _BEFORE.search(text[max(0, start - 12):start])
    if m is None or re.search(r"[,，、。;；]", m.group()):
        return None
    if m["w"]:
        return _time(m["w"]) if bare_one or m["each"] in "每毎" or m["particle"] else None
    return _time(m["amount"]) if m["amount"] else _time(m["span"], float(m["n"]))


def asked_rate(question: str) -> bool:
    """Whether the question asks for an amount per span of time ("the maximum *daily* dose",
    "how much *per day*", "par jour", "每天最多", "1日あたり"); "how many hours a day" asks one too.
    Give it the question's words outside its names (:func:`diagnose.text.questions.predicate_text`):
    "Where is The *Daily* Citizen published?" asks for a place."""
    return _worded_span(question) is not None


def named_span(label: str) -> Unit | None:
    """The span of time a table's row or column ``label`` says its amounts are per: "Price *per
    month*", "*Daily* dose", "Prix *par mois*", "*每月*价格", "*月額*料金", "Fee (*/mo*)"; None when it
    names none."""
    slashed = _SLASHED.search(label)
    return _worded_span(label) or (_time(slashed[1]) if slashed else None)


def _worded_span(text: str) -> Unit | None:
    """The span of time ``text`` says an amount is per, in words (:func:`asked_rate`, :func:`named_span`)."""
    for m in _ASKED.finditer(text):
        if m["per"] and m["pw"].lower() in ("a", "an") and m["next"] and fold(m["next"]) not in FUNCTION_WORDS:
            continue  # "a day pass": a noun's modifier, no rate
        word = m["per"] or m["w"] or m["amount"] or (m["adv"] if m["adv"] and m["adv"].lower() in _ADVERBS else None)
        if word and (span := _time(word)) is not None:
            return span
    return None


_SLASHED = re.compile(r"/\s?([A-Za-z]+)\b")
_PER_UNIT = re.compile(r"(?:\b(?i:per|par|por|pro)\s+|/\s?)([A-Za-z]+)\b")


def named_unit(label: str) -> str | None:
    """The unit that is no span of time a table's ``label`` says its prices are per ("Price *per
    user* per month", "€ / *seat*"), as :func:`unit_word` writes it; None when it names none."""
    for m in _PER_UNIT.finditer(label):
        if _time(m[1]) is None:
            return unit_word(m[1])
    return None


def unit_word(word: str) -> str:
    """A unit a price is per, as its key writes it: lower-case, singular ("Users" → "user")."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def as_rate(v: Value, span: Unit) -> Value:
    """``v`` as an amount per ``span`` ("$19" in a "per month" row is $228 a year, as "$19 a month"
    reads; "2 g" in a "per day" column is 2 g/day); unchanged when it is no amount of money or of a
    measure, or one already per something."""
    if v.magnitude is None or "/" in v.dimension and not (v.kind == "money" and v.dimension.count("/") == 1
                                                          and not v.dimension.endswith("/year")):
        return v
    if v.kind == "money":  # a price per a unit stays per it: "$12" under "per user per month" is USD/user/year
        dim, amount = f"{v.dimension}/year", v.magnitude * SECONDS_PER_YEAR / span.factor
        return replace(v, key=f"money:{dim}:{format_number(amount)}", dimension=dim, magnitude=amount)
    label = v.key.split(":")[1]  # the base unit the magnitude is in ("kilogram")
    rate = per_time(Unit(label, v.dimension, 1.0), span) if v.kind == "quantity" else None
    if rate is None:
        return v
    amount = v.magnitude * rate.factor
    return replace(v, key=f"quantity:{label}/second:{format_number(amount)}", dimension=rate.dimension,
                   magnitude=amount, per=span.factor)


_ASKS_COUNT = re.compile(
    r"\bhow\s+many\b|\b(?:number|count)\s+of\b|\bcombien\s+d|\bnombre\s+(?:de|d')|\bpopulation\b|\binhabitants\b"
    r"|\bhabitants\b|\b(?:cuánt[oa]s|quant[oa]s|quant[ie]|wie\s+viele|hoeveel)\b"
    r"|人口|人数|(?:几|多少)[个個名位家所项項次件台]|何[個人名回件つ本台枚]|いくつ", re.IGNORECASE)


def asks_count(question: str) -> bool:
    """Whether the question asks how many ("how many", "the number of", "combien de", "the
    population of", "cuántos", "wie viele", "几个", "多少名", "何人", "いくつ"). Not "combien coûte", nor "多少" alone: they
    ask any amount ("续航时间是多少")."""
    return _ASKS_COUNT.search(question) is not None


_COUNT_OF = re.compile(
    r"\b(?:how\s+many|(?:number|count)\s+of|combien\s+(?:de\s+|d')|nombre\s+(?:de\s+|d')|cuánt[oa]s|quant[oa]s"
    r"|quant[ie]|wie\s+viele|hoeveel)\s*(?!temps\b)(?P<words>[^\W\d_]+(?:[\s-]+[^\W\d_]+)?)"
    r"|(?:几|多少)[个個名位家所项項次件台](?P<cjk>[\u4e00-\u9fff]{2})", re.IGNORECASE)


_POPULATION = re.compile(r"\b(?:population|popolazione|población|população|bevölkerung|einwohnerzahl|bevolking)\b|人口",
                         re.IGNORECASE)
_PEOPLE = ("peopl", "perso", "inhab", "resid", "citiz", "habit", "einwo", "abita", "inwon", "居民")
"""The words a population is counted in, as content tokens: people, persons, inhabitants, residents,
citizens; habitants, Einwohner, abitanti, habitantes, inwoners, 居民."""


def counted_things(question: str) -> list[str]:
    """What a question asks to count, as content tokens: "how many *people* died" → ["peopl"],
    "combien d'*employés*", "cuántos *habitantes*", "几名*员工*", and a population's people ("the
    population of" → :data:`_PEOPLE`); [] when it asks no count of a named thing. Tokens are stems (:func:`diagnose.text.sentences.content_tokens`), so compare
    them with :func:`names_word`."""
    m = _COUNT_OF.search(question)
    if m is None:
        return list(_PEOPLE) if _POPULATION.search(question) else []
    if m["cjk"]:
        return [m["cjk"]]
    return [fold(w)[:5] for w in re.split(r"[\s-]+", m["words"]) if fold(w) not in FUNCTION_WORDS]


_COUNTED = re.compile(rf"[\s-]?(?:(?P<latin>[{LATIN}]{{3,}})|(?:[个個项項つ]の?|の)?(?P<cjk>[\u4e00-\u9fff\u30a0-\u30ff]{{2}}))")


_PART_OF = r"(?i:(?:out\s+)?of(?:\s+the|\s+its|\s+their)?|sur|des|de\s+l[oa]s|von|der|dei|degli|delle|van\s+de)"
"""Between a part and its whole ("157 *of the* 338 seats", "12 *out of* 40 members", « 157 *sur* 338
sièges », "157 *der* 338 Sitze")."""
_OF_WHOLE = re.compile(rf"\s+{_PART_OF}\s+\d[\d,.\u202f ]*(?=\D)")
_WHOLE_AFTER_PART = re.compile(rf"\d\s+{_PART_OF}\s+$")


def counted_word(text: str, end: int) -> str:
    """The noun right after a bare number ending at ``end`` ("five-*step*", "two *steps*",
    "五个*步骤*", "5つの*ステップ*"), or after the whole it is a part of ("157 of the 338 *seats*"),
    folded; "" when none follows."""
    whole = _OF_WHOLE.match(text, end)
    m = _COUNTED.match(text, whole.end() if whole else end)
    if m is None:
        return ""
    return fold(m["latin"]) if m["latin"] else m["cjk"]


_LISTED = re.compile(
    r"^\W*(?:what|which|quels|quelles)\s+(?:are|were|sont|étaient)\s+(?:the\s+|les\s+)?(?P<latin>[^\W\d_]+)"
    r"|(?P<cjk>[\u4e00-\u9fff\u30a0-\u30ff]{2})(?:有哪些|是哪些|是什么|は何|はどれ|を教えて)",
    re.IGNORECASE,
)


def listed_things(question: str) -> list[str]:
    """The things a question asks to be listed, as content tokens: "What are the *steps*…",
    "Quelles sont les *étapes*…", "…的*步骤*是什么", "…*手順*は何ですか"; [] for any other question."""
    m = _LISTED.search(question)
    if m is None:
        return []
    return [fold(m["latin"])[:5]] if m["latin"] else [m["cjk"]]


def names_word(tokens: list[str], word: str) -> bool:
    """Whether ``word`` (from :func:`counted_word`) is one of the question's content ``tokens``
    (:func:`diagnose.text.sentences.content_tokens`), plural or not ("step" and "steps")."""
    if not word:
        return False
    if not word.isascii():
        return word in tokens
    stem = word[:5].rstrip("s")
    return len(stem) >= 3 and any(t.rstrip("s") == stem for t in tokens)


def counts(v: Value, text: str, counted: list[str]) -> bool:
    """Whether ``v`` (in ``text``) is a bare number of the things the question asks to count
    (``counted``, :func:`counted_things`): "killed about 12,000 *people*"."""
    return (v.kind == "number" and names_word(counted, counted_word(text, v.end))
            and not is_whole(text, v))


def is_whole(text: str, v: Value) -> bool:
    """Whether ``v`` is the whole that a number before it is a part of ("157 of *the 338* seats"):
    a total, which answers a count only when the question asks for one."""
    return _WHOLE_AFTER_PART.search(text, max(0, v.start - 30), v.start) is not None

