"""The polarity of a claim: does it affirm or deny what the question asks?

A claim denies when it negates ("not eligible", "不支持", "n'est pas", "できません")
or states the opposite predicate ("optional" to "is it required?", "excluded" to
"is it covered?"). The lexicon is grammar (negators) and a short list of general
antonym pairs of policy and fact language; it names no topic.
"""

from __future__ import annotations

import re

from diagnose.text.sentences import fold

_NEGATORS = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without|unable|false|untrue|myth|"
    r"pas|jamais|aucun|aucune|sans|ni|non)\b|n['’]t\b|"
    r"不|没|沒|無|无|非|未|别|勿|禁止|ない|ません|なし|不可|できず"
)
#: General antonym pairs: the second word denies the first.
_PAIRS = (
    ("required", "optional"), ("mandatory", "optional"), ("compulsory", "optional"), ("must", "may"),
    ("allowed", "prohibited"), ("allowed", "forbidden"), ("permitted", "prohibited"), ("permitted", "forbidden"),
    ("allowed", "banned"), ("included", "excluded"), ("covered", "excluded"), ("eligible", "ineligible"),
    ("available", "unavailable"), ("supported", "unsupported"), ("possible", "impossible"),
    ("legal", "illegal"), ("true", "false"), ("accepted", "rejected"), ("safe", "unsafe"),
    ("enabled", "disabled"), ("yes", "no"), ("always", "never"), ("increase", "decrease"),
    ("obligatoire", "facultatif"), ("autorisé", "interdit"), ("必须", "可选"), ("必需", "可选"),
    ("允许", "禁止"), ("可以", "不可"), ("必須", "任意"), ("可能", "不可"),
)
#: Denying words that are not negations themselves (不可 is counted once, as 不).
_DENIES = frozenset(b for _, b in _PAIRS if not _NEGATORS.search(b))
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def negations(text: str) -> int:
    """How many negators ``text`` carries."""
    return len(_NEGATORS.findall(fold(text)))


#: Contrast connectives: the clause after the last one carries the claim
#: ("X is not usual, but Y does it" affirms).
_CONTRAST = re.compile(r"\b(?:but|however|yet|nevertheless|nonetheless|mais|cependant|pourtant|toutefois)\b|但是|但|不过|然而|可是|しかし|でも|ただし")


def polarity(text: str) -> int:
    """+1 (affirms), -1 (denies): the parity of negators and denying antonyms in the
    claim's main clause (after its last contrast connective, when it has one)."""
    folded = fold(text)
    cuts = list(_CONTRAST.finditer(folded))
    if cuts and len(folded) - cuts[-1].end() > 8:
        folded = folded[cuts[-1].end():]
    count = negations(folded)
    words = set(_WORD.findall(folded))
    count += sum(1 for w in _DENIES if (w in words if w.isascii() else w in folded))
    return -1 if count % 2 else 1


def relative_polarity(question: str, claim: str) -> int:
    """The claim's polarity relative to the question's own (a question that asks
    "is it optional?" is answered "yes" by a claim that says "optional")."""
    return polarity(claim) * polarity(question)
