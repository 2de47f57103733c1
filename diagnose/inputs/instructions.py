"""Contradictory instructions in the system prompt and template.

Each rule is data: two families of phrases that cannot both be obeyed. The
phrase actually found in the text is reported, in rule order.
"""

from __future__ import annotations

import re

#: (name, side A patterns, side B patterns); patterns are case-insensitive regexes.
RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "length",
        (r"\bbe (?:very )?(?:brief|concise|short|succinct)\b", r"\b(?:brief|concise|short|succinct)(?:ly)?\b",
         r"\bone (?:word|sentence|line)\b", r"\bat most \d+ words\b", r"\bkeep it short\b"),
        (r"\bexplain (?:\w+ ){0,2}in (?:great |full )?detail\b", r"\bin (?:great |full )?detail\b",
         r"\b(?:thorough|thoroughly|comprehensive|exhaustive|elaborate|step[- ]by[- ]step)\b",
         r"\bat least \d+ (?:words|paragraphs)\b", r"\blong (?:answer|explanation)\b"),
    ),
    (
        "format",
        (r"\b(?:answer|respond|reply|output|return)\w* (?:\w+ ){0,3}(?:in|as) (?:valid )?json\b",
         r"\bjson (?:object|only|format)\b", r"\bonly json\b"),
        (r"\b(?:in|as) (?:plain |natural )?(?:prose|plain text|natural language|full sentences|paragraphs)\b",
         r"\bno json\b", r"\bplain text\b"),
    ),
    (
        "grounding",
        (r"\bonly (?:use|from|based on|rely on) (?:the )?(?:provided |given |following )?(?:documents|context|passages|sources)\b",
         r"\b(?:use|answer) only (?:from )?(?:the )?(?:provided |given )?(?:documents|context|passages)\b",
         r"\bdo not use (?:your )?(?:own |prior |outside )?knowledge\b"),
        (r"\buse (?:your )?(?:own|general|prior|outside|background) knowledge\b",
         r"\b(?:ignore|disregard) the (?:documents|context|passages)\b",
         r"\bfrom (?:your )?(?:own )?memory\b"),
    ),
    (
        "citations",
        (r"\bcite (?:the |your )?(?:sources|documents)\b", r"\binclude (?:citations|references)\b"),
        (r"\bdo not cite\b", r"\bno (?:citations|references)\b", r"\bwithout (?:citations|references)\b"),
    ),
    (
        "language",
        (r"\b(?:answer|respond|reply) (?:only )?in english\b",),
        (r"\b(?:answer|respond|reply) (?:only )?in (?:chinese|french|german|spanish|japanese|russian)\b",),
    ),
)


def _first(text: str, patterns: tuple[str, ...]) -> str | None:
    hits = [m for p in patterns if (m := re.search(p, text, re.IGNORECASE))]
    if not hits:
        return None
    first = min(hits, key=lambda m: (m.start(), -len(m.group(0))))
    return first.group(0)


def instruction_conflicts(*texts: str | None) -> list[list[str]]:
    """Pairs ``[phrase_a, phrase_b]`` of contradictory instructions across ``texts``.

    The texts (system prompt, template) are read as one instruction set, so a
    system prompt that says "be brief" and a template that says "explain in
    detail" conflict.
    """
    joined = "\n".join(t for t in texts if t)
    joined = re.sub(r"\{(?:question|documents)\}", " ", joined)
    out = []
    for _, side_a, side_b in RULES:
        a, b = _first(joined, side_a), _first(joined, side_b)
        if a and b:
            out.append([a, b])
    return out
