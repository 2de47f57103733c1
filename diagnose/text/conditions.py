"""Values stated as conditions on something else rather than as an answer: a bound
("orders *over* $50 ship free", "*more than* 5 years of service", "16 years *and over*",
"*超过*500元", "3,000円*以上*", "*plus de* 10 jours") and an age ("children *aged* 4 to 11",
"*under* 12", "*16-year-old*", "12*岁*以下"). :func:`is_condition` says whether a value is one;
:func:`asks_bound` and :func:`asks_age` whether the question asks for such a value itself ("the
*maximum* daily dose", "*how old*"), where it is the answer.

A bound stated as a limit ("shall *not exceed* $2M", "*no more than* 4 g", "*不得超过*") is no
condition: it states the limit itself. A bound that hedges a
stated figure ("*at least* 4,100 people died", "the toll was *more than* 300") is no condition
either: it opens its clause or follows a verb of being, where a condition follows the noun it limits.

Grammar words of each supported language (English, French, Chinese, Japanese), no topic words.
"""

from __future__ import annotations

import re

from diagnose.text.value_types import Value

__all__ = ["asks_age", "asks_bound", "asks_condition", "is_condition"]

_BOUND_BEFORE = re.compile(
    r"(?:\b(?:over|above|under|below|beyond|exceeding|exceeds?|upwards\ of|(?:more|less|greater|fewer|longer|"
    r"shorter|higher|lower|older|younger)\ than|at\ (?:least|most)|plus\ de|moins\ de|au-delà\ de|au\ moins|"
    r"(?:supérieure?s?|inférieure?s?)\ à|dès)"
    r"|超过|超過|高于|低于|大于|小于|少于|多于|不足|不到|满|滿)\s*(?:[$€£¥]|[A-Z]{3}\s?)?$",
    re.IGNORECASE | re.VERBOSE,
)
_NEGATED = re.compile(r"(?:\b(?:not|no|never|ne\ pas|pas)|n['’]t|不得|不|不能|不可)\s*(?:to\s+)?$", re.IGNORECASE | re.VERBOSE)
_BOUND_AFTER = re.compile(
    r"^\s*(?:\+|(?:and|or)\s+(?:over|above|older|more|up|under|below|less|younger|fewer)\b|"
    r"(?:et|ou)\s+(?:plus|moins)\b|以上|以下|未満|超(?!过|過)|或以上|及以上)",
    re.IGNORECASE,
)
_AGE_BEFORE = re.compile(r"\b(?:aged?|ages|age\ of|âgée?s?\ de|âge\ de)\s*$|(?:年龄|年齢)\s*$", re.IGNORECASE | re.VERBOSE)
_AGE_AFTER = re.compile(
    r"^(?:\s*|-)(?:(?:years?[\s-])?olds?\b|(?:years?\s+)?of\s+age\b|岁|歳|才)", re.IGNORECASE
)
_ASKS_BOUND = re.compile(
    r"\b(?:max(?:imum|imal|imale)?|min(?:imum|imal|imale)?|limit(?:s|ation)?|limite|caps?|ceiling|threshold|"
    r"at\ (?:least|most)|"
    r"up\ to|most|least|fewest|plafond|seuil|au\ (?:plus|moins)|jusqu'à)\b"
    r"|最高|最低|最多|最少|至少|最大|最小|上限|下限|门槛|門檻|限额|限額|限度|まで",
    re.IGNORECASE | re.VERBOSE,
)
_ASKS_AGE = re.compile(r"\bhow\s+old\b|\bages?\b|\bâge\b|几岁|多大|年龄|年齢|何歳|何才", re.IGNORECASE)
_BEFORE_CHARS = 24
_ESTIMATE_BEFORE = re.compile(
    r"(?:^|[.!?\n,;—–]|\b(?:that|is|was|were|are|been|being|reached|hit|took|saw|had|has|have|rose\ to|fell\ to"
    r"|est|était|sont|étaient|a|ont|compte|comptait|atteint))\s*$",
    re.IGNORECASE | re.VERBOSE,
)
"""What may stand right before a bound that hedges the answer rather than sets a condition: the
clause's opening or a verb of being or having ("*At least* 4,100 died", "the toll *was* over 50", « on
*compte* plus de 40 morts »), not a noun ("orders over $50", "children under 12"). Not any verb: a
participle after a noun sets a condition ("orders *placed* at least 14 days before")."""
_GROUP = re.compile(r"\b(?:under|below)\b", re.IGNORECASE)
"""Bounds that name a group rather than hedge a figure, even opening a sentence ("Under 12 travel
free"; so does a plural figure: "Over 65s pay half")."""
_TIMING_AFTER = re.compile(r"\s*(?:before|after|prior|in\ advance|ahead|avant|après|à\ l['’]avance)\b", re.IGNORECASE)
"""After a span of time, the words that make it a timing rule ("at least 1 hour *before* meals")."""


def is_condition(text: str, v: Value) -> bool:
    """Whether ``v`` (found in ``text``) is stated as a bound or an age (see the module docstring).
    Dates are left alone: "before 1 March" is as often the answer as a condition."""
    if v.kind == "date":
        return False
    before, after = text[max(0, v.start - _BEFORE_CHARS):v.start], text[v.end:v.end + 16]
    bound = _BOUND_BEFORE.search(before)
    if bound is not None and _NEGATED.search(before[:bound.start()]):
        bound = None  # "shall not exceed $2,000,000", "不得超过": a limit stated, the answer to "what is the cap"
    if (bound is not None and bound.group().isascii() and not _TIMING_AFTER.match(after)
            and not _GROUP.search(bound.group()) and not v.span.endswith("s")
            and _ESTIMATE_BEFORE.search(text, 0, v.start - len(before) + bound.start())):
        bound = None  # "at least 4,100 people died", "the toll was over 50": the answer, hedged
    return bool(bound or _BOUND_AFTER.match(after) or _AGE_BEFORE.search(before) or _AGE_AFTER.match(after))


def asks_bound(question: str) -> bool:
    """Whether the question asks for a bound itself ("the *maximum* daily dose", "*at least*",
    "*plafond*", "*最多*", "*上限*", "いくら*まで*")."""
    return _ASKS_BOUND.search(question) is not None


def asks_age(question: str) -> bool:
    """Whether the question asks for an age ("*how old*", "from what *age*", "*quel âge*", "*几岁*", "*何歳*")."""
    return _ASKS_AGE.search(question) is not None


def asks_condition(question: str) -> bool:
    """Whether the question asks for a bound or an age (:func:`asks_bound`, :func:`asks_age`): then a
    value stated as a condition is an answer like any other."""
    return asks_bound(question) or asks_age(question)
