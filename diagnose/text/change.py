"""Whether a sentence tells of a change: a value that was replaced, raised, lowered or
updated ("EUR 180 per night, replacing the EUR 150 limit", "it was 30 days before",
"自2026年起调整为", "auparavant 14 jours", "従来は30日"). Then the two values it holds are
an old and a new one, not one answer and a value in another role.

Grammar words of change in each supported language (English, French, Chinese,
Japanese), no topic words.
"""

from __future__ import annotations

import re

__all__ = ["tells_change"]

_CHANGE = re.compile(
    r"\b(?:(?:was|were)\b[^.;]{0,40}?\b(?:before|earlier|until)|used\ to\ be|previously|formerly|no\ longer|instead\ of|"
    r"replac(?:e|es|ed|ing)|supersed(?:e|es|ed|ing)|(?:rais|increas|reduc|lower|cut|chang|updat|revis|restat|"
    r"amend|adjust)(?:e|es|ed|ing)?|"
    r"auparavant|précédemment|anciennement|au\ lieu\ de|remplac\w*|modifi\w*|révis\w*|relev\w*|abaiss\w*|"
    r"(?:était|étaient)\b|pass(?:e|é|ée)\s+de)\b"
    r"|原为|原来|此前|以前|之前|调整为|改为|变更|上调|下调|取代|替代|"
    r"従来|変更|改定|改訂|引き上げ|引き下げ",
    re.IGNORECASE | re.VERBOSE,
)


def tells_change(sentence: str) -> bool:
    """Whether ``sentence`` tells of a value that changed (see the module docstring)."""
    return _CHANGE.search(sentence) is not None
