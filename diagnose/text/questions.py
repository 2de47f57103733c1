"""What shape of answer a question asks for: yes/no or open.

Grammar only, no topic words: auxiliary-first questions in English,
``est-ce que`` and inversion in French, 吗 / A-not-A / 是否 in Chinese, か
endings in Japanese; a question word or an "X or Y" alternative makes it open.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from diagnose.text.roles import asked_rate, asks_count
from diagnose.text.sentences import FUNCTION_WORDS, HAN, KANA, LATIN_UPPER as _UPPER
from diagnose.text.sentences import LATIN as _LATIN

if TYPE_CHECKING:
    from diagnose.text.value_types import Value

# --------------------------------------------------------------------------- #
# Is the question answered by yes or no?
# --------------------------------------------------------------------------- #

_EN_AUX = frozenset(
    """
    is are was were am do does did can could will would shall should may might must
    has have had need ought
    isn't aren't wasn't weren't ain't don't doesn't didn't can't cannot couldn't won't
    wouldn't shan't shouldn't mayn't mightn't mustn't hasn't haven't hadn't needn't
    isnt arent wasnt werent dont doesnt didnt cant couldnt wouldnt shouldnt hasnt havent hadnt
    """.split()
)
_EN_WH = frozenset("what when who whom whose how which where why whatever whichever".split())
_EN_DISCOURSE = frozenset("and but so then also now ok okay well please hey hi".split())
_EN_HINT = re.compile(r"\b(?:the|is|are|was|of|and|to|with|for|this|that|it|in|from)\b")
"""English function words: a clause with one is not read by the French rules."""
_EN_REQUEST = re.compile(
    r"^(?:can|could|would|will|do|does|did)\s+(?:you|u|anyone|anybody|someone|somebody)\s+"
    r"(?:please\s+)?(tell|explain|describe|list|give|show|summari[sz]e|provide|say|name|"
    r"know|remember|recall)\b(.*)$"
)
_EN_ALTERNATIVE = re.compile(r"\bor\b(?!\s+(?:not|no|otherwise|else)\b)")

_FR_WH_START = re.compile(
    r"^(?:qu['e]|quel|quelle|quels|quelles|quand|où|ou\s+est|comment|pourquoi|combien|qui|quoi|"
    r"lequel|laquelle|lesquels|lesquelles|d['’]où|à\s+(?:qui|quoi|quel|quelle|quels|quelles)|"
    r"de\s+(?:qui|quoi|quel|quelle|quels|quelles)|par\s+où|depuis\s+(?:quand|combien))\b"
)
_FR_WH_ANY = re.compile(
    r"\b(?:quand|où|comment|pourquoi|combien|quel|quelle|quels|quelles|lequel|laquelle|"
    r"lesquels|lesquelles|quoi)\b"
)
_FR_EST_CE_QUE = re.compile(r"^est-ce\s+qu")
_FR_INVERSION = re.compile(
    r"\b[a-zàâçéèêëîïôûùüÿœ]+(?:-t)?-(?:il|elle|on|ils|elles|je|tu|nous|vous|ce)\b"
)
_FR_INVERSION_START = re.compile(
    r"^(?:(?:ne|n['’])\s*)?(?:y\s+)?(?:(?:en|le|la|les|l['’]|lui|leur|se|s['’]|me|m['’]|te|t['’])\s*)*"
    r"[a-zàâçéèêëîïôûùüÿœ]+(?:-t)?-(?:il|elle|on|ils|elles|je|tu|nous|vous|ce)\b"
)
_FR_ALTERNATIVE = re.compile(r"\bou\b(?!\s+(?:non|pas)\b)")

_ZH_MARKERS = ("是否", "能否", "可否", "有没有", "是不是", "能不能", "可不可以", "会不会", "要不要", "有无")
_ZH_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")
_ZH_WH = re.compile(r"多少|什么|几(?!乎)|哪|谁|怎么|怎样|如何|为什么|为何|何时|何地|何处|啥")
_JA_ENDING = re.compile(
    r"(?:ます|です|でしょう|ました|でした|ません|ない|ある|いる|できる|られる|れる|だろう|の|ん)か$"
)
_JA_WH = re.compile(r"何|いつ|どこ|どの|いくら|どれ|誰|だれ|どう|なぜ|なんで|どちら|どっち|どんな|いくつ|幾")
_JA_PLAIN_ENDING = re.compile(r"(?:の|でしょう|だろう|かな|よね)$")
_JA_INDEFINITE = re.compile(r"(?:何|誰|だれ|いつ|どこ|どれ|どちら|いくつ)か(?!$)")
_TRAILING = "?？。.!！ \t\r\n\"'」』）)"


def is_yes_no_question(question: str) -> bool:
    """Whether ``question`` asks for yes or no (general language rules, no topic words).

    English and French look at how the question starts (auxiliary or modal verb,
    ``est-ce que``, verb-subject inversion with a hyphen), after an optional short
    lead-in ending in a comma or colon (``In 2024, can ...``); Chinese looks for a
    final 吗/嘛 or a yes/no marker (是否, A-不-A ...); Japanese for a polite
    question ending (ますか, ですか ...) without a wh-word. Wh-questions and
    ``X or Y`` alternatives are not yes/no.
    """
    text = question.strip().replace("’", "'")
    if not text:
        return False
    if HAN.search(text) or KANA.search(text):
        verdict = _cjk(text)
        if verdict is not None:
            return verdict
    lowered = text.lower()
    verdict = _latin(lowered)
    if verdict is not None:
        return verdict
    # The text starts with context: judge its last question sentence instead.
    pieces = [p for p in re.split(r"(?<=[.!?;])\s+", lowered) if "?" in p]
    if pieces and pieces[-1] != lowered:
        return bool(_latin(pieces[-1]))
    return False


def _cjk(text: str) -> bool | None:
    """Chinese or Japanese verdict; None when the text does not read as either."""
    core = text.rstrip(_TRAILING)
    if KANA.search(core) and not (core.endswith("吗") or core.endswith("嘛")):
        if "それとも" in core:
            return False  # A それとも B: an alternative
        if _JA_ENDING.search(core):
            # 何か / 誰か ... inside the sentence mean "some-", not a wh-question.
            plain = _JA_INDEFINITE.sub("", core)
            return not _JA_WH.search(plain)
        if re.search(r"[A-Za-z]{3}", core):
            return None
        # Plain-form questions (…の？, …でしょう？) need the question mark.
        asked = text.rstrip().endswith(("?", "？"))
        return asked and bool(_JA_PLAIN_ENDING.search(core)) and not _JA_WH.search(core)
    if core.endswith("吗") or core.endswith("嘛"):
        return True  # 吗 turns a wh-word into "any": 有什么问题吗 asks yes or no
    if "还是" in core:
        return False  # X 还是 Y: an alternative
    if (
        any(marker in core for marker in _ZH_MARKERS)
        or _ZH_A_NOT_A.search(core)
        or core.endswith("没有")
        or core.endswith("了没")
    ):
        return not _ZH_WH.search(core)
    if _ZH_WH.search(core):
        return False
    if re.search(r"[A-Za-z]{3}", core):
        return None  # mostly Latin text with a CJK name in it
    return False


def _latin(text: str) -> bool | None:
    """English or French verdict from how ``text`` (lower case) starts; None: no clue."""
    whole = _clause_verdict(text)
    if whole is True:
        return True
    lead = re.match(r"^([^,:;?]{1,60})[,:]\s*(.+)$", text, re.S)
    if not lead or len(lead.group(1).split()) > 6:
        return whole
    after = _clause_verdict(lead.group(2))
    if whole is None:
        return after
    # "When it rains, does ...": a wh-word that opens a clause, not a question.
    words = re.findall(r"[a-z']+", lead.group(1))
    if after is True and len(words) > 1 and words[0] in _EN_WH and words[1] not in _EN_AUX:
        return True
    return whole


def _clause_verdict(clause: str) -> bool | None:
    verdict = _english(clause)
    return verdict if verdict is not None else _french(clause)


def _english(clause: str) -> bool | None:
    words = re.findall(r"[a-z']+", clause)
    while words and words[0] in _EN_DISCOURSE:
        words = words[1:]
    if not words:
        return None
    first = words[0]
    if first in _EN_WH:
        return False
    rest = " ".join(words)
    if first in _EN_AUX:
        request = _EN_REQUEST.match(rest)
        if request:
            verb, tail = request.group(1), request.group(2).split()
            tail = tail[1:] if tail and tail[0] in ("me", "us", "them", "him", "her") else tail
            if tail and tail[0] in ("whether", "if"):
                return not _EN_ALTERNATIVE.search(" ".join(tail[1:]))
            if tail and tail[0] in _EN_WH:
                return False
            if verb not in ("know", "remember", "recall"):
                return False  # "can you list ...": asks for the content, not for yes or no
        return not _EN_ALTERNATIVE.search(rest)
    if "whether" in words:
        tail = rest.split("whether", 1)[1]
        return not _EN_ALTERNATIVE.search(tail)
    return None


def _french(clause: str) -> bool | None:
    clause = clause.lstrip("¿¡\"'«( ").replace("’", "'")
    if _EN_HINT.search(clause):
        return None
    if _FR_WH_START.match(clause):
        return False
    if _FR_EST_CE_QUE.match(clause) or _FR_INVERSION_START.match(clause):
        return not _FR_ALTERNATIVE.search(clause)
    if _FR_INVERSION.search(clause) and not _FR_WH_ANY.search(clause):
        # "Le musée est-il ouvert ?": a noun subject, then verb-pronoun.
        return not _FR_ALTERNATIVE.search(clause)
    return None


# --------------------------------------------------------------------------- #
# What kind of value does an open question ask for?
# --------------------------------------------------------------------------- #

AMOUNT_KINDS = frozenset({"quantity", "money", "percent", "number", "range"})
DATE_KINDS = frozenset({"date"})
#: What after 何日/何年 makes it a span ("何日以内": within how many days; "何年間"), not a date.
_JA_SPAN_AFTER = "間|以内|以上|以下|前|後|ほど|くらい|ぐらい|程度"
_ASKS_DATE = re.compile(
    r"^\W*when\b|\b(?:what|which|on what|in what|in which)\s+(?:\w+\s+)?(?:date|year|day|month)\b|\bquand\b|"
    r"\b(?:cuándo|quando|wann|wanneer)\b|"
    r"什么时候|何时|哪天|哪一天|哪年|哪一年|几月|几号|いつ|何月|"
    rf"(?<!期間は)(?<!期間)何[日年](?!{_JA_SPAN_AFTER})",
    re.IGNORECASE,
)
_ASKS_AMOUNT = re.compile(
    r"\bhow\s+(?:many|much|long|tall|old|far|often|heavy|big|large|high|fast|wide|deep|soon)\b|\bcombien\b|"
    r"\b(?:number|count|total|amount)\s+of\b|\bnombre\s+(?:de|d')|数量|总数|人数|件数|"
    r"\b(?:cuánt[oa]s?|quant[oa]s?|quant[ie]|wie\s+viele?|hoeveel)\b|"
    r"多少|几|多长|多久|多大|多高|多重|多远|比例|いくら|いくつ|何時間|何分|何回|何キロ|何パーセント|何%|"
    rf"何[日年](?:{_JA_SPAN_AFTER})|何か月|何ヶ月|何カ月|何週間|期間は?何[日年]",
    re.IGNORECASE,
)
_ASKS_NAME = re.compile(r"^\W*(?:who|whom|whose|where)\b|\bqui\b|\boù\b|谁|誰|どこ|哪里|哪儿", re.IGNORECASE)


def asked_value_kinds(question: str) -> frozenset[str] | None:
    """The value kinds an open question asks for: dates ("when"), amounts ("how
    many", "the number of", "多少"), none at all ("who", "where"), or None when its grammar does
    not say ("what is the limit?": the documents' claims decide)."""
    if _ASKS_DATE.search(question):
        return DATE_KINDS
    if _ASKS_AMOUNT.search(question):
        return AMOUNT_KINDS | DATE_KINDS if re.search(r"how\s+long|多久|多长", question, re.I) else AMOUNT_KINDS
    if _ASKS_NAME.search(question):
        return frozenset()
    return None


def predicate_text(question: str) -> str:
    """The question without its capitalised subject words (names, products): what it asks about them."""
    words = question.split()
    return " ".join(w for k, w in enumerate(words) if k == 0 or not _NAME_WORD.fullmatch(w.strip("\"'“”‘’()?,.!:;")))


# "Aérolys" and "Économie" are capitalised words.
_NAME_WORD = re.compile(rf"[{_UPPER}][{_LATIN}0-9'’.&-]*")
_NAME_RUN = re.compile(rf"(?<![{_LATIN}0-9'’.&-])[{_UPPER}][{_LATIN}0-9'’.&-]*")


def stated_values(question: str) -> list["Value"]:
    """The typed values the question states itself (its conditions: "in 24 hours", "orders over
    $50"), except a bare number that is part of a name, written right after a capitalised word
    ("the Harrow 500 race", "Flight 31"): it names the subject, so an answer may hold the same
    number ("500 laps")."""
    from diagnose.text.values import extract_values

    return [v for v in extract_values(question) if not (v.kind == "number" and _after_name(question, v.start))]


def _after_name(question: str, at: int) -> bool:
    """Whether a capitalised word other than the question's first stands right before ``at``."""
    m = _NAME_BEFORE.search(question, 0, at)
    return m is not None and question[:m.start()].strip() != ""


_NAME_BEFORE = re.compile(_NAME_RUN.pattern + " $")  # a name word, then the one space before ``at``


def subject_text(question: str) -> str:
    """The question's capitalised subject words (names, products, plans), in any supported
    language: the words :func:`predicate_text` leaves out, and a capitalised word written among
    CJK characters ("*Pro*套餐每月多少钱", "*Pro*プランの月額は"). The question's first word, when
    it opens a sentence of words, is no name."""
    first = re.match(rf"[\W_]*[{_LATIN}]+(?=\s)", question)
    return " ".join(m.group() for m in _NAME_RUN.finditer(question)
                    if not (first and m.start() < first.end()))


_PERCENT_CUES = re.compile(r"\b(?:percent|percentage|share|pourcentage)\b|%|比例|百分比|比率|割合|パーセント", re.I)
# A rate is a share or an amount per span of time: "the interest rate" (4.5%), "the rate limit"
# (600 requests a minute), "the refresh rate" (120 Hz).
_RATE_CUES = re.compile(r"\b(?:rate|rates|taux)\b|速率|レート", re.I)
_MONEY_CUES = re.compile(
    r"\b(?:price|prices|cost|costs|fee|fees|charge|charges|revenue|salary|pay|spend|spent|worth|budget|wages?"
    r"|prix|tarif|coût|montant)\b|"
    r"价格|价钱|费用|多少钱|金额|收入|料金|値段|価格|費用|金額", re.I,
)
# Words that name a physical quantity, each with a unit it is measured in: what the question's
# own words say the answer is measured in when they name no unit ("the input *voltage*"). Not
# "length" nor "frequency": the length of a contract and the frequency of a dose are times.
_QUANTITY_CUES = tuple((re.compile(words, re.I), unit) for words, unit in (
    (r"\b(?:weigh|weighs|weight|heavy|poids|pèse)\b|重量|多重|重さ", "kg"),
    (r"\b(?:temperatures?|températures?)\b|温度", "°C"),
    (r"\b(?:voltages?)\b|电压|電圧", "V"),
    (r"\b(?:wattage|puissance)\b|功率|消費電力", "W"),
    (r"\b(?:distance|height|tall|width|depth|elevation|altitude|wingspan|hauteur|largeur|profondeur|altura|altezza"
     r"|höhe|entfernung)\b|\bhow\s+(?:far|deep|high|wide)\b|\bwie\s+(?:hoch|weit|tief|breit)\b"
     r"|距离|高度|宽度|深度|海拔|多高|多远|多深|多宽|距離|高さ|標高", "m"),
    (r"\b(?:area|superficie|fläche)\b|面积|面積", "km²"),
    (r"\b(?:speed|vitesse)\b|\bhow\s+fast\b|\bwie\s+schnell\b|速度|多快", "km/h"),
    (r"\b(?:boiling|melting|freezing)\s+point\b|\bpoint\s+d['’](?:ébullition|fusion)\b|\bhow\s+(?:hot|cold)\b"
     r"|沸点|熔点|融点|凝固点", "°C"),
    # An age, and a span that lasts or takes: "how old is the universe", "how long did the siege last"
    (r"\bhow\s+old\b|\bhow\s+long\b(?=.*\b(?:last|lasts|lasted|take|takes|took|stay|stayed)\b)"
     r"|\b(?:wie\s+lange|cuánto\s+tiempo|quanto\s+tempo|hoe\s+lang)\b|多大年纪|何歳", "s"),
    (r"\b(?:pressure|pression)\b|气压|圧力|気圧", "bar"),
    (r"\b(?:memory|storage|mémoire|stockage)\b|内存|存储|メモリ|ストレージ", "GB"),
    # A span of time by name ("how long" may ask a length, and "多少"/"どのくらい" any amount).
    (r"\b(?:duration|durée|combien\s+de\s+temps)\b|多长时间|多長時間|多久", "s"),
))
_CJK_ASKED_UNIT = re.compile(r"(?:多少|几|何)个?([\u4e00-\u9fff\u30a0-\u30ff]{1,2})")
_QUESTION_WORD = re.compile(r"(?<![^\W_])(?:(per|a|an|each|every|par)\s+)?([^\W\d_]+)", re.UNICODE | re.I)


def _names_something(word: str) -> bool:
    """Whether a capitalised word of a question names something ("Henry", "Lumen", "El", "MS")
    rather than a unit (pint reads them as henries, lumens, exalitres, megasiemens): a unit word is
    written so only as a data size ("GB") or as a unit word of its language ("Tage")."""
    from diagnose.text._units import ALIASES, resolve_unit

    if not word[0].isupper() or word in ALIASES:
        return False
    unit = resolve_unit(word)
    return unit is None or unit.dimension != "[information]"


PER_TIME = "per [time]"
"""What :func:`asked_dimensions` names for a question that asks an amount per span of time."""
COUNT = "count"
"""What :func:`asked_dimensions` names for a question that asks how many of things that are no
unit ("how many employees", "the population of"): a count, which no physical amount answers."""


def asked_dimensions(question: str) -> frozenset[str]:
    """What the question's own words say the answer is measured in: the dimensions of the
    unit words it names ("how many *weeks*" → ``[time]``) and of the quantities it names ("the
    input *voltage*", "how much does it *weigh*"), ``percent`` for a share, ``money`` for a
    price or cost, :data:`PER_TIME` for an amount per span of time ("the maximum *daily* dose",
    :func:`diagnose.text.roles.asked_rate`), both ``percent`` and :data:`PER_TIME` for a rate (a
    share or an amount per time), :data:`COUNT` for how many of things that are no unit ("how many
    *employees*", "the *population*"); empty when it names none.

    A unit that belongs to a value the question states ("the 500 mg caplet", "in 24 hours")
    names the subject or a condition, not what is measured: it is left out."""
    from diagnose.text._units import NOT_UNITS, resolve_unit
    from diagnose.text.values import extract_values

    per_time = asked_rate(predicate_text(question))  # a word of a name ("The Daily Citizen") asks for no rate
    for v in sorted(extract_values(question), key=lambda v: -v.start):
        question = question[:v.start] + " " * (v.end - v.start) + question[v.end:]
    out = set()
    for per, word in _QUESTION_WORD.findall(question):
        if per or len(word) < 2 or word.lower() in NOT_UNITS or word.lower() in FUNCTION_WORDS or _names_something(word):
            continue  # "per month" is a rate's denominator, not what is measured; French "du" no dalton
        if (unit := resolve_unit(word)) is not None:
            out.add(unit.dimension)
    for word in _CJK_ASKED_UNIT.findall(question):  # "多少天", "何時間"
        if (unit := resolve_unit(word) or resolve_unit(word[0])) is not None:
            out.add(unit.dimension)
    out |= {resolve_unit(unit).dimension for cue, unit in _QUANTITY_CUES if cue.search(question)}
    if _PERCENT_CUES.search(question):
        out.add("percent")
    if _RATE_CUES.search(question):
        out |= {"percent", PER_TIME}
    if _MONEY_CUES.search(question):
        out.add("money")
    if per_time:
        out.add(PER_TIME)
    if not out and asks_count(question):
        out.add(COUNT)
    return frozenset(out)
