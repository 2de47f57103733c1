"""Entity answers for two question types without a class lexicon.

- Abbreviations ("What does SFJ stand for?"): the expansion a document gives,
  "sapheno-femoral junction (SFJ)", "SFJ (StarFlyer Japan)", or a capitalised
  run of words whose initials spell the abbreviation ("San Francisco Jail").
- Characters ("Who is the main character of X?"): the personal names a plot
  or cast passage repeats, with a bonus for a name after a starring cue or
  before an actor in parentheses, and for a name inside a longer title
  ("Roger Rabbit" in "Who Framed Roger Rabbit").

Part of :mod:`diagnose.inputs.entities` (which calls :func:`role_candidates`).
"""

from __future__ import annotations

import re
from collections import Counter

from diagnose.inputs.answers import Answer, Question, normalise

#: Question words that ask for the expansion of the abbreviation the question names.
ABBREVIATION_CUES = frozenset("abbreviation abbreviations acronym initialism stand stands mean means short expansion".split())
#: Question words that ask for a story's character.
CHARACTER_CUES = frozenset("character characters protagonist protagonists hero heroine lead".split())
#: Words skipped when spelling an abbreviation from initials ("Bank of America" -> BOA or BA).
_MINOR = frozenset("of and the for de du la le in on at to a an &".split())
#: Capitalised words that are not personal names (sentence starts, pronouns, months, titles).
NOT_NAMES = frozenset(
    """the a an he she they it his her their its we i you this that these those there then when while
    after before during in on at as but and or if so with from by for of to one two later soon however
    meanwhile eventually finally plot cast film movie series season episode story novel book game
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr sir lord lady king queen
    prince princess captain retrieved references external links edit see also categories hidden
    wikipedia isbn english american british indian hindi tamil telugu french german""".split()
)
PAREN_SCORE = 3.0
"""Score of an expansion written next to the abbreviation in parentheses."""
FREE_SCORE = 1.5
"""Score of a capitalised run of words whose initials spell the abbreviation."""
NAME_SCORE = 1.0
"""Score of a name a passage repeats (+0.25 a repeat, up to 4); a lone mention scores half."""
CUE_BONUS = 0.5
"""Added to a name after a starring cue or before an actor in parentheses."""
TITLE_BONUS = 1.0
"""Added to a name that is part of a longer title ("Roger Rabbit" in "Who Framed Roger Rabbit")."""
#: Nationality and language adjectives ("Turkish", "Japanese"), not names.
_DEMONYM = re.compile(r"(?:ish|ese)$")
_ABBR = re.compile(r"[A-Z][A-Z0-9&.]{1,9}")
_NAME = re.compile(r"\b[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)?")
_STAR_CUE = re.compile(r"(?:starring|stars|starred|follows|protagonist|title character|main character|plays|played)\s+(?:as\s+)?$", re.IGNORECASE)


def is_abbreviation_question(q: Question) -> bool:
    """The question names an all-capitals token and asks what it stands for."""
    if not q.entity or not _ABBR.fullmatch(q.entity.strip()):
        return False
    rest = set(q.keywords) - {normalise(q.entity)}
    return not rest or bool(rest & ABBREVIATION_CUES)


def is_character_question(q: Question) -> bool:
    """The question asks for a character of a story (``main character``, ``protagonist``)."""
    return bool(set(q.keywords) & CHARACTER_CUES) or q.head == "character"


def role_candidates(q: Question, text: str) -> list[Answer]:
    """Abbreviation expansions or character names in ``text`` (empty for other questions)."""
    if is_abbreviation_question(q):
        return abbreviation_candidates(q.entity or "", text)
    if is_character_question(q):
        return character_candidates(q, text)
    return []


def _initials(words: list[str]) -> list[str]:
    """Initials of ``words``: hyphen parts and CamelCase parts each give one."""
    out = []
    for w in words:
        for part in re.split(r"[-–]", w):
            out += [p[0].lower() for p in re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", part)][:3 if part[:1].isupper() else 1]
    return out


def spells(words: list[str], abbr: str) -> bool:
    """Whether ``words`` (minor words optional) spell the letters of ``abbr``."""
    letters = [c.lower() for c in abbr if c.isalnum()]
    full = _initials(words)
    major = _initials([w for w in words if w.lower() not in _MINOR])
    return bool(words) and (full == letters or major == letters)


def _expansion_before(before: str, abbr: str) -> str:
    words = re.findall(r"[\w'’&-]+", before)[-(2 * len(abbr) + 2):]
    for start in range(len(words) - 1, -1, -1):
        if words[start].lower() in _MINOR:
            continue
        if spells(words[start:], abbr):
            return " ".join(words[start:])
    return ""


def abbreviation_candidates(abbr: str, text: str, paren: float = PAREN_SCORE, free: float = FREE_SCORE) -> list[Answer]:
    """Expansions of ``abbr`` stated in ``text``."""
    out: list[Answer] = []
    esc = re.escape(abbr.strip())
    for m in re.finditer(rf"\(\s*{esc}\s*[),;]", text):
        exp = _expansion_before(text[max(0, m.start() - 200):m.start()], abbr)
        if exp:
            out.append(Answer(exp, normalise(exp), paren, m.start() - len(exp)))
    for m in re.finditer(rf"\b{esc}\s*\(\s*([^()]{{3,80}}?)\s*\)", text):
        words = re.findall(r"[\w'’&-]+", m.group(1))
        if spells(words, abbr):
            out.append(Answer(m.group(1), normalise(m.group(1)), paren, m.start(1)))
    n = len([c for c in abbr if c.isalnum()])
    run = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|and|the|for|de|&|[A-Z][\w'’-]*))*")
    for m in run.finditer(text):
        words = m.group(0).split()
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + 2 * n) + 1):
                if words[i].lower() not in _MINOR and words[j - 1].lower() not in _MINOR and spells(words[i:j], abbr):
                    span = " ".join(words[i:j])
                    if normalise(span) != normalise(abbr):
                        out.append(Answer(span, normalise(span), free, m.start()))
    return out


def character_candidates(q: Question, text: str, base: float = NAME_SCORE) -> list[Answer]:
    """Personal names ``text`` repeats, scored by repetition and role cues."""
    title = normalise(q.entity) if q.entity else ""
    lower = {w.lower() for w in re.findall(r"\b[a-z][\w'’-]*", text)}
    found: list[tuple[str, int]] = []
    for m in _NAME.finditer(text):
        words = [w for w in m.group(0).split()
                 if w.lower() not in NOT_NAMES and w.lower() not in lower and not _DEMONYM.search(w)]
        name = " ".join(words)
        if name and normalise(name) != title:
            found.append((name, m.start()))
    if not found:
        return []
    # A one-word mention counts toward the full name that starts with it ("Raghu" -> "Raghu Ram").
    counts = Counter(normalise(n).split()[0] for n, _ in found)
    out = []
    seen: set[str] = set()
    for name, start in found:
        first = normalise(name).split()[0]
        if first in seen:
            continue
        seen.add(first)
        score = base + 0.25 * min(counts[first] - 1, 4) if counts[first] > 1 else base * 0.5
        mentions = [(n, s) for n, s in found if normalise(n).split()[0] == first]
        if any(_STAR_CUE.search(text[max(0, s - 30):s]) or re.match(r"\s*\(\s*[A-Z]", text[s + len(n):s + len(n) + 4])
               for n, s in mentions):
            score += CUE_BONUS
        if title and f" {first} " in f" {title} ":
            score += TITLE_BONUS
        out.append(Answer(name, first, score, start))
    return out
