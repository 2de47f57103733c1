"""Answers from a reader that reads (:mod:`diagnose.reader`): the centers' keys.

With the reference reader (or a server) the reader's answers decide, and the static
tier's signals are features beside them, not the other way round:

- yes/no questions: the document's stance is the sign of its yes-minus-no margin and
  its strength the margin's size. Not centred on the reader's lean (its margin on a
  blank document): with no "not stated" to say, the reader answers a blank document
  with a firm no, and centring on that turned every document of a dev case to yes;
- other questions: an answer the reader says is not stated is no answer, nor is a bare yes
  or no (a small reader answers "Which war…?" with "No" when the document does not say), nor one
  that only repeats what the question asks ("Aircraft" for "What type of aircraft…?"), nor one
  whose typed values its document does not state (no value the parser finds in the document
  equals them): a small reader that finds nothing to answer sometimes writes a value of its
  own (its prompt's example, a number from the question) instead of "not stated", and in words
  too (an answer in words none of whose own words its document holds is none; a page whose reading
  gives only values it states nowhere takes the text rules' value instead, :func:`misread_by_text`), nor one its
  document states only as a condition ("orders over $50") when the question asks for none, nor one
  whose only values are bare figures of a kind the question does not ask for ("Contents, 23" for
  "When does it close?"). A value its document writes only in table cells that the question's
  subject leaves out (another plan's column) stands for the one in the cell the subject names
  in that row ("$49" read from the Enterprise column, for the Pro plan: the Pro cell's "$19").
  Otherwise
  two answers with a stated typed value in common are one answer
  (:func:`~diagnose.text.values.extract_values` and :func:`~diagnose.text.compare.same_value`:
  "3 g" equals "3,000 mg", "EUR 180" equals "180 euros", "6 caplets (3,000 mg)" equals "3 g";
  a value the question itself states is a condition, not an answer: "in 24 hours" joins nothing,
  but a number in a name it gives may be one: "500 laps" for "the Harrow 500 race", which the
  static tier, picking values from texts that repeat the name, still treats as the question's);
  a free-text answer with equal normalised text or an embedding cosine of at least
  ``read_answer_similarity``, or one short answer within another or closing a sentence, or a
  sentence answer that another one opens and goes on from;
- two documents whose readings say they are about two things of one name (their ``about``
  readings share a word but are otherwise unlike: a cosine under ``reader_entity_similarity``)
  never share a key because a typed value matches: a team and a console named alike that
  share a year stay apart. Equal words are one answer whoever gives them: two clubs of one
  name that both play basketball answer "basketball" alike (and a page's ``about`` reading
  drifts more often than a name matches by chance).

Keys are ``reader:<k>``: hard keys, so two documents with different keys are never one
center (:func:`diagnose.inputs.centers.group_documents`).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np

from diagnose.inputs.answers import NO, YES, DocAnswer, measured_as, physical_amount, restates, year_like
from diagnose.inputs.claims import Claim
from diagnose.reader.prompt import states_nothing
from diagnose.text.compare import comparable, half_a_day_later, range_end, same_value, written_magnitude
from diagnose.text.conditions import asks_bound, asks_condition, is_condition
from diagnose.text.lifespans import asked_end, asked_life_event
from diagnose.text.names import abbreviates, named_apart
from diagnose.text.normalise import normalise_text
from diagnose.text.numerals import number_marks
from diagnose.text.questions import (
    COUNT, asked_dimensions, asked_value_kinds, predicate_text, stated_values, subject_text,
)
from diagnose.text.roles import asks_count
from diagnose.text.sentences import cjk_share, clause_end, content_tokens, overlap, split_sentences
from diagnose.text.tables import named_cell, names_cell, table_cell
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

if TYPE_CHECKING:
    from diagnose.embedding import Embedder
    from diagnose.inputs.reading import DocumentReading
    from diagnose.inputs.settings import InputSettings

__all__ = ["READER_PREFIX", "found_nothing", "misread_by_text", "reader_answers"]

READER_PREFIX = "reader:"


def reader_answers(readings: "list[DocumentReading]", claims: list[list[Claim]], embedder: "Embedder",
                   yes_no: bool, settings: "InputSettings", texts: list[str],
                   question: str = "") -> list[DocAnswer | None]:
    """Per document, its answer as the reader read it (see the module docstring); ``texts``
    are the documents it read, ``question`` what it was asked."""
    if yes_no:
        return [_stance(r, c) for r, c in zip(readings, claims)]
    given = stated_values(question)
    conditions_answer, bound_asked = asks_condition(question), asks_bound(question)
    kinds, measures = asked_value_kinds(question), asked_dimensions(question)
    counted, life_event = asks_count(question), asked_life_event(question)
    asked = set(content_tokens(question))
    subject = content_tokens(subject_text(question))
    # The question's own words outside its names, which no answer may only repeat (none when it offers choices).
    asks_with = set() if _offers_choice(question) else set(normalise_text(predicate_text(question)).split())
    nothing = found_nothing(readings, texts, question, yes_no)
    answers = [None if none or _yes_or_no(r.answer) else r.answer for r, none in zip(readings, nothing)]
    values: list[list[Value]] = []
    in_texts: list[list[Value]] = []  # each document's values, read once (none where its answer has none)
    for i, (answer, text) in enumerate(zip(answers, texts)):
        written = extract_values(answer) if answer else []
        if answer and not written and _echoes(answer, asks_with):
            answers[i] = answer = None
        own = [v for v in written if not any(restates(v, g) for g in given)]
        in_text = extract_values(text) if own else []
        in_texts.append(in_text)
        own = [x for x in (_in_named_cell(v, text, in_text, subject) for v in own) if x is not None]
        own = [_in_asked_clause(_as_written(v, in_text), text, in_text, asked, given) for v in own]
        own = [asked_end(v, text, in_text, life_event) for v in own]
        stated = _in_role(_stated_in(own, text, in_text, conditions_answer, bound_asked), kinds, measures)
        if written and not stated:
            answers[i] = None
        values.append([] if not kinds and _incidental(answer, written, asked, bool(measures)) else stated)
    same_answer = _same_answer(answers, values, embedder, settings.read_answer_similarity, asked)
    same_thing = _same_thing([r.about for r in readings], embedder, settings.reader_entity_similarity)
    typed = [bool(v) for v in values]
    group = _groups([a is not None for a in answers],
                    lambda i, j: same_answer[i, j] and (same_thing[i, j] or not (typed[i] and typed[j])))
    out: list[DocAnswer | None] = []
    for i, answer in enumerate(answers):
        if answer is None:
            out.append(None)
            continue
        v = _shared_value(values, group, i, counted)
        claim = _quoted_claim(i, texts[i], in_texts[i], claims[i], answer, v, bound_asked)
        out.append(DocAnswer(f"{READER_PREFIX}{group[i]}", v.span if v else _answer_part(answer, asked), claim, v, 1.0))
    return out


def misread_by_text(found: list[DocAnswer | None], static: list[DocAnswer | None],
                    readings: "list[DocumentReading]", texts: list[str], nothing: list[bool]) -> list[DocAnswer | None]:
    """:func:`reader_answers`' answers (``found``), where a page whose reading gives only values its
    text states nowhere, in any role (a condition, an end of a range, a year of a date) or writing (a
    misread: "18:00 - 21:00" read from "9時から18時"), takes the value its reading miscopied
    (:func:`_miscopied`: "1985" read from "25 April 1885"), else the typed value the text rules read
    in it (``static``, the static tier's answers), under the key of the reader's answer that gives
    that value or a key of its own: left answerless, it would join whichever center its embedding
    lies nearest. A reading dropped for another reason (a stated value in another role, half of a
    range) or that found nothing (``nothing``, :func:`found_nothing`) keeps no answer."""
    out = list(found)
    for i, answer in enumerate(found):
        own = static[i]
        read = extract_values(readings[i].answer) if answer is None and not nothing[i] else []
        in_text = extract_values(texts[i]) if read else []
        if not read or _stated_in(read, texts[i], in_text, conditions_answer=True, bound_asked=True):
            continue
        if (copied := _miscopied(read, in_text)) is not None:
            own = DocAnswer("", copied.span, _quoted_claim(i, texts[i], in_text, [], copied.span, copied, True),
                            copied, 1.0)
        if own is None or own.value is None:
            continue
        same = next((a for a in found if a is not None and a.value is not None and same_value(a.value, own.value)), None)
        out[i] = DocAnswer(same.key if same else f"{READER_PREFIX}text:{i}", own.span, own.claim, own.value,
                           own.strength)
    return out


def _miscopied(read: list[Value], in_text: list[Value]) -> Value | None:
    """The value of a text that a reading's values (``read``, none stated in it) miscopy: written
    with the same digits but one ("1985" read from "25 April 1885", "12:00–12:00" from
    "10:00–12:00"), where the text writes one such number (its first value that does); None when it
    writes none or several ("1675" beside 1575, 1605 and 1615 names no one of them)."""
    read_forms = {f for v in read for f in _digit_forms(v)}
    matches = [(f, w) for w in in_text for f in _digit_forms(w) if any(_one_digit_apart(f, r) for r in read_forms)]
    return matches[0][1] if len({f for f, _ in matches}) == 1 else None


def _digit_forms(v: Value) -> set[str]:
    """The digits ``v`` is written with (three at least), and a date's year: "1885" and "251885" of
    "25 April 1885"."""
    forms = {"".join(ch for ch in v.span if ch.isdigit())}
    if v.kind == "date" and _iso(v)[:4].isdigit():  # not "--07-06" (no year) nor "-0753"
        forms.add(_iso(v)[:4])
    return {f for f in forms if len(f) >= 3}


def _one_digit_apart(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def _answer_part(answer: str, asked: set[str]) -> str:
    """A free-text answer without the words it repeats from the question (``asked``: its content
    tokens) at either end, so that it labels its center by what it answers: "Alexander Fleming" of
    "Alexander Fleming discovered penicillin", "Warsaw, then part of the Russian Empire" of "Marie
    Curie was born in Warsaw, then part of the Russian Empire" (the whole answer when nothing is left).
    Each of the question's words is repeated once: a word it has already given begins the answer
    ("Harrow Vale regionalism" of "The ideology of the Harrow Vale League is Harrow Vale regionalism")."""
    words = answer.split()
    start, end = 0, len(words)
    given: set[str] = set()
    while start < end and _restates(words[start], asked, given):
        start += 1
    given.clear()
    while end > start and _restates(words[end - 1], asked, given):
        end -= 1
    part = " ".join(words[start:end]).strip(" ,;:.")
    return part or answer


def _restates(word: str, asked: set[str], given: set[str]) -> bool:
    """Whether ``word`` goes on restating the question (:func:`_repeats`) with a word of it not yet
    ``given`` (a grammar word always does); ``given`` gains the word's tokens."""
    tokens = set(content_tokens(word))
    if not _repeats(word, asked) or (tokens and tokens <= given):
        return False
    given |= tokens
    return True


def _shared_value(values: list[list[Value]], group: list[int], i: int, counted: bool) -> Value | None:
    """The value document ``i``'s answer gives: of its typed values, the one most others of its group
    (``group``: each document's group) also give; on a tie, unless the question asks how many
    (``counted``), an amount (a quantity, money or a share) before a bare number beside it (the
    count of what the amount is made of); then the first.
    "8 tablets of 500 mg (4 g) in 24 hours" among answers of "4,000 mg" gives "4 g", not the count
    it opens with, and so does "8 caplets (4 g)" alone."""
    if not values[i]:
        return None
    others = [values[j] for j in range(len(values)) if j != i and group[j] == group[i]]
    counts_last = not counted and any(v.kind in _AMOUNTS for v in values[i])
    return max(values[i], key=lambda v: (sum(any(_same_typed(v, w) for w in ws) for ws in others),
                                         not (counts_last and v.kind == "number")))


def _quoted_claim(doc: int, text: str, in_text: list[Value], doc_claims: list[Claim], answer: str,
                  v: Value | None, bound_asked: bool) -> Claim | None:
    """The claim a conflict's evidence quotes for a document's answer: the sentence of ``text``
    that states the answer's value ``v`` (``in_text``: the document's values; where it is written
    in full, there), or for an answer in words the sentence that shares most of its words, so that
    two sides are quoted by what they answer, not by their titles. One of the document's best
    claims (``doc_claims``) when it is that sentence; the first of them when no sentence holds the
    answer."""
    sentences = split_sentences(text)
    if v is not None:
        # The value as written first: a year alone (a heading's "2025") also states a date in it.
        written = min((w for w in in_text if _states(v, w, bound_asked)), key=lambda w: w.key != v.key, default=None)
        at = written.start if written else None
        stating = [s for s in sentences if at is not None and s.start <= at < s.start + len(s.text)]
    else:
        words = content_tokens(answer)
        shares = [overlap(words, s.text) for s in sentences]
        stating = [sentences[shares.index(max(shares))]] if words and shares and max(shares) > 0 else []
    if not stating:
        return doc_claims[0] if doc_claims else None
    sentence = stating[0]
    known = next((c for c in doc_claims if c.sentence == sentence), None)
    return known or Claim(doc=doc, sentence=sentence, score=0.0, values=tuple(extract_values(sentence.text)),
                          polarity=1)


def _stance(r: "DocumentReading", doc: list[Claim]) -> DocAnswer | None:
    if r.yes_margin is None:
        return None
    claim = doc[0] if doc else None
    return DocAnswer(YES if r.yes_margin >= 0 else NO, claim.sentence.text if claim else r.answer, claim, None,
                     abs(r.yes_margin))


def _yes_or_no(answer: str) -> bool:
    """A bare yes or no (the words the reader is told to use) answers no open question."""
    return answer.strip().lower().rstrip(".!") in (YES, NO)


_CHOICE = re.compile(r"\b(?:or|ou)\b|还是|或者|それとも|または", re.IGNORECASE)
"""Words that offer the question's own alternatives ("Team or Enterprise?"): its words then answer it."""


def found_nothing(readings: "list[DocumentReading]", texts: list[str], question: str, yes_no: bool) -> list[bool]:
    """Per document, whether the reader found no answer in it: it says so (``not stated``), or it
    answers in words none of which its document holds (:func:`_unread`). Such a page answers
    nothing, so it joins no center by its embedding: it is noise. A yes/no reading always answers."""
    if yes_no:
        return [False] * len(readings)
    asked = set(content_tokens(question))
    return [states_nothing(r.answer) or (not extract_values(r.answer) and _unread(r.answer, text, asked))
            for r, text in zip(readings, texts)]


def _unread(answer: str, text: str, asked: set[str]) -> bool:
    """An answer in words none of whose own words (outside the question's) its document holds:
    the reader wrote it from what it knows, not from the page ("Basketball" for a page on a
    tennis player), as it writes a number of its own; one such word read suffices, since a
    reader rewords ("right-wing" for "far-right"). The yes and no it is told to use are no words of
    a page, and words in another script than the page's may translate it ("Beijing" for 北京)."""
    if (cjk_share(answer) > 0.5) != (cjk_share(text) > 0.5):
        return False
    own = set(content_tokens(_own_words(answer, asked))) - asked - set(content_tokens(f"{YES} {NO}"))
    return bool(own) and not own & set(content_tokens(normalise_text(text)))


def _offers_choice(question: str) -> bool:
    return _CHOICE.search(question) is not None


def _echoes(answer: str, asks_with: set[str]) -> bool:
    """Whether ``answer``, written without a value, only repeats the question's own words outside
    its names (``asks_with``: what it asks, not whom, normalised:
    :func:`~diagnose.text.questions.predicate_text`), word for word: "Aircraft" for "What type of
    aircraft flew Route 9?" names what is asked. A name the question gives may be the answer ("Who
    is the hero of Tom Thumb?": "Tom Thumb"), and so may a word that only shares a stem with the
    question's ("Professor" for a profession)."""
    words = {w for w in normalise_text(answer).split() if content_tokens(w)}
    return bool(words) and words <= asks_with


_BARE_KINDS = frozenset({"number", "date"})
"""Kinds a stray figure of a page takes (a page number, a year in a heading)."""


def _in_role(values: list[Value], kinds: frozenset[str] | None, dimensions: frozenset[str] = frozenset()) -> list[Value]:
    """``values`` without the bare figures of a kind the question does not ask for (``kinds``:
    :func:`~diagnose.text.questions.asked_value_kinds`): "When does enrolment close?" is not
    answered by "Contents, 23", nor "How many seats?" by a year. A value with a unit or a form of
    its own stays (a time of day answers "when", a phone number "what number"), and so does every
    value when the question's grammar does not say (None) or it asks for a name (empty): there a
    number inside the name tells two names apart ("Apollo 11"). Nor, when the question names a
    physical measure (``dimensions``: :func:`~diagnose.text.questions.asked_dimensions`), an amount
    measured otherwise: "What is the input voltage?" is not answered by "rated for 75 °C", nor, when
    it asks a count (:data:`~diagnose.text.questions.COUNT`), any amount: "What is the population?"
    is not answered by "421 km²". Where it names only physical measures and its grammar asks for no
    kind (None), no figure without a measure answers it either (:func:`_unmeasured`): "What is the
    input voltage range?" is not answered by the "18" and the "14 AWG" (read as money) of "18-14 AWG
    copper wire"."""
    if COUNT in dimensions or any(d.startswith("[") for d in dimensions):
        values = [v for v in values if not (physical_amount(v) and not measured_as(v, dimensions))]
    if kinds is None and dimensions and all(d.startswith("[") for d in dimensions):
        values = [v for v in values if not _unmeasured(v, dimensions)]
    if not kinds:
        return values
    return [v for v in values if v.kind in kinds or v.kind not in _BARE_KINDS
            or ("date" in kinds and (year_like(v) or _span_years(v) is not None))]


def _unmeasured(v: Value, dimensions: frozenset[str]) -> bool:
    """Whether ``v`` is a figure with no measure of those the question names (``dimensions``): a
    bare number, a range of them, a date, an amount of money or a share. A value with a form of its
    own (an address, a time of day, a version) is not one: a question's unit word may be a verb of
    it ("request")."""
    if measured_as(v, dimensions):
        return False
    return v.kind in _BARE_KINDS | {"money", "percent"} or v.key.startswith("range:number:")


def _span_years(v: Value) -> tuple[str, str] | None:
    """The two years of a range of bare numbers written as years ("1900 to 1904"), else None: such
    a span answers "When was he elected?" as a year does, and a page that states both years states it."""
    m = re.fullmatch(r"range:number:(\d{3,4}):(\d{3,4})", v.key) if v.kind == "range" else None
    return (m[1], m[2]) if m else None


def _year(w: Value) -> str | None:
    """The year ``w`` is, as four digits' text without leading zeros ("1904"): a date of a year
    alone or a bare number written as one; None for anything else."""
    if w.kind == "date" and len(_iso(w)) == 4:
        return _iso(w).lstrip("0")
    return w.span.strip() if year_like(w) else None


def _stated_in(values: list[Value], text: str, in_text: list[Value], conditions_answer: bool = True,
               bound_asked: bool = False) -> list[Value]:
    """Those of ``values`` that the document (``text``; ``in_text``, the values in it) states, in
    any unit or writing. Not an end of a range, unless the question asks for a bound (``bound_asked``: "the maximum operating
    temperature" is the top of "-40 °C to 85 °C"): otherwise a reader that answers "264 V" from
    "85 V to 264 V" has read half an answer. Nor, unless ``conditions_answer`` (the question asks
    for a bound or an age), a value the document states only as a condition
    (:func:`diagnose.text.conditions.is_condition`): "$50" read from "orders over $50 ship free" for
    the price of shipping."""
    if not values:
        return []
    found = [w for w in in_text if conditions_answer or not is_condition(text, w)]
    years = {y for y in (_year(w) for w in found) if y}
    return [v for v in values if any(_states(v, w, bound_asked) for w in found)
            or ((span := _span_years(v)) is not None and set(span) <= years)]


def _states(v: Value, w: Value, bound_asked: bool) -> bool:
    """Whether the document's value ``w`` states the answer's ``v`` (in any unit or writing; its
    year; an end of it when a bound is asked)."""
    return _same_typed(v, w) or _year_of(v, w) or (bound_asked and range_end(v, w))


def _as_written(v: Value, in_text: list[Value]) -> Value:
    """``v``, or, where it is a time of day the reader wrote without its part of the day and its
    document writes only twelve hours on, the document's value: "2:00–4:00" read from
    "下午2点至4点" is that afternoon's (:func:`~diagnose.text.compare.half_a_day_later`)."""
    if any(_same_typed(v, w) for w in in_text):
        return v
    return next((w for w in in_text if half_a_day_later(v, w)), v)


def _in_asked_clause(v: Value, text: str, in_text: list[Value], asked: set[str], given: list[Value]) -> Value:
    """``v``, or, where every sentence of its document that states it also states another amount
    of its measure whose part of the sentence holds more of the question's words (``asked``), that
    amount: for Economy, "18 kg" read from "12 kg in Economy and 18 kg in Business" is "12 kg". An
    amount's part runs from the end of the clause of the amount before it (or the sentence's start)
    to the end of its own clause (:func:`~diagnose.text.sentences.clause_end`), so a condition
    written before it is its own ("with insurance, 100%; without, 60%"). A rival is written in the
    unit the document writes ``v`` in (:func:`_written_unit`), and is no amount the question
    states (``given``): that is its condition."""
    if v.kind not in _AMOUNTS:
        return v
    rival = None
    for s in split_sentences(text):
        here = sorted((w for w in in_text if s.start <= w.start < s.start + len(s.text) and comparable(v, w)),
                      key=lambda w: w.start)
        mine = [k for k, w in enumerate(here) if _same_typed(v, w)]
        if not mine:
            continue
        ends = [clause_end(s.text, w.end - s.start) for w in here]
        starts = [0] * len(here)  # amounts of one clause share its part
        for k in range(1, len(here)):
            starts[k] = starts[k - 1] if ends[k - 1] == ends[k] else ends[k - 1]
        fit = [len(asked & set(content_tokens(s.text[a:b]))) for a, b in zip(starts, ends)]
        units = {_written_unit(here[k]) for k in mine}
        rivals = (k for k, w in enumerate(here) if k not in mine and _written_unit(w) in units
                  and not any(restates(w, g) for g in given))
        best = max(rivals, key=fit.__getitem__, default=None)
        if best is None or fit[best] <= max(fit[k] for k in mine):
            return v
        rival = rival or here[best]
    return rival or v


_AMOUNTS = frozenset({"quantity", "money", "percent"})


def _written_unit(v: Value) -> str:
    """How ``v``'s unit is written ("kg" of "12 kg", "天" of "5天", "$" of "$19"): amounts of one
    sentence in one writing are listed alike ("12 kg in Economy and 18 kg in Business"), where a
    "10年" beside a "5天" is the condition of another clause ("after 10 years, 10 days")."""
    return re.sub(r"[\d\s.,'’]+", "", v.span).lower()


def _in_named_cell(v: Value, text: str, in_text: list[Value], subject: list[str]) -> Value | None:
    """``v``, or, where its document writes it only in table cells that the question's subject
    leaves out (another plan's column, another model's row), the value of its kind in the cell
    the subject names in their stead (:func:`diagnose.text.tables.named_cell`): a reader that
    answers "$49" from the Enterprise column for the Pro plan read the right row under the wrong
    column. None when that cell holds no one such value."""
    where = [table_cell(text, w.start) for w in in_text if _same_typed(v, w)]
    if not where or any(cell is None or names_cell(subject, cell) for cell in where):
        return v
    named = named_cell(subject, where[0])
    found = [w for w in extract_values(named or "") if w.kind == v.kind and w.dimension == v.dimension]
    return found[0] if len(found) == 1 else None


def _year_of(v: Value, w: Value) -> bool:
    """Whether ``v``, a bare number written as a year, is the year of the date ``w``: "1530" is
    stated by "(1530–1556)" or "27 May 1530", which the parser reads as dates."""
    return year_like(v) and w.kind == "date" and _iso(w)[:4] == v.span.strip().zfill(4)


def _in_year(a: Value, b: Value) -> bool:
    """Whether ``a`` is a year alone (a bare number written as one, or a date of a year) and ``b`` a
    date in it: "1555" and "6 July 1555" are one answer, the first only less precise."""
    if b.kind != "date":
        return False
    if a.kind == "date":
        return len(_iso(a)) == 4 and _iso(b)[:4] == _iso(a)
    return _year_of(a, b)


def _iso(date: Value) -> str:
    """A date value's ISO form as its key holds it: "1555", "1555-07-06", "--07-06" (no year)."""
    return date.key.split(":", 1)[1]


def _same_answer(answers: list[str | None], values: list[list[Value]], embedder: "Embedder",
                 similarity: float, asked: set[str]) -> np.ndarray:
    """``(n, n)`` bool: a typed value in common ("6 caplets (3,000 mg)" and "3 g"), or (neither
    typed) equal or near-equal free text, compared without the question's own words, one short
    answer within the other, or one written as the other's initials ("R" and "Republican"); never
    two free answers told apart by their numbers ("the First Carrow War", "the Second Carrow War":
    :func:`~diagnose.text.numerals.number_marks`) or by one word of a name ("Harrow United", "Harrow
    City": :func:`~diagnose.text.names.named_apart`). ``asked``: the question's content tokens."""
    n = len(answers)
    norm = [_own_words(a, asked) if a else "" for a in answers]
    words = [set(content_tokens(x)) for x in norm]
    free = [i for i in range(n) if answers[i] and not values[i]]
    cos = _cosines([norm[i] for i in free], embedder)
    marks = [number_marks(a) if a else frozenset() for a in answers]
    at = {i: k for k, i in enumerate(free)}
    same = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(n):
            if not answers[i] or not answers[j]:
                continue
            if values[i] and values[j]:
                same[i, j] = any(_same_typed(a, b) or _in_year(a, b) or _in_year(b, a)
                                 for a in values[i] for b in values[j])
            elif not values[i] and not values[j]:
                numbered_apart = marks[i] and marks[j] and marks[i] != marks[j]
                same[i, j] = not numbered_apart and not named_apart(answers[i], answers[j]) and (
                    norm[i] == norm[j] or cos[at[i], at[j]] >= similarity or _contains(words[i], words[j])
                    or _ends_with_phrase(norm[i], words[i], norm[j], words[j])
                    or _goes_on_from(norm[i], words[i], norm[j], words[j])
                    or abbreviates(answers[i], answers[j]) or abbreviates(answers[j], answers[i]))
            else:
                same[i, j] = norm[i] == norm[j]
    return same


_SHORT_ANSWER = 3
"""Content words of a short answer; a longer one is a sentence, whose words also name its subject."""


def _incidental(answer: str | None, written: list[Value], asked: set[str], measured: bool = False) -> bool:
    """Whether the values written in ``answer`` are a detail of a sentence rather than the answer:
    as many content words besides them and the question's (``asked``) as a short answer has
    (:data:`_SHORT_ANSWER`).
    "Glass Harbour is a 1981 Danish crime thriller" answers with a genre, not a year. When the
    question asks for a measure (``measured``: it names one, :func:`~diagnose.text.questions.asked_dimensions`),
    an amount with a unit is what the sentence answers with: "8 tablets of 500 mg (4 g) in 24 hours,
    with at least 4 hours between doses" for a daily dose."""
    if not answer or not written or (measured and any(v.kind not in _BARE_KINDS for v in written)):
        return False
    rest = answer
    for v in written:
        rest = rest.replace(v.span, " ")
    return len(set(content_tokens(rest)) - asked) >= _SHORT_ANSWER


def _contains(x: set[str], y: set[str]) -> bool:
    """Whether one short answer's content words (``x``, ``y``) hold all of the other's: "Handball
    player" and "Handball", "Crime drama" and "drama" (a narrower answer within a broader one). Not
    a sentence: "Harrow Vale" is within "the Kellin Institute of Harrow Vale is located in Dunmore"."""
    return bool(x and y) and max(len(x), len(y)) <= _SHORT_ANSWER and (x <= y or y <= x)


def _ends_with_phrase(x: str, x_words: set[str], y: str, y_words: set[str]) -> bool:
    """Whether a sentence answer (one of ``x``, ``y``: normalised own words) holds the other, a short
    answer (:data:`_SHORT_ANSWER` content words at most), as its closing phrase: "became a member of the
    Harrow Union" and "Harrow Union". Only at its end, where a sentence states what it answers."""
    if len(x_words) < len(y_words):
        x, x_words, y, y_words = y, y_words, x, x_words
    return bool(y_words) and len(y_words) <= _SHORT_ANSWER < len(x_words) and x.endswith(" " + y)


def _goes_on_from(x: str, x_words: set[str], y: str, y_words: set[str]) -> bool:
    """Whether one sentence answer (more than :data:`_SHORT_ANSWER` content words; ``x``, ``y``:
    normalised own words) is the other's opening: "is printed weekly by the Dunmore Press" and
    "is printed weekly by the Dunmore Press, which bought it in 1990" state one thing, the second
    with more detail (a reply cut short or run on)."""
    if len(x) > len(y):
        x, x_words, y, y_words = y, y_words, x, x_words
    return len(x_words) > _SHORT_ANSWER and y.startswith(x + " ")


def _own_words(answer: str, asked: set[str]) -> str:
    """The normalised answer's content words that are not the question's (``asked``: its content
    tokens): "KI is located in Harrow Vale" and "KI is located in Dunmore" differ in what they
    answer, not in what they repeat, and "The sport Ilse Marten specializes in is handball" answers
    "handball"."""
    words = normalise_text(answer).split()
    own = [w for w in words if not _repeats(w, asked)]
    return " ".join(own) or " ".join(words)


def _repeats(word: str, asked: set[str]) -> bool:
    """Whether an answer's ``word`` only repeats the question (``asked``: its content tokens) or is
    a grammar word."""
    tokens = content_tokens(word)
    return not tokens or set(tokens) <= asked


_WRITTEN_MAGNITUDE = frozenset({"money", "percent"})
"""Kinds whose magnitude is the number as written (a quantity's is in base units: 4,000 mg is 0.004 kg)."""


def _same_typed(a: Value, b: Value) -> bool:
    """Equal values, or a bare number equal to the number written in an amount of money or a
    percentage (the reader left the unit out: "24" beside "$24", and beside "$24 a month")."""
    if same_value(a, b):
        return True
    measured = b if a.kind == "number" else a
    if (a.kind == "number") == (b.kind == "number") or measured.kind not in _WRITTEN_MAGNITUDE:
        return False
    x, y = written_magnitude(a), written_magnitude(b)
    return x is not None and y is not None and math.isclose(x, y, rel_tol=0.005)


def _same_thing(abouts: list[str | None], embedder: "Embedder", similarity: float) -> np.ndarray:
    """``(n, n)`` bool: the documents are about one thing, unless both ``about`` readings give a
    name and a kind ("Jaguar, a sports team": the reader is asked for both), the names share a
    word, and the kinds are unlike (cosine below ``similarity``): a team and a console named
    alike are two things; "Master Services Agreement" and "Brightline Data Services LLC"
    (no kinds given) only describe one from two sides (unknown counts as the same), and so do two
    kinds of one name that says its own kind (:func:`_names_its_kind`)."""
    n = len(abouts)
    parts = [_name_and_kind(a) for a in abouts]
    known = [i for i in range(n) if parts[i] is not None]
    kinds = _cosines([normalise_text(parts[i][1]) for i in known], embedder)
    at = {i: k for k, i in enumerate(known)}
    same = np.ones((n, n), bool)
    for i in known:
        for j in known:
            names = set(content_tokens(parts[i][0])), set(content_tokens(parts[j][0]))
            one_name = bool(names[0] & names[1])
            same[i, j] = not one_name or kinds[at[i], at[j]] >= similarity or (
                names[0] == names[1] and (_names_its_kind(parts[i]) or _names_its_kind(parts[j])))
    return same


_KIND_DETAIL = re.compile(r"\s(?:of|for|in|by|from|with|at|de|du|des|pour)\s.*$", re.IGNORECASE)


def _names_its_kind(part: tuple[str, str]) -> bool:
    """Whether a name already says its kind ("Quillstack Business plan, a business plan for growing
    teams"): then another reading's kind of the same name ("a subscription service") describes that
    thing in other words, not a second thing of its name."""
    name, kind = part
    return bool(set(content_tokens(_KIND_DETAIL.sub("", kind))) & set(content_tokens(name)))


def _name_and_kind(about: str | None) -> tuple[str, str] | None:
    """("Jaguar", "sports team") from "Jaguar, a sports team"; None without a kind. What follows
    another comma is detail, not the kind ("Jaguar, a sports team, founded by … in …")."""
    if not about or "," not in about:
        return None
    name, kind = (part.strip() for part in about.split(",", 2)[:2])
    kind = re.sub(r"^(?:an?|the)\s+", "", kind, flags=re.IGNORECASE)
    return (name, kind) if name and kind else None


def _cosines(texts: list[str], embedder: "Embedder") -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), np.float32)
    emb = embedder.encode(texts)
    return emb @ emb.T


def _groups(answered: list[bool], joins) -> list[int]:
    """Group index per answered document: each joins the first group more than half of whose
    members it joins (``joins(i, j)``): one reading of what a document is about that went astray
    ("a hiking backpack" among pages on one tent) does not split a group it otherwise joins."""
    groups: list[list[int]] = []
    label = [-1] * len(answered)
    for i, ok in enumerate(answered):
        if not ok:
            continue
        for k, members in enumerate(groups):
            if 2 * sum(joins(i, j) for j in members) > len(members):
                members.append(i)
                label[i] = k
                break
        else:
            groups.append([i])
            label[i] = len(groups) - 1
    return label
