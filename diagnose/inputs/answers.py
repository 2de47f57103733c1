"""Each document's answer to the question, from its claims.

- Yes/no questions: the answer is the stance of the document's best claims
  (their polarity relative to the question, weighted by relevance).
- Other questions: when the documents' best claims carry typed values, the
  answer class is the value class (kind and dimension) the documents' claims
  support most, and each document answers with its best value of that class;
  near-ties go to a value another document states (two mentions of one
  passage, equally relevant, are likelier to be the shared answer).
- Otherwise no key: the document groups by what it is about (embeddings).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from diagnose.inputs.claims import Claim
from diagnose.inputs.stance import camps
from diagnose.text.compare import comparable, same_value
from diagnose.text.conditions import is_condition
from diagnose.text.dates import date_precision
from diagnose.text.lifespans import LifeEvent, lifespan_end
from diagnose.text.names import name_key, proper_names
from diagnose.text.questions import COUNT, PER_TIME
from diagnose.text.roles import as_rate, counted_word, counts, named_span, named_unit, names_word
from diagnose.text.sentences import content_tokens, fold, overlap
from diagnose.text.tables import Cell, cell_context, names_cell, table_cell, table_row
from diagnose.text.value_classes import value_class
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

if TYPE_CHECKING:
    from diagnose.inputs.conflict import PairEvidence

YES, NO = "yes", "no"
NAME_PREFIX = "name:"
READ_PREFIX = "read:"
SOFT_PREFIXES = (NAME_PREFIX, READ_PREFIX)
"""Keys that join equal answers but never keep unequal ones apart: two names may be one
entity, two free-text readings one answer in other words."""


@dataclass(frozen=True)
class DocAnswer:
    key: str | None
    """Grouping key: a value key, ``yes``/``no``, or None (no answer found)."""
    span: str
    """What the document says, quoted (the value as written, or the claim sentence)."""
    claim: Claim | None = None
    value: Value | None = None
    strength: float = 0.0
    """How clearly the document states it (the claim's relevance; the stance's weight)."""


def measured_as(v: Value, dimensions: frozenset[str]) -> bool:
    """Whether ``v`` is measured the way the question asks (:func:`diagnose.text.questions.asked_dimensions`)."""
    return (v.kind == "percent" and "percent" in dimensions) or (v.kind == "money" and "money" in dimensions) or (
        v.kind in ("quantity", "range") and (v.dimension in dimensions or PER_TIME in dimensions and _per_time(v)))


def physical_amount(v: Value) -> bool:
    """Whether ``v`` is a physical amount (a time of day is a reading of the clock, not one)."""
    return v.kind in ("quantity", "range") and v.dimension.startswith("[") and v.dimension != "[time_of_day]"


def _per_time(v: Value) -> bool:
    return v.dimension.endswith(" / [time]")


def other_role(v: Value, text: str, dimensions: frozenset[str], listed: list[str],
               life_event: LifeEvent | None = None) -> bool:
    """Whether ``v`` (in ``text``) plays a role other than the one the question asks for, and so
    answers nothing: an amount that is no rate when the question asks an amount per time and names
    no other measure (the tablet's 500 mg, the 4-hour interval or the age beside the daily 4 g), or
    a count of the things the question asks to be ``listed`` ("a five-step process" for "what are
    the steps", :func:`diagnose.text.roles.listed_things`), or a physical amount when the question
    asks a count (:data:`~diagnose.text.questions.COUNT`: "421 km²" for "the population of"), or the
    other end of a bracketed lifespan than the ``life_event`` the question asks for ("(1568–1619)":
    asked when someone died, the birth is no answer; :mod:`diagnose.text.lifespans`)."""
    if v.kind in ("quantity", "range") and PER_TIME in dimensions and not measured_as(v, dimensions):
        return True
    if COUNT in dimensions and physical_amount(v):
        return True
    if life_event is not None and lifespan_end(text, v) not in (None, life_event):
        return True
    return v.kind == "number" and names_word(listed, counted_word(text, v.end))


def _measure(v: Value) -> str:
    """What ``v`` is measured in, as :func:`measured_as` names it: a dimension, ``percent`` or ``money``."""
    return v.dimension if v.kind in ("quantity", "range") and v.dimension else v.kind


def stance_answers(claims: list[list[Claim]], min_strength: float) -> list[DocAnswer | None]:
    """Yes/no per document: the relevance-weighted vote of its claims' polarities
    (the best claim counts double). Below ``min_strength`` relevance: no answer."""
    out: list[DocAnswer | None] = []
    for doc in claims:
        if not doc or doc[0].score < min_strength:
            out.append(None)
            continue
        vote = sum(c.polarity * c.score * (2.0 if k == 0 else 1.0) for k, c in enumerate(doc))
        best = doc[0]
        out.append(DocAnswer(YES if vote >= 0 else NO, best.sentence.text, best, None, abs(vote)))
    return out


def stance_camps(
    found: list[DocAnswer | None], emb: np.ndarray, vote_weight: float, min_gap: float = 0.0
) -> list[DocAnswer | None]:
    """Yes/no answers by camp (:func:`diagnose.inputs.stance.camps`): the documents
    that state a stance split into at most two camps by vote and similarity; the
    camp with the lower vote answers "no". Strength stays each document's own."""
    rows = [i for i, a in enumerate(found) if a is not None]
    if not rows:
        return list(found)
    votes = np.array([found[i].strength * (1 if found[i].key == YES else -1) for i in rows], np.float32)
    labels = camps(emb[rows], votes, vote_weight, min_gap)
    out = list(found)
    split = bool(labels.any())
    for i, label in zip(rows, labels):
        a = found[i]
        key = (NO if label else YES) if split else (YES if votes.sum() >= 0 else NO)
        out[i] = DocAnswer(key, a.span, a.claim, None, a.strength)
    return out


def value_answers(
    claims: list[list[Claim]],
    kinds: frozenset[str] | None,
    predicate: list[str],
    min_strength: float,
    tie_margin: float,
    window: int = 60,
    dimensions: frozenset[str] = frozenset(),
    given: tuple[Value, ...] = (),
    texts: list[str] | None = None,
    listed: list[str] = (),
    counted: list[str] = (),
    asks_condition: bool = False,
    life_event: LifeEvent | None = None,
) -> list[DocAnswer | None]:
    """Typed-value answer per document (None where the document states none of the answer class).

    given: the values the question itself states ("the 500 mg caplet", "the
    Nomad 40", "in 24 hours"): they name the subject or a condition, so a
    document's value equal to one of them answers nothing.

    kinds: the value kinds the question asks for (None: its grammar does not
    say; then a value counts only when a predicate token of the question, one of
    ``predicate``, stands within ``window`` characters of it). A value measured
    as the question asks (``dimensions``) scores higher: "how many weeks" is
    answered in weeks, whatever other amounts the claim holds. A value measured like one
    the question states as a condition ("in 24 hours") and not as the question asks scores
    lower: "the most one may take in 24 hours" is not answered in hours.

    texts: the documents, so that a value in a table cell is read by its row and column
    (:func:`words_around`) and takes the role they give it (:func:`in_cell_role`); without them,
    by the words of its sentence around it. When the question's subject (each claim's
    ``subject``) names some of a table's columns or rows, the cells of the others answer nothing
    (:func:`diagnose.text.tables.names_cell`).

    listed: the things the question asks to be listed (:func:`diagnose.text.roles.listed_things`);
    a value in another role (:func:`other_role`) answers nothing.

    counted: what the question asks to count (:func:`diagnose.text.roles.counted_things`); a bare
    number that counts it ("killed about 12,000 *people*" for "how many people died") fits the
    question as a value measured as it asks does, over another number of the claim (a magnitude,
    a year's ordinal).

    asks_condition: whether the question asks for a bound or an age itself ("the maximum dose",
    "how old"); where it does not, a value stated as one ("orders over $50", "children under 12",
    :func:`diagnose.text.conditions.is_condition`) scores :data:`CONDITION_PENALTY` lower, so that
    it answers only where its document states nothing else of the answer class.

    life_event: the end of a life the question asks for (:func:`diagnose.text.lifespans.asked_life_event`;
    the other end of a bracketed lifespan plays another role, :func:`other_role`)."""
    if kinds is not None and not kinds:
        return [None] * len(claims)
    conditions = frozenset(_measure(g) for g in given) - dimensions - {"number", ""}
    cands: list[list[tuple[float, Value, Claim]]] = []
    for doc in claims:
        found = []
        for rank, c in enumerate(doc):
            if c.score < min_strength:
                continue
            text = c.sentence.text
            for v in c.values:
                cell = table_cell(texts[c.doc], c.sentence.start + v.start) if texts is not None else None
                if cell is not None and not names_cell(list(c.subject), cell):
                    continue  # another plan's column, another model's row
                v = in_cell_role(v, cell) if cell is not None else v
                if kinds is not None and v.kind not in kinds:
                    continue
                if any(restates(v, g) for g in given):
                    continue
                near = overlap(predicate, words_around(c, v, window, texts)) if predicate else 0.0
                if kinds is None and (near <= 0.0 and not counts(v, text, counted)
                                      or v.kind == "date" and date_precision(v) == "year"):
                    continue  # a question that wants a year asks "when" or "what year"
                if enumerates(text, v) or other_role(v, text, dimensions, listed, life_event):
                    continue
                fits = 0.5 if measured_as(v, dimensions) or counts(v, text, counted) else (
                    -0.5 if measured_as(v, conditions) else 0.0)
                if not asks_condition and is_condition(text, v):
                    fits -= CONDITION_PENALTY
                # the question's words right beside a value tell its role ("closes one hour before" vs "opens 24 hours before")
                beside = beside_share(predicate, c, v, texts)
                label = LABEL_BONUS if cell is None and _labelled_by([*predicate, *c.subject], text, v) else 0.0
                score = c.score - 0.02 * rank + 0.5 * near + 0.5 * beside + fits + label
                if found and found[-1][2] is c and _restated_in_brackets(text, found[-1][1], v):
                    score = max(score, found[-1][0])  # "one month (four weeks)": one statement, two writings
                found.append((score, v, c))
        cands.append(found)
    support: dict[tuple[str, str], float] = defaultdict(float)
    for found in cands:
        best: dict[tuple[str, str], float] = {}
        for score, v, _ in found:
            cls = value_class(v)
            best[cls] = max(best.get(cls, -1e9), score)
        for cls, score in best.items():
            support[cls] += score
    if not support:
        return [None] * len(claims)
    answer_class = max(support, key=lambda cls: (support[cls], cls))
    picked: list[tuple[float, Value, Claim] | None] = []
    for found in cands:
        mine = sorted((x for x in found if value_class(x[1]) == answer_class), key=lambda x: -x[0])
        picked.append(mine[0] if mine else None)
    out: list[DocAnswer | None] = []
    for i, found in enumerate(cands):
        if picked[i] is None:
            out.append(None)
            continue
        score, value, claim = picked[i]
        others = [p[1] for j, p in enumerate(picked) if j != i and p is not None]
        if not any(same_value(value, o) for o in others):
            shared = [x for x in found if value_class(x[1]) == answer_class and x[0] >= score - tie_margin
                      and any(same_value(x[1], o) for o in others)]
            if shared:
                score, value, claim = max(shared, key=lambda x: x[0])
        out.append(DocAnswer(value.key, value.span, claim, value, score))
    return out


LABEL_BONUS = 0.25
"""How much higher a value scores when the word right before it is one of the question's words (its
predicate's or its subject's): the label that says which of a list's values it is ("weekdays 8 am to
6 pm and *Saturday* 9 am to 1 pm")."""


_LABEL_BEFORE = re.compile(r"([^\W\d_]+)[^\S\n]*[:：]?[^\S\n]*$")


def _labelled_by(words: list[str], text: str, v: Value) -> bool:
    """Whether the word right before ``v`` in ``text`` (a colon between them at most) is one of the
    question's ``words``: "and *Saturday* 9 am to 1 pm", "*Saturdays*: 9 am", not "12 kg in Economy
    and 18 kg", whose "Economy" says what the value before it is."""
    m = _LABEL_BEFORE.search(text, 0, v.start)
    tokens = content_tokens(m[1]) if m else []
    return bool(tokens) and tokens[0] in words


_OPENS_BRACKET = re.compile(r"\s*[(（]\s*")


def _restated_in_brackets(text: str, head: Value, v: Value) -> bool:
    """Whether ``v`` restates ``head`` in brackets right after it, in other words or units ("one
    month (four weeks)", "5 miles (8 km)"): the same class of value, opening the bracket."""
    return _OPENS_BRACKET.fullmatch(text, head.end, v.start) is not None and value_class(v) == value_class(head)


def in_cell_role(v: Value, cell: Cell) -> Value:
    """``v`` in the role its table cell's column header and row label give it: "$19" in a "Price per
    month" row is an amount per month (:func:`diagnose.text.roles.as_rate`), as "$19 a month" is, and
    "$12" in a "Price per user per month" column an amount per user per month."""
    span = named_span(cell.labels)
    unit = named_unit(cell.labels) if v.kind == "money" and "/" not in v.dimension else None
    if unit is not None:  # "$12" under "Price per user per month"
        v = replace(v, key=f"money:{v.dimension}/{unit}:{v.key.rpartition(':')[2]}", dimension=f"{v.dimension}/{unit}")
    return as_rate(v, span) if span is not None else v


CONDITION_PENALTY = 1.0
"""How much lower a value stated as a condition scores than one stated as an answer: more than a
claim's whole relevance, so that any other value of the class in its document wins."""

BESIDE_CHARS = 20
"""How far either side of a value the question's words count as beside it."""


def words_around(claim: Claim, v: Value, chars: int, texts: list[str] | None = None) -> str:
    """The words that say what ``claim``'s value ``v`` is: in a table cell its column's header
    and its row's first cell (:func:`diagnose.text.tables.cell_context`, which needs the
    documents' ``texts``), elsewhere the claim's words within ``chars`` characters either side."""
    cell = cell_context(texts[claim.doc], claim.sentence.start + v.start) if texts is not None else None
    return cell if cell is not None else claim.sentence.text[max(0, v.start - chars):v.end + chars]


def beside_share(predicate: list[str], claim: Claim, v: Value, texts: list[str] | None = None) -> float:
    """The share of the question's predicate words beside ``claim``'s value ``v`` (:func:`words_around`)."""
    return overlap(predicate, words_around(claim, v, BESIDE_CHARS, texts)) if predicate else 0.0


_ENUMERATOR_END = re.compile(r"\s*[.):|]")


def enumerates(text: str, v: Value) -> bool:
    """Whether ``v`` is the number of a list item or table row ("1. Generate…", "| 2 | Update…"):
    a bare integer opening its line, before a list or cell delimiter."""
    if v.kind != "number" or not v.span.isdigit() or len(v.span) > 3:
        return False
    line_start = text.rfind("\n", 0, v.start) + 1
    return (not text[line_start:v.start].strip(" \t|*-#>")
            and _ENUMERATOR_END.match(text, v.end) is not None)


def restates(v: Value, given: Value) -> bool:
    """Whether ``v`` is the question's own value ``given``: equal, and for dates equally precise
    (a question's "fiscal 2024" does not restate the day the year ends). A year is one value
    whether the parser read it as a date or, without a date's context, as a bare number ("fiscal
    2024 end" and "the 2024 fiscal year")."""
    if v.kind == "date" or given.kind == "date":
        return v.key == given.key or _one_year(v, given) or _one_year(given, v)
    return comparable(v, given) and same_value(v, given)


def year_like(v: Value) -> bool:
    """A bare number written as a year is (3 or 4 digits): "1619" answers "When did he die?",
    though the parser, without a date's context, reads a year before 1800 as a number."""
    return v.kind == "number" and re.fullmatch(r"\d{3,4}", v.span.strip()) is not None


def _one_year(number: Value, date: Value) -> bool:
    """Whether ``number``, a bare number written as a year, is the year-only ``date``."""
    return year_like(number) and date.key == f"date:{number.span.strip().zfill(4)}"


def edited_answers(copies: "list[PairEvidence]", found: list[DocAnswer | None]) -> list[DocAnswer | None]:
    """Near-copies that differ in a claimed value answer with the values they differ in.

    An edited copy states the same page with one value changed; whatever value
    extraction preferred elsewhere in the page, the changed one is the claim
    the two disagree on (when it is of the answer class, or no class was found)."""
    out = list(found)
    for pair in copies:
        for x, y in pair.spans:
            vx, vy = extract_values(x), extract_values(y)
            clash = [(a, b) for a in vx for b in vy if comparable(a, b) and not same_value(a, b)]
            if not clash:
                continue
            a, b = clash[0]
            for doc, value, span in ((pair.a, a, x), (pair.b, b, y)):
                mine = out[doc]
                if mine is None or mine.value is None or value_class(mine.value) == value_class(value):
                    claim = mine.claim if mine is not None else None
                    out[doc] = DocAnswer(value.key, value.span, claim, value, mine.strength if mine else 0.5)
            break
    return out


def name_answers(claims: list[list[Claim]], question: str, min_strength: float,
                 predicate: list[str] = ()) -> list[DocAnswer | None]:
    """The name each document answers with: of the proper names (:mod:`diagnose.text.names`)
    its claims state that are not merely the question's own words nor hold a name the question
    states (its subject written in full), the one with the most
    weight, a name's weight being the relevance of the claims that state it times the
    number of documents whose claims state it (None where its claims name nothing new).

    Capitalisation also marks headings, menus and sources; the name an answer gives
    recurs across the documents that give it, which a page's incidental names do not. A lone word
    that opens a sentence counts as a name when a claim writes it capitalised mid-sentence."""
    asked = set(content_tokens(question))
    subjects = [set(content_tokens(name)) for name, _ in proper_names(question)]
    known = frozenset(fold(name) for doc in claims for c in doc for name, _ in proper_names(c.sentence.text)
                      if " " not in name)
    weights: list[dict[str, float]] = []
    firsts: list[dict[str, tuple[str, Claim, int]]] = []
    for doc in claims:
        weight: dict[str, float] = defaultdict(float)
        first: dict[str, tuple[str, Claim, int]] = {}
        beside: set[str] = set()
        for c in doc:
            if c.score < min_strength:
                continue
            text = c.sentence.text
            for name, start in proper_names(text, known):
                tokens = content_tokens(name)
                if (not tokens or all(t in asked for t in tokens) or _is_value(name, start, c)
                        or any(subject and subject <= set(tokens) for subject in subjects)):
                    continue  # the question's own words or name, maybe in full ("Marie Skłodowska Curie")
                key = NAME_PREFIX + name_key(name)
                weight[key] += c.score
                first.setdefault(key, (name, c, start))
                if predicate and (overlap(predicate, _words_beside(c, start, start + len(name))) > 0
                                  or any(t in predicate for t in tokens)):  # "the River Derwent" for "which river"
                    beside.add(key)
        if beside:  # "born in Berlin ... later moved to Vienna": the name the question's words stand by
            weight = defaultdict(float, {k: w for k, w in weight.items() if k in beside})
        weights.append(weight)
        firsts.append(first)
    stated = Counter(key for weight in weights for key in weight)
    out: list[DocAnswer | None] = []
    for doc, weight, first in zip(claims, weights, firsts):
        if not weight:
            out.append(None)
            continue
        # equal weight: the name stated first, the sentence's subject ("Argentina beat France")
        key = max(weight, key=lambda k: (weight[k] * stated[k], -doc.index(first[k][1]), -first[k][2], k))
        name, claim, _ = first[key]
        out.append(DocAnswer(key, name, claim, None, weight[key]))
    return out


BESIDE_WORDS = 3
"""How many words either side of a name count as beside it (values skipped: "born on 7 November 1878 in
Vienna")."""


def _words_beside(claim: Claim, start: int, end: int) -> str:
    """The :data:`BESIDE_WORDS` words either side of ``claim``'s span ``start:end``, its values left out."""
    text = claim.sentence.text
    for v in claim.values:
        text = text[:v.start] + " " * (v.end - v.start) + text[v.end:]
    before, after = re.findall(r"[^\W\d_]+", text[:start]), re.findall(r"[^\W\d_]+", text[end:])
    return " ".join(before[-BESIDE_WORDS:] + after[:BESIDE_WORDS])


def _is_value(name: str, start: int, claim: Claim) -> bool:
    """Whether a capitalised run is one of the claim's values ("March 2008"): a date is no name."""
    begin = claim.sentence.text.find(name, start)
    return any(v.start <= begin and begin + len(name) <= v.end for v in claim.values)


def shared_keys(found: list[DocAnswer | None]) -> list[DocAnswer | None]:
    """One key per value: an answer equal to other documents' answers under another key
    ("1993" and "24 January 1993", "2.4" and "2.4.0") takes theirs, so equal answers share
    a center. The most precise answers (longest keys) keep their own; a coarser one takes
    the key most of the finer answers it equals carry."""
    out = list(found)
    order = sorted((i for i, a in enumerate(found) if a is not None and a.value is not None),
                   key=lambda i: (-len(found[i].key), i))
    settled: list[DocAnswer] = []
    for i in order:
        a = found[i]
        equal = Counter(b.key for b in settled if b.key != a.key and same_value(a.value, b.value))
        if equal and len(max(equal, key=len)) > len(a.key):
            key = max(equal, key=lambda k: (equal[k], len(k), k))
            out[i] = DocAnswer(key, a.span, a.claim, a.value, a.strength)
        settled.append(out[i])
    return out


def backed_answers(found: list[DocAnswer | None], texts: list[str], live: list[bool],
                   predicate: list[str] = ()) -> list[DocAnswer | None]:
    """A value answer no other document gives yields to one that more documents give, when
    the document states that value too (anywhere in its text, in any wording).

    Such a document does not contradict the others: its own pick is a role error (the
    24 hours check-in opens beside the one hour it closes; the six weeks for other carers
    beside the sixteen asked). A document that states only its own value keeps it, and so
    does one whose claim holds the other value with none of the question's words beside it
    while its own has some: the sentence answers with its own value and only refers to the
    other ("output was 310 tonnes, against 290 tonnes in the first estimate"). When its value
    stands in a table row, the values of the table's other rows (other subjects) back nothing."""
    count = Counter(a.key for i, a in enumerate(found) if live[i] and a is not None and a.value is not None)
    out = list(found)
    for i, a in enumerate(found):
        if not live[i] or a is None or a.value is None or count[a.key] != 1:
            continue
        stated = [v for v in extract_values(texts[i]) if comparable(v, a.value)]
        if a.claim is not None and predicate and beside_share(predicate, a.claim, a.value, texts) > 0:
            referred = [a.claim.sentence.start + v.start for v in a.claim.values
                        if not beside_share(predicate, a.claim, v, texts)]
            stated = [v for v in stated if v.start not in referred]
        row = table_row(texts[i], a.claim.sentence.start + a.value.start) if a.claim is not None else None
        if row is not None:
            stated = [v for v in stated if table_row(texts[i], v.start) in (None, row)]
        backed = [(count[b.key], b.key, v) for j, b in enumerate(found) if j != i and live[j] and b is not None
                  and b.value is not None and count[b.key] > 1 for v in stated if restates(v, b.value)]
        if backed:
            _, key, v = max(backed, key=lambda x: (x[0], x[1]))
            out[i] = DocAnswer(key, v.span, a.claim, v, a.strength)
    return out


def unopposed_answers(found: list[DocAnswer | None], texts: list[str], live: list[bool]) -> list[DocAnswer | None]:
    """A value answer no other document gives, but that every other document with a value
    answer states too, in any wording, is no answer.

    The others do not contradict it: they state it in another role (the length of a course
    beside the interval asked), so it is the document's pick that answers something else."""
    count = Counter(a.key for i, a in enumerate(found) if live[i] and a is not None and a.value is not None)
    out = list(found)
    for i, a in enumerate(found):
        if not live[i] or a is None or a.value is None or count[a.key] != 1:
            continue
        others = [j for j, b in enumerate(found) if j != i and live[j] and b is not None and b.value is not None]
        if others and all(any(restates(v, a.value) for v in extract_values(texts[j])) for j in others):
            out[i] = None
    return out


def disagree(a: DocAnswer | None, b: DocAnswer | None) -> bool:
    """Whether two documents' answers contradict: comparable values that differ, or opposite
    stances. Soft keys never contradict (:data:`SOFT_PREFIXES`), nor answers of different types."""
    if a is None or b is None or a.key is None or b.key is None:
        return False
    if a.value is not None and b.value is not None:
        return comparable(a.value, b.value) and not same_value(a.value, b.value)
    if a.value is not None or b.value is not None or a.key.startswith(SOFT_PREFIXES) or b.key.startswith(SOFT_PREFIXES):
        return False
    return a.key != b.key


def agree(a: DocAnswer | None, b: DocAnswer | None) -> bool:
    if a is None or b is None or a.key is None or b.key is None:
        return False
    if a.value is not None and b.value is not None:
        return same_value(a.value, b.value)
    return a.key == b.key
