"""The input stage: claims, answers, noise, centers, conflict and layout.

Steps, in order:
1. split each document into sentences and embed them with the question (the
   only embedding call); a document's vector is the mean of its sentences';
2. rank each document's sentences against the question: its best ones are its
   claims, with their typed values and polarity (:mod:`diagnose.inputs.claims`);
3. each document's answer: its stance for a yes/no question, else its value of
   the answer class the documents share (:mod:`diagnose.inputs.answers`); with a
   reader (the read tier) the case's generator reads each document alone and its
   answer decides;
4. mark noise (unusable text, off-topic, unanswered boilerplate or isolated);
5. group non-noise documents into gravity centers: one answer per center, two
   documents whose claims contradict never together, embeddings decide only
   for documents without an answer; of the centers that rest on one document
   whose answer nothing backs, only the strongest stays (the others are noise);
6. quote the evidence between centers and score the conflict (a superseded center beside the
   current one it disagrees with is a conflict at any score);
7. fill the per-document view and the prompt layout facts.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from diagnose.analysis import InputAnalysis
from diagnose.case import Case
from diagnose.embedding import l2_normalise
from diagnose.inputs import centers as ctr
from diagnose.inputs import conflict as cf
from diagnose.inputs import layout
from diagnose.inputs.answers import (
    NAME_PREFIX, SOFT_PREFIXES, DocAnswer, agree, backed_answers, disagree, edited_answers, name_answers, shared_keys,
    stance_answers, stance_camps, unopposed_answers, value_answers,
)
from diagnose.inputs.calibration import sigmoid
from diagnose.inputs.claims import document_sentences, find_claims
from diagnose.inputs.compare import compare_sides, pair_split
from diagnose.inputs.instructions import instruction_conflicts
from diagnose.inputs.noise import isolation, noise_mask, text_features
from diagnose.inputs.read_answers import read_answers
from diagnose.inputs.reader_answers import READER_PREFIX, found_nothing, misread_by_text, reader_answers
from diagnose.inputs.reading import NO_INFORMATION
from diagnose.inputs.settings import InputSettings
from diagnose.inputs.standing import mark_standing, read_documents
from diagnose.report import AnswerValue, Conflict, ConflictPair, DocumentView, GravityCenter, InputReport
from diagnose.text.change import tells_change
from diagnose.text.compare import same_value
from diagnose.text.conditions import asks_condition
from diagnose.text.lifespans import asked_life_event
from diagnose.text.normalise import normalise_text
from diagnose.text.questions import asked_dimensions, asked_value_kinds, is_yes_no_question, predicate_text
from diagnose.text.roles import asks_count, counted_things, listed_things
from diagnose.text.sentences import content_tokens, split_sentences
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

if TYPE_CHECKING:
    from diagnose.embedding import Embedder
    from diagnose.inputs.reading import Reader


def analyze_inputs(
    case: Case,
    embedder: "Embedder",
    settings: InputSettings,
    count_tokens: Callable[[str], int] | None = None,
    prompt: str | None = None,
    context_window: int = 0,
    reader: "Reader | None" = None,
) -> InputAnalysis:
    """Run the input stage on ``case`` (see the module docstring for the steps).

    With ``reader`` (the read tier) the generator reads each document alone."""
    texts = [d.text for d in case.documents]
    ids = [d.id for d in case.documents]
    docs = document_sentences(case.question, texts, settings.max_sentences, settings.max_sentence_chars)
    vectors = embedder.encode(docs.flat + [case.question])
    sent_emb, qvec = vectors[:-1], vectors[-1]
    emb = _document_vectors(sent_emb, docs.owners(), len(texts), qvec.shape[0])
    claims, scores = find_claims(case.question, docs, sent_emb, qvec, settings.lexical_weight, settings.claims_per_document)
    claim_emb = _best_claim_vectors(sent_emb, scores, docs.owners(), len(texts), qvec.shape[0])
    relevance = np.array([c[0].score if c else 0.0 for c in claims], np.float32)

    yes_no = is_yes_no_question(case.question)
    predicate = content_tokens(predicate_text(case.question))
    found = _static_answers(case.question, predicate, claims, texts, yes_no, settings)
    # A yes/no answer is corroborated by its camp, not by the bare word every other document may say.
    camps = stance_camps(found, emb, settings.stance_vote_weight, settings.camp_gap) if yes_no else found
    # Noise is a fact of the text: decided on what the documents state, not on what a model reads into
    # them; a reader that decides reads the text, so its answers decide noise too.
    features, isolated = [text_features(t) for t in texts], isolation(emb)
    noise = _noise(camps, relevance, features, isolated, settings)
    readings = None
    comparisons = None
    decides = reader is not None and reader.decides
    static = None  # the static tier's verdict, a feature beside a deciding reader's answers
    if reader is not None:
        # A yes/no question's lean (the margin on a document that says nothing) is read in the same batch.
        lean_too = yes_no and not decides  # a reader that decides reads stances by their sign, no lean
        readings = reader.read(case.question, texts + [NO_INFORMATION] if lean_too else texts, yes_no)
        lean = readings.pop().yes_margin if lean_too else None
        if decides:
            static = _centers(texts, ids, emb, claims, camps, noise, yes_no, predicate, settings)
            found = reader_answers(readings, claims, embedder, yes_no, settings, texts, case.question)
            nothing = found_nothing(readings, texts, case.question, yes_no)
            if not yes_no:
                found = misread_by_text(found, static.found, readings, texts, nothing)
            noise = _noise(found, relevance, features, isolated, settings) | np.array(nothing, bool)
        else:
            asks_value = bool(asked_value_kinds(case.question))
            found = read_answers(readings, found, claims, embedder, yes_no, settings, asks_value=asks_value,
                                 texts=texts, lean=lean)
    if yes_no and not decides:
        found = camps if reader is None else stance_camps(found, emb, settings.stance_vote_weight, settings.camp_gap)
        if reader is not None:
            comparisons = compare_sides(reader, case.question, texts, found, noise, relevance, settings.compare_documents)
    found, assignment, members, conflict = _centers(
        texts, ids, emb, claims, found, noise, yes_no, predicate, settings,
        readings=readings, comparisons=comparisons, decides=decides, static=static)
    center_ids = [f"c{k + 1}" for k in range(len(members))]
    weights = ctr.masses(assignment)
    center_answers = {cid: _center_answers([found[i] for i in m]) for cid, m in zip(center_ids, members)}
    centers = [
        GravityCenter(id=cid, documents=[ids[i] for i in m], mass=round(float(w), 6), label=_label(found, texts, m))
        for cid, m, w in zip(center_ids, members, weights)
    ]
    projection = layout.fit_projection(emb)
    positions = projection(emb) if projection else np.zeros((len(ids), 2), np.float32)
    report = InputReport(
        gravity_centers=centers,
        noise_documents=[ids[i] for i in range(len(ids)) if assignment[i] is None],
        conflict=conflict,
        documents=_views(ids, texts, assignment, center_ids, relevance, positions, found, claims, readings, count_tokens),
        prompt_tokens=count_tokens(prompt) if count_tokens and prompt else 0,
        context_window=context_window,
        instruction_conflicts=instruction_conflicts(case.system, case.template),
        delimiter_issue=layout.delimiter_issue(texts, case.template, prompt),
        tier="read" if readings is not None else "static",
        stance=("assessed" if comparisons or decides else "not_assessed") if yes_no else None,
    )
    mark_standing(report, read_documents(case.documents, readings), members, lambda i, j: disagree(found[i], found[j]))
    if any(p.kind == "outdated" for p in conflict.pairs):
        # A superseded value stated beside the current one is a conflict however sure the score is:
        # the model can follow either, and the fix (drop or mark the old page) is certain.
        conflict.detected, conflict.state = True, "conflict"
    if members:  # whether it is lost in the middle is decided once the prompt's tokens are counted
        report.strongest_center_position = layout.center_position(prompt, texts, members[0], count_tokens)
    return InputAnalysis(report, emb, qvec, center_answers, projection, claim_emb)


class _Centers(NamedTuple):
    found: list[DocAnswer | None]
    assignment: list[int | None]
    members: list[list[int]]
    conflict: Conflict


def _centers(texts, ids, emb, claims, found, noise, yes_no, predicate, settings, *, readings=None,
             comparisons=None, decides=False, static: _Centers | None = None) -> _Centers:
    """Steps 5 and 6 on each document's answer. Without a reader that decides, the static tier's
    answer rules run first. ``static`` is the static tier's own result on the case beside a deciding
    reader's: its verdict is a feature (``static_conflict``), its answers arbitrate a lone reading
    (:func:`_echoes_join`)."""
    live = [not x for x in noise]
    claim_spans = [[(c.sentence.start, c.sentence.start + len(c.sentence.text)) for c in doc] for doc in claims]
    copies = cf.copy_mismatches(texts, claim_spans, settings.duplicate_ratio, live, settings.copy_span_words)
    if not yes_no and not decides:  # the static tier's answer rules; a reader that reads needs none
        found = backed_answers(shared_keys(edited_answers(copies, found)), texts, live, predicate)
        found = unopposed_answers(found, texts, live)
    assignment = _group(emb, found, noise, copies, settings)
    if decides:  # a deciding reader's centers are its answers
        assignment = ctr.without_answerless(assignment, [a is not None and a.key is not None for a in found])
        if not yes_no:
            assignment = _echoes_join(assignment, found, texts, static.found if static is not None else None)
            if static is not None:
                assignment = _text_rules_join(assignment, found, texts, static.found)
    members = ctr.members(assignment)
    conflict = _conflict(texts, ids, emb, members, found, copies, yes_no, readings, comparisons, settings, decides,
                         static.conflict.probability if static is not None else 0.0)
    return _Centers(found, assignment, members, conflict)


def _noise(found: list[DocAnswer | None], relevance: np.ndarray, features, isolated: np.ndarray,
           settings: InputSettings) -> np.ndarray:
    """Noise per document (:func:`diagnose.inputs.noise.noise_mask`): an answer another document
    also gives keeps a document out of the noise."""
    support = Counter(a.key for a in found if a and a.key)
    answered = np.array([a is not None and a.key is not None for a in found], bool)
    corroborated = np.array([a is not None and a.key is not None and support[a.key] > 1 for a in found], bool)
    return noise_mask(relevance, answered, features, settings, isolated, corroborated)


def _static_answers(question: str, predicate: list[str], claims, texts: list[str], yes_no: bool,
                    settings: InputSettings) -> list[DocAnswer | None]:
    """Each document's answer from its text: a stance, else a typed value (``predicate``: the
    question's predicate words), else a name (not for a question that asks to list things: "what
    are the steps" is answered by neither their count nor a name beside them)."""
    if yes_no:
        return stance_answers(claims, settings.min_claim)
    listed = [] if asks_count(question) else listed_things(question)
    found = value_answers(
        claims, asked_value_kinds(question), predicate, settings.min_claim, settings.tie_margin,
        dimensions=asked_dimensions(question), given=tuple(extract_values(question)), texts=texts, listed=listed,
        counted=counted_things(question), asks_condition=asks_condition(question),
        life_event=asked_life_event(question),
    )
    if not any(a is not None for a in found) and not listed:
        found = name_answers(claims, question, settings.min_claim, predicate)
    return found


def _echoes_join(assignment: list[int | None], found: list[DocAnswer | None], texts: list[str],
                 static: list[DocAnswer | None] | None) -> list[int | None]:
    """A document alone in its center whose own text also states the largest center's value joins
    that center: the reader read another value of a page that states the answer (a packed weight
    beside the trail weight). Only a typed reading of another value joins: a document apart with
    the largest center's own value is about another thing of one name. Nor does one whose answer
    the text rules (``static``, the static tier's answers) read as another value too: a page that
    states both ("4.76 billion, restated from 4.82 billion") keeps its own."""
    members = ctr.members(assignment)
    top = _top_value(members, found)
    if top is None or len(members[0]) < 2:
        return assignment
    out = list(assignment)
    for m in members[1:]:
        if len(m) != 1:
            continue
        i = m[0]
        read = found[i].value if found[i] is not None else None
        if read is None or same_value(read, top):
            continue  # apart with the same value: about another thing of the same name
        own = static[i] if static is not None else None
        if own is not None and own.value is not None and not same_value(own.value, top):
            continue
        if _states_as_answer(texts[i], top):
            out[i] = 0
    return ctr.renumber(out)


def _text_rules_join(assignment: list[int | None], found: list[DocAnswer | None], texts: list[str],
                     static: list[DocAnswer | None]) -> list[int | None]:
    """A document alone in its center whose reading the text rules (``static``, the static tier's
    answers) contradict, where they read in it the answer of one other center of two or more
    documents, joins that center: two readers of one page disagree and one agrees with other pages
    (a page read as "founded in 1973" whose text rules read 1985, the year two other pages give).
    Not when its reading gives that center's answer too: apart with the same answer, it is about
    another thing of one name; nor when the text rules' answer is the old value of a change its
    text tells ("142 m until 2019, when a new spire raised it to 157 m")."""
    members = ctr.members(assignment)
    out = list(assignment)
    for i in (m[0] for m in members if len(m) == 1):
        own, read = static[i], found[i]
        if own is None or own.key is None or read is None or _gives(read, own) or _changed(own, texts[i]):
            continue
        targets = [k for k, other in enumerate(members) if len(other) > 1
                   and any(_gives(found[j], own) for j in other) and not any(_gives(found[j], read) for j in other)]
        if len(targets) == 1:
            out[i] = targets[0]
    return ctr.renumber(out)


def _changed(a: DocAnswer, text: str) -> bool:
    """Whether answer ``a`` is stated only in a sentence of ``text`` that tells of a change."""
    if a.value is not None:
        return not _states_as_answer(text, a.value)
    return a.claim is not None and tells_change(a.claim.sentence.text)


def _gives(a: DocAnswer | None, b: DocAnswer) -> bool:
    """Whether answer ``a`` gives ``b``'s answer across the two tiers: equal typed values
    (:func:`~diagnose.inputs.answers.agree`), else (neither typed) the same words; a reader's key
    and the text rules' key of one name differ, so words, not keys, compare free answers."""
    if a is None or (a.value is None) != (b.value is None):
        return False
    return agree(a, b) if a.value is not None else normalise_text(a.span) == normalise_text(b.span)


def _top_value(members: list[list[int]], found: list[DocAnswer | None]) -> Value | None:
    """The typed value the largest center's documents give (None: no center, or no typed value)."""
    if not members:
        return None
    return next((found[i].value for i in members[0] if found[i] is not None and found[i].value is not None), None)


def _states_as_answer(text: str, value: Value) -> bool:
    """Whether ``text`` states ``value``, and not in a sentence that tells of a change ("EUR 180,
    replacing the EUR 150 limit"): there the two values are an old and a new one."""
    return any(any(same_value(v, value) for v in extract_values(s.text)) and not tells_change(s.text)
               for s in split_sentences(text))


def _group(emb: np.ndarray, found: list[DocAnswer | None], noise: np.ndarray, copies, settings: InputSettings):
    """Centers: answer keys join, contradictions and edited copies keep apart, a shared
    soft key (a name, a free-text reading) joins without keeping others apart,
    embeddings decide the rest."""
    n = len(found)
    cannot = {(p.a, p.b) for p in copies}
    cannot |= {(i, j) for i in range(n) for j in range(i + 1, n) if disagree(found[i], found[j])}
    named = [a is not None and a.key is not None and a.key.startswith(SOFT_PREFIXES) for a in found]
    keys = [a.key if a is not None and not noise[i] and not named[i] else None for i, a in enumerate(found)]
    same_name = {(i, j) for i in range(n) for j in range(i + 1, n)
                 if named[i] and named[j] and found[i].key == found[j].key}
    assignment = ctr.group_documents(
        emb, keys, noise, cannot, settings.attach_similarity, settings.center_similarity, must_link=same_name
    )
    given = Counter(a.key for i, a in enumerate(found) if a is not None and a.key is not None and not noise[i])
    # A name no other document gives is weak (headings and sources are capitalised too), unless an
    # edited copy changed it; a reading is what the model answers from that document, so a lone one
    # is a center of its own.
    edited = _edited_spans(copies)
    lone = [a is None or a.key is None or (a.key.startswith(NAME_PREFIX) and given[a.key] == 1
                                           and not any(a.span in span for span in edited.get(i, ())))
            for i, a in enumerate(found)]
    return ctr.keep_one_lone(assignment, lone, [a.strength if a is not None else 0.0 for a in found])


def _edited_spans(copies) -> dict[int, list[str]]:
    """Per document, the spans in which a near-copy of it differs (:func:`~diagnose.inputs.conflict.copy_mismatches`)."""
    out: dict[int, list[str]] = {}
    for pair in copies:
        for x, y in pair.spans:
            out.setdefault(pair.a, []).append(x)
            out.setdefault(pair.b, []).append(y)
    return out


def _best_claim_vectors(sent_emb: np.ndarray, scores: np.ndarray, owners: np.ndarray, n: int, d: int) -> np.ndarray:
    """``(n, d)``: the vector of each document's highest-scoring sentence (its best claim)."""
    out = np.zeros((n, d), np.float32)
    best = np.full(n, -np.inf)
    for row, (doc, score) in enumerate(zip(owners, scores)):
        if score > best[doc]:
            best[doc], out[doc] = score, sent_emb[row]
    return out


def _document_vectors(sent_emb: np.ndarray, owners: np.ndarray, n: int, d: int) -> np.ndarray:
    """``(n, d)`` unit rows: each document's mean sentence vector."""
    out = np.zeros((n, d), np.float32)
    np.add.at(out, owners, sent_emb)
    return l2_normalise(out)


def _center_answers(found: list[DocAnswer | None]) -> list[str]:
    """The answers a center's documents give, as written (the pull matcher normalises
    them): values and names; a stance or a free-text reading is no answer to match."""
    return sorted({a.span for a in found if a is not None and a.key is not None
                   and (a.value is not None or a.key.startswith(NAME_PREFIX))})


def _label(found: list[DocAnswer | None], texts: list[str], members: list[int]) -> str:
    spans = Counter(found[i].span for i in members if found[i] is not None and found[i].key is not None)
    if spans:
        best = max(spans, key=lambda s: (spans[s], -len(s)))
        answer = next(found[i] for i in members if found[i] is not None and found[i].span == best)
        bare = answer.value is not None or answer.key.startswith((*SOFT_PREFIXES, READER_PREFIX))  # keys are internal
        text = best if bare else f"{answer.key}: {best}"
        return text[:60] + ("…" if len(text) > 60 else "")
    words = texts[members[0]].split()
    return " ".join(words[:6]) + (" …" if len(words) > 6 else "")


def _conflict(texts, ids, emb, members, found, copies, yes_no, readings, comparisons, settings, decides,
              static_conflict: float = 0.0) -> Conflict:
    """Evidence pairs between centers and the calibrated verdict.

    For a yes/no question whose stances no model judged (no pairwise comparisons, no reader
    that decides), the stance features are left out of the verdict (:func:`cf.without_stance`).
    A reader that decides has a calibration of its own (``settings.reader_calibration``)."""
    pairs: list[ConflictPair] = []
    split = 0.0
    copy_pairs = {(p.a, p.b): p for p in copies}
    for x in range(len(members)):
        for y in range(x + 1, len(members)):
            cross = [(i, j) for i in members[x] for j in members[y]]
            clash = [(i, j) for i, j in cross if disagree(found[i], found[j])]
            if clash:
                side = min(max(found[i].strength for i in members[x] if found[i] and found[i].key),
                           max(found[j].strength for j in members[y] if found[j] and found[j].key))
                split = max(split, float(np.clip(side, 0.0, 1.0)))
            pair = _evidence(texts, ids, emb, cross, clash, found, copy_pairs, yes_no, settings)
            if pair is not None:
                pairs.append(pair)
    features = _features(emb, members, found, copies, yes_no, readings, split, settings)
    features["echo"] = _echo(texts, members, found) if decides and not yes_no else 0.0
    features["pair_split"] = pair_split(comparisons) if comparisons else 0.0
    features["static_conflict"] = static_conflict
    if yes_no and not comparisons and not decides:
        features = cf.without_stance(features)
    calibration = settings.reader_calibration if decides else settings.conflict_calibration
    probability = round(calibration.probability(features), 4)
    state = calibration.state(probability, yes_no)
    return Conflict(detected=state == "conflict", score=probability, probability=probability, state=state,
                    pairs=pairs, features={k: round(v, 4) for k, v in features.items()},
                    threshold=calibration.cuts(yes_no)[0])


def _features(emb, members, found, copies, yes_no, readings, split, settings) -> dict[str, float]:
    """The conflict score's inputs (:data:`diagnose.inputs.conflict.FEATURES`)."""
    live = [i for m in members for i in m]
    center_of = {i: k for k, m in enumerate(members) for i in m}
    apart = any(p.a in center_of and p.b in center_of and center_of[p.a] != center_of[p.b] for p in copies)
    sims = emb @ emb.T if len(emb) else np.zeros((0, 0), np.float32)
    # The mean, not the minimum: a minimum over pairs falls with the number of documents.
    pairs = [float(sims[i, j]) for k, i in enumerate(live) for j in live[k + 1:]]
    mean_cos = float(np.mean(pairs)) if pairs else 1.0
    camp_gap = vote_gap = 0.0
    if yes_no:
        yes = [i for i in live if found[i] is not None and found[i].key == "yes"]
        no = [i for i in live if found[i] is not None and found[i].key == "no"]
        if yes and no:
            within = [float(sims[i, j]) for g in (yes, no) for a, i in enumerate(g) for j in g[a + 1:]]
            across = [float(sims[i, j]) for i in yes for j in no]
            camp_gap = (np.mean(within) if within else 1.0) - float(np.mean(across))
            vote = lambda g: float(np.mean([np.tanh(found[i].strength) for i in g]))  # noqa: E731
            vote_gap = min(vote(yes), vote(no))
    center_gap = 0.0
    if len(members) >= 2:
        a, b = (l2_normalise(emb[m].sum(axis=0, keepdims=True))[0] for m in members[:2])
        center_gap = float(np.clip(1.0 - float(a @ b), 0.0, 1.0))
    read_split = yes_gap = 0.0
    if readings is not None and yes_no:
        margins = [readings[i].yes_margin for i in live if readings[i].yes_margin is not None]
        if len(margins) >= 2:
            read_split = float(np.clip((max(margins) - min(margins)) / (2 * settings.read_margin_scale), 0.0, 1.0))
            # The margin is a log-odds: two firm yeses far apart in margin agree, a weak yes and a weak no do not.
            yes_gap = sigmoid(max(margins)) - sigmoid(min(margins))  # P(yes) of each margin
    elif readings is not None:  # each center's answer: a document it took in by its text reads with it
        keys = {_main_key(m, found) for m in members} - {None}
        read_split = 1.0 if len(keys) >= 2 else 0.0
    return {
        "value_split": 0.0 if yes_no else split,
        "stance_split": split if yes_no else 0.0,
        "copy_mismatch": 1.0 if apart else 0.0,
        "camp_gap": float(np.clip(camp_gap * 10.0, -1.0, 1.0)),
        "vote_gap": float(np.clip(vote_gap, 0.0, 1.0)),
        "spread": float(np.clip(1.0 - mean_cos, 0.0, 1.0)),
        "extra_centers": min(len(members) - 1, 2) / 2 if members else 0.0,
        "center_gap": center_gap,
        "read_split": read_split,
        "yes_gap": yes_gap,
    }


def _main_key(member_docs: list[int], found: list[DocAnswer | None]) -> str | None:
    """The answer key most of a center's documents give (None: none gives one)."""
    keys = Counter(found[i].key for i in member_docs if found[i] is not None and found[i].key)
    return keys.most_common(1)[0][0] if keys else None


def _echo(texts: list[str], members: list[list[int]], found: list[DocAnswer | None]) -> float:
    """Of the documents outside the largest center that give an answer, the share whose own text
    also states the largest center's value: a reader that picked another value of such a text
    may have read it in another role (a packed weight beside the trail weight)."""
    if len(members) < 2:
        return 0.0
    top = _top_value(members, found)
    others = [i for m in members[1:] for i in m if found[i] is not None and found[i].key is not None]
    if top is None or not others:
        return 0.0
    return sum(any(same_value(v, top) for v in extract_values(texts[i])) for i in others) / len(others)


def _evidence(texts, ids, emb, cross, clash, found, copy_pairs, yes_no, settings) -> ConflictPair | None:
    """The one evidence pair quoted for two centers: an edited copy, else the
    strongest contradicting claims, else the most similar cross pair."""
    for i, j in cross:
        p = copy_pairs.get((min(i, j), max(i, j)))
        if p is not None:
            return ConflictPair(a=ids[p.a], b=ids[p.b], kind="value_mismatch", evidence=cf.quote((ids[p.a], ids[p.b]), list(p.spans)))
    pool = clash or cross
    if not pool:
        return None
    i, j = max(pool, key=lambda p: (float(emb[p[0]] @ emb[p[1]]), -p[0], -p[1]))
    if yes_no:
        kind = "stance"
    elif float(emb[i] @ emb[j]) < settings.ambiguity_similarity:
        kind = "entity_ambiguity"
    else:
        kind = "value_mismatch" if clash else "topic_split"
    quoted = [(_quote_of(found[i], texts[i]), _quote_of(found[j], texts[j]))]
    return ConflictPair(a=ids[i], b=ids[j], kind=kind, evidence=cf.quote((ids[i], ids[j]), quoted))


def _quote_of(a: DocAnswer | None, text: str) -> str:
    if a is not None and a.claim is not None:
        return a.claim.sentence.text[:200]
    return " ".join(text.split()[:25])


def _views(ids, texts, assignment, center_ids, relevance, pos, found, claims, readings, count_tokens) -> list[DocumentView]:
    return [
        DocumentView(
            id=ids[i],
            center=center_ids[assignment[i]] if assignment[i] is not None else None,
            relevance=round(float(relevance[i]), 4),
            tokens=count_tokens(texts[i]) if count_tokens else 0,
            position=[float(x) for x in pos[i]],
            answer=found[i].span if found[i] is not None and found[i].key is not None else None,
            claim=claims[i][0].sentence.text if claims[i] else None,
            read_answer=readings[i].answer if readings is not None else None,
            yes_margin=round(readings[i].yes_margin, 4) if readings is not None and readings[i].yes_margin is not None else None,
            answer_value=_answer_value(found[i]),
            about=readings[i].about if readings is not None else None,
        )
        for i in range(len(ids))
    ]


def _answer_value(a: DocAnswer | None) -> AnswerValue | None:
    """The typed answer of a document for the report (contract §8)."""
    if a is None or a.key is None or a.value is None:
        return None
    v = a.value
    unit = v.dimension or None
    return AnswerValue(kind=v.kind, value=v.key, unit=unit)
