"""What each sampled output answers, read with the input stage's extractor and normaliser.

Meaning clusters and center pull compare answers, not wordings: "16", "16 weeks" and
"sixteen weeks of paid leave" all answer 16 weeks. The documents' own answers (the
centers' answers, :attr:`diagnose.analysis.InputAnalysis.center_answers`) say what an
answer looks like: the value classes they state (:func:`diagnose.text.value_classes.value_class`)
and the unit words they write them in, or that they answer with names. A sample then

* ``answer``: states a value of one of those classes (a bare number read in the
  documents' unit: "16" where the documents say "16 weeks"; a rate read over the
  period the question asks for: "4 g/day" where the documents give the daily dose as
  "4 g", and an amount read as that rate the other way round), or a name when the
  documents answer with names;
* ``other``: answers something else: it only states values of other classes (a year
  where a duration is asked), or it lists the documents instead of answering (it cites
  two or more of them and states no answer);
* ``none``: states no typed answer at all (free text: embeddings decide its meaning).

References to the documents themselves ("Document [6]", a document id) are not values.
Pure: no model; the texts and the case's documents in, one :class:`SampleAnswer` each out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from diagnose.text.compare import same_value
from diagnose.text.names import name_key, proper_names
from diagnose.text.sentences import content_tokens
from diagnose.text.value_classes import value_class
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

__all__ = ["AnswerFrame", "SampleAnswer", "answer_frame", "read_answers", "same_answer"]

AnswerKind = Literal["answer", "other", "none"]
_INDEX_SLOT = re.compile(r"(\S*)\{index\}(\S*)")
NAME_KEY = "name:"
_UNIT_WORD = re.compile(r"([^\W\d_]+)\W*$")
_PER_TIME = " / [time]"
_PERIODS = (
    ("day", 86_400.0, r"daily|per day|a day|each day|every day|täglich|tages|pro tag|am tag|par jour|quotidien"
                      r"|por día|al día|diari|每日|每天"),
    ("week", 604_800.0, r"weekly|per week|a week|each week|wöchentlich|pro woche|par semaine|semanal|每周"),
    ("hour", 3_600.0, r"hourly|per hour|an hour|each hour|stündlich|pro stunde|par heure|por hora|每小时"),
    ("month", 2_629_800.0, r"monthly|per month|a month|each month|monatlich|pro monat|par mois|mensual|每月"),
    ("year", 31_557_600.0, r"yearly|annual|per year|a year|each year|jährlich|pro jahr|par an|anual|每年"),
)
"""Periods a question can ask an amount over ("the daily dose"): unit word, seconds, how questions say it."""


@dataclass(frozen=True)
class AnswerFrame:
    """What an answer to the question looks like, from the documents' own answers."""

    classes: frozenset[tuple[str, str]]
    """Value classes the documents answer with (empty: they state no typed value)."""
    units: tuple[str, ...]
    """Unit words the documents write their values in, most used first ("weeks")."""
    names: bool
    """The documents answer with names."""
    references: re.Pattern[str] | None
    """How the prompt refers to a document ("[3]", a document id), to mask in samples."""


@dataclass(frozen=True)
class SampleAnswer:
    kind: AnswerKind
    text: str
    """The answer as read ("16 weeks" for a sample saying "16"); "" when none was found."""
    key: str | None = None
    """A name's key (``name:...``) or the value's key; None without an answer."""
    value: Value | None = None
    cites: int = 0
    """Document references the sample makes."""


def answer_frame(center_answers: Mapping[str, Sequence[str]], document_ids: Sequence[str],
                 document_format: str | None = None) -> AnswerFrame:
    """The frame of the documents' answers (values as written, and names) of every center."""
    classes: set[tuple[str, str]] = set()
    units: Counter[str] = Counter()
    names = False
    for spans in center_answers.values():
        for span in spans:
            values = extract_values(span)
            for v in values:
                classes.add(value_class(v))
                if (unit := _UNIT_WORD.search(v.span)) and v.kind in ("quantity", "money", "range"):
                    units[unit.group(1)] += 1
            names = names or (not values and bool(proper_names(span) or span[:1].isupper()))
    return AnswerFrame(frozenset(classes), tuple(u for u, _ in units.most_common()), names and not classes,
                       _reference_pattern(document_ids, document_format))


def _reference_pattern(document_ids: Sequence[str], document_format: str | None) -> re.Pattern[str] | None:
    """Document ids, and the index as the document format writes it ("[3]" for "Document [{index}]")."""
    parts = [rf"(?<!\w){re.escape(i)}(?!\w)" for i in sorted(set(document_ids), key=len, reverse=True) if i]
    layout = document_format or "Document [{index}] (id: {id})"
    if (slot := _INDEX_SLOT.search(layout)) and (slot.group(1) or slot.group(2)):
        before, after = re.escape(slot.group(1)[-1:]), re.escape(slot.group(2)[:1])
        parts.append(rf"{before}\s*\d{{1,3}}\s*{after}")
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def read_answers(texts: Sequence[str], frame: AnswerFrame, question: str = "") -> list[SampleAnswer]:
    """One :class:`SampleAnswer` per text (see the module docstring)."""
    return [_read(text, frame, question) for text in texts]


def _read(text: str, frame: AnswerFrame, question: str) -> SampleAnswer:
    cites = 0
    if frame.references is not None:
        text, cites = frame.references.subn(" ", text)
    values = extract_values(text)
    if frame.classes:
        # A value written in the documents' class beats one read into it ("1. ... 8611米": 8611 m, not 1 m).
        read = next((v for v in values if value_class(v) in frame.classes), None) or next(
            (r for v in values if (r := _in_frame(v, frame, question)) is not None), None)
        if read is not None:
            return SampleAnswer("answer", read.span, read.key, read, cites)
        return SampleAnswer("other" if values or cites >= 2 else "none", "", None, None, cites)
    if frame.names:
        asked = set(content_tokens(question))
        for name, _ in proper_names(text):
            tokens = content_tokens(name)
            if tokens and not all(t in asked for t in tokens):
                return SampleAnswer("answer", name, NAME_KEY + name_key(name), None, cites)
    return SampleAnswer("other" if cites >= 2 else "none", "", None, None, cites)


def _in_frame(v: Value, frame: AnswerFrame, question: str = "") -> Value | None:
    """``v`` as an answer of the frame: itself when of one of its classes; a bare number
    read in the documents' unit, or a quantity read over the period the question asks for
    (:func:`_over_period`), when that makes it one; None otherwise."""
    if value_class(v) in frame.classes:
        return v
    if v.kind == "quantity":
        read = _over_period(v, question)
        return read if read is not None and value_class(read) in frame.classes else None
    if v.kind != "number":
        return None
    for unit in frame.units:
        for read in extract_values(f"{v.span} {unit}"):
            if value_class(read) in frame.classes:
                return read
    return None


def _asked_period(question: str) -> tuple[str, float] | None:
    """The period the question asks an amount over (unit word, seconds), or None."""
    lowered = question.lower()
    return next(((unit, seconds) for unit, seconds, words in _PERIODS if re.search(words, lowered)), None)


def _over_period(v: Value, question: str) -> Value | None:
    """A quantity read over the period the question asks for: a rate over exactly that period
    as its amount, as written before the period ("4 g/day" asked daily: "4 g"), an amount as
    the rate over that period ("4 g" asked daily: "4 g/day"); None when the question names no
    period, or the rate is over another one."""
    period = _asked_period(question)
    if period is None or v.magnitude is None:
        return None
    unit, seconds = period
    if not v.dimension.endswith(_PER_TIME):
        return next(iter(extract_values(f"{v.span}/{unit}")), None)
    amount = v.dimension.removesuffix(_PER_TIME)
    for end in sorted((i for i, ch in enumerate(v.span) if ch in " /"), reverse=True):
        found = extract_values(v.span[:end])
        if (len(found) == 1 and found[0].dimension == amount and found[0].magnitude is not None
                and abs(found[0].magnitude - v.magnitude * seconds) <= 0.005 * found[0].magnitude):
            return found[0]
    return None


def same_answer(a: SampleAnswer, b: SampleAnswer) -> bool:
    """Two answers say the same: equal values (the extractor's ``same_value``) or equal name keys."""
    if a.kind != "answer" or b.kind != "answer":
        return False
    if a.value is not None and b.value is not None:
        return same_value(a.value, b.value)
    return a.key is not None and a.key == b.key
