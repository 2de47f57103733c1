"""Heuristic per-document answer extraction, by question type.

A question is typed as ``date`` (when / what year / founded ...), ``number``
(population / how many ...) or ``entity`` (who / what sport / where ...).
Each document then yields scored candidate spans; the best one is the answer
the document supports. Keys (:func:`answer_key`) are what centers group on.
Entity candidates live in :mod:`diagnose.inputs.entities`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from diagnose.inputs import _lexicon as lex

_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})"
_DATE = re.compile(
    rf"(?<![0-9A-Za-z])(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*{_YEAR}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s*,?\s*{_YEAR}"
    rf"|{_MONTH}\s*,?\s+{_YEAR}"
    rf"|{_YEAR}(?:\s*[–—-]\s*(?:{_YEAR}|[0-9]{{2}}))?s?)(?![\d,.]\d)",
    re.IGNORECASE,
)
#: A number: digit groups ("4,411", "1.234.567"), a decimal ("8848.86", "2.7") or plain
#: digits, optionally scaled by a word ("2.7 million"). CJK units may follow directly ("8611米").
_NUMBER = re.compile(
    r"(?<![0-9A-Za-z.,])(?:\d{1,3}(?:[,.\u00a0 ]\d{3})+(?![\d])"
    r"|\d+\.\d+(?![0-9A-Za-z]|[,.]\d)"
    r"|\d+(?![0-9A-Za-z]|[,.]\d))"
    r"(?:\s+(?:million|billion|thousand)\b)?",
    re.IGNORECASE,
)
#: A rate follows the number: "4.6 people per square mile", "12 per 1,000".
_RATE = re.compile(r"(?:[^\W\d]+\s+){0,2}per\b", re.IGNORECASE)
_SCALE = {"thousand": 1000, "million": 10**6, "billion": 10**9}
#: Sentence ends; CJK full stops need no space after them.
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+|\s•\s")
_WORD = re.compile(r"\w+", re.UNICODE)
_YEAR_ONLY = re.compile(_YEAR)
_YEAR_RANGE = re.compile(rf"({_YEAR})\s*[–—-]\s*({_YEAR}|[0-9]{{2}})")
#: A unit written before a number: an exponent ("km 2", "mi 2") follows it, not a count.
_EXPONENT_UNIT = re.compile(r"(?:km|mi|ft|m)\s?$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
#: The unit character after a CJK "how many / how much" (多少米, 几年, 多少人).
_CJK_UNIT = re.compile(r"(?:多少|几)(?:个|位|座)?([\u3400-\u9fff])")


@dataclass(frozen=True)
class Question:
    """What the question asks for."""

    kind: str
    """``date``, ``number`` or ``entity``."""
    entity: str | None
    """The subject the question is about (quoted title or capitalised name)."""
    keywords: tuple[str, ...]
    """Lower-case content words of the question outside the entity."""
    head: str | None = None
    """For entity questions, the class asked for (``sport``, ``artist`` ...)."""
    units: str = ""
    """CJK unit characters the question asks a count of (``米`` in ``多少米``)."""


@dataclass(frozen=True)
class Answer:
    """One candidate answer found in a document."""

    span: str
    """The text as it appears in the document."""
    key: str
    """Normalised grouping key (:func:`answer_key`)."""
    score: float
    start: int = 0


def normalise(text: str) -> str:
    """Lower-case, accents folded, punctuation dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(_WORD.findall(text.replace("_", " ")))


def answer_key(span: str, kind: str) -> str:
    """Grouping key: the first year for dates, the digits for numbers, else the normalised span."""
    if kind == "date":
        year = _YEAR_ONLY.search(span)
        return year.group(0) if year else normalise(span)
    if kind == "number":
        return number_value(span) or normalise(span)
    return normalise(span)


def number_value(span: str) -> str:
    """The value of a number span as plain digits: group separators dropped, a
    decimal kept ("8848.86"), a scale word applied ("2.7 million" -> "2700000");
    empty when the span has no digits."""
    words = span.lower().split()
    scale = _SCALE.get(words[-1], 1) if words else 1
    body = " ".join(words[:-1]) if scale != 1 else span
    digits = re.sub(r"\D", "", body)
    if not digits:
        return ""
    dec = re.fullmatch(r"\s*(\d+\.\d+)\s*", body)
    if dec and not re.fullmatch(r"\d{1,3}(?:\.\d{3})+", dec.group(1)):
        value = Decimal(dec.group(1)) * scale
    else:
        value = Decimal(digits) * scale
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_question(question: str) -> Question:
    """Type the question and pull out its subject and keywords."""
    q = question.strip()
    low = q.lower()
    entity = _question_entity(q)
    ent_words = set(normalise(entity).split()) if entity else set()
    words = [w for w in normalise(q).split() if w not in lex.STOPWORDS and w not in ent_words]
    words = [b for w in words for b in (_cjk_bigrams(w) if _CJK.search(w) else [w])]
    if any(p in low for p in lex.NUMBER_CUES) or low.startswith("how many"):
        kind = "number"
    elif low.startswith(("when", "what year", "which year", "in what year", "in which year")) or any(
        p in low for p in lex.DATE_CUES
    ):
        kind = "date"
    else:
        kind = "entity"
    head = next((w for w in words if w in lex.HEADS), "where" if low.startswith("where") else None)
    expanded = list(dict.fromkeys(w for k in words for w in (k, *lex.SYNONYMS.get(k, ()))))
    units = "".join(m.group(1) for m in _CJK_UNIT.finditer(q))
    return Question(kind=kind, entity=entity, keywords=tuple(expanded), head=head, units=units)


def _question_entity(q: str) -> str | None:
    quoted = re.search(r"[\"“”«]([^\"“”»]{2,80})[\"“”»]", q)
    if quoted:
        return quoted.group(1).strip()
    tokens = re.findall(r"[\w'’.&-]+", q)
    best: list[str] = []
    run: list[str] = []
    for i, tok in enumerate(tokens + ["x"]):
        cap = tok[:1].isupper() or tok[:1].isdigit()
        first = i == 0 and tok.lower() in lex.QUESTION_WORDS
        if cap and not first and i < len(tokens):
            run.append(re.sub(r"['’]s$", "", tok))
        else:
            if len(" ".join(run)) > len(" ".join(best)):
                best = run
            run = []
    if not best and tokens:
        return None
    return " ".join(best) or None


def sentences(text: str) -> list[tuple[int, str]]:
    """Split into ``(start offset, sentence)`` pairs."""
    out, pos = [], 0
    for part in _SENTENCE.split(text):
        start = text.find(part, pos)
        if part.strip():
            out.append((max(start, 0), part))
        pos = max(start, 0) + len(part)
    return out


def _cjk_bigrams(word: str) -> list[str]:
    """Character bigrams of a CJK run (CJK text has no spaces to split words on).

    The run is cut at function characters (的, 是, 多少 ...) first, so no bigram
    spans a cut; a one-character piece stays a unigram (the unit in 多少米)."""
    return lex.cjk_grams(word)


def _matches(keyword: str, stems: set[str], raw: str) -> bool:
    return keyword in raw if _CJK.match(keyword) else keyword[:5] in stems


def _sentence_score(q: Question, sentence: str) -> float:
    words = set(normalise(sentence).split())
    stems = {w[:5] for w in words}
    hits = sum(1 for k in q.keywords if _matches(k, stems, sentence))
    ent = q.entity and all(w in words for w in normalise(q.entity).split())
    return hits + (1.5 if ent else 0.0)


def candidates(q: Question, text: str) -> list[Answer]:
    """All typed candidate answers in ``text``, best first (ties by position)."""
    if q.kind == "date":
        found = _date_candidates(q, text)
    elif q.kind == "number":
        found = _number_candidates(q, text)
    else:
        from diagnose.inputs.entities import entity_candidates

        found = entity_candidates(q, text)
    return sorted(found, key=lambda a: (-a.score, a.start))


def _near(text: str, start: int, words: tuple[str, ...] | set[str], window: int = 60) -> bool:
    raw = text[max(0, start - window):start]
    stems = {b[:5] for b in normalise(raw).split()}
    return any(_matches(w, stems, raw) for w in words)


def _date_candidates(q: Question, text: str) -> list[Answer]:
    out = []
    die = any(k.startswith(("die", "death", "dead")) for k in q.keywords)
    for off, sent in sentences(text):
        base = _sentence_score(q, sent)
        matches = list(_DATE.finditer(sent))
        for i, m in enumerate(matches):
            score = base + (1.0 if _near(sent, m.start(), q.keywords) else 0.0)
            after = sent[m.end():m.end() + 4]
            ranged = re.match(r"\s*[–—-]\s*", after) and i + 1 < len(matches)
            if ranged:
                score += -0.5 if die else 0.5
            elif i > 0 and re.search(r"[–—-]\s*$", sent[matches[i - 1].end():m.start()]):
                score += 0.5 if die else -0.5
            score -= 0.01 * i
            key = answer_key(m.group(0), "date")
            years = _YEAR_RANGE.fullmatch(m.group(0).strip())
            if die and years:
                # "1568–1619" asked for a death is the range's end; "1568–92" ends in 1592.
                end = years.group(2)
                key = end if len(end) == 4 else years.group(1)[:2] + end
            out.append(Answer(m.group(0).strip(), key, score, off + m.start()))
    return out


def _number_candidates(q: Question, text: str) -> list[Answer]:
    out = []
    cues = set(q.keywords) | set(lex.COUNT_WORDS)
    ent = set(normalise(q.entity).split()) if q.entity else set()
    for off, sent in sentences(text):
        base = _sentence_score(q, sent) * 0.5
        for m in _NUMBER.finditer(sent):
            span = m.group(0)
            key = answer_key(span, "number")
            if not re.search(r"\d", span) or (_YEAR_ONLY.fullmatch(key) and "," not in span):
                continue
            if span in ("2", "3") and _EXPONENT_UNIT.search(sent[:m.start()]):
                continue
            if re.search(r"[+:]$|\d[-/]$", sent[:m.start()]) or re.match(r"[:/-]\d", sent[m.end():]):
                continue  # a part of a time, a date or an offset ("UTC+5:30", "2022-01-07")
            tail = sent[m.end():m.end() + 16].lstrip()
            after = normalise(tail).split()[:1]
            unit = tail[:1] if _CJK.match(tail[:1]) else ""
            score = base + (2.0 if _near(sent, m.start(), cues, 40) else 0.0)
            counted = after and after[0] in lex.COUNT_WORDS
            # A fraction of people is a rate or a share ("36.4 people per square mile"), not a count.
            fraction = "." in key and (counted or unit in lex.COUNT_WORDS)
            score += 2.0 if (counted or (unit and (unit in q.units or unit in lex.COUNT_WORDS))) and not fraction else 0.0
            score += 1.0 if ent and _near(sent, m.start(), ent, 40) else 0.0
            if sent[m.end():m.end() + 3].strip().startswith(("%", "km", "sq", "/", "mi", "°")) or _RATE.match(tail):
                score -= 3.0
            out.append(Answer(span, key, score, off + m.start()))
    return out
