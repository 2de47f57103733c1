"""The input stage: embed once, then answers, noise, centers, conflict and layout.

Steps, in order:
1. embed the documents and the question (the only model call);
2. type the question and extract each document's answer span (near-ties go
   to the answer other documents corroborate, edited copies keep theirs);
3. mark noise (unusable text, off-topic, unanswered boilerplate or isolated);
4. group non-noise documents into gravity centers, one answer per center;
5. quote the evidence between centers and score the conflict;
6. fill the per-document view and the prompt layout facts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from diagnose.case import Case
from diagnose.inputs import answers as ans
from diagnose.inputs import centers as ctr
from diagnose.inputs import conflict as cf
from diagnose.inputs import layout
from diagnose.inputs.instructions import instruction_conflicts
from diagnose.inputs.noise import isolation, noise_mask, question_relevance, text_features
from diagnose.inputs.settings import InputSettings
from diagnose.report import Conflict, ConflictPair, DocumentView, GravityCenter, InputReport

if TYPE_CHECKING:
    from diagnose.inputs.embed import Embedder


@dataclass
class InputAnalysis:
    """What the input stage hands to the later stages."""

    report: InputReport
    doc_embeddings: np.ndarray
    """``(n_docs, d)`` float32, L2-normalised, in case order."""
    question_embedding: np.ndarray
    """``(d,)`` float32, L2-normalised."""
    center_answers: dict[str, list[str]] = field(default_factory=dict)
    """Per center id, the normalised answer strings that characterise it."""
    projection: layout.Projection | None = None
    """The document map's frame, to place sampled outputs among the documents (None under 2 documents)."""


def analyze_inputs(
    case: Case,
    embedder: "Embedder",
    settings: InputSettings,
    count_tokens: Callable[[str], int] | None = None,
    prompt: str | None = None,
    context_window: int = 0,
) -> InputAnalysis:
    """Run the input stage on ``case`` (see the module docstring for the steps)."""
    texts = [d.text for d in case.documents]
    ids = [d.id for d in case.documents]
    vectors = embedder.encode(texts + [case.question])
    emb, qvec = vectors[:-1], vectors[-1]
    cosine = (emb @ qvec).astype(np.float32) if texts else np.zeros(0, np.float32)
    relevance = question_relevance(case.question, texts, cosine)

    question = ans.parse_question(case.question)
    found = resolve_answers(question, texts, duplicate_ratio=settings.duplicate_ratio)
    features = [text_features(t) for t in texts]
    answered, corroborated = answer_evidence(found, settings.weak_answer)
    noise = noise_mask(relevance, answered, features, settings, isolation(emb), corroborated)
    keys = ctr.merge_keys([a.key if a and not noise[i] else None for i, a in enumerate(found)])
    assignment = ctr.assign_centers(
        emb, keys, noise, settings.attach_similarity, settings.center_similarity
    )
    assignment = ctr.merge_agreeing_copies(
        texts, assignment, [a.span if a else None for a in found], settings.duplicate_ratio
    )
    center_ids = [f"c{k + 1}" for k in range(1 + max((a for a in assignment if a is not None), default=-1))]
    weights = ctr.masses(assignment)
    members = [[i for i, a in enumerate(assignment) if a == k] for k in range(len(center_ids))]
    center_answers = {
        cid: sorted({v for i in m for v in _answer_strings(found[i], keys[i])})
        for cid, m in zip(center_ids, members)
    }
    centers = [
        GravityCenter(
            id=cid,
            documents=[ids[i] for i in m],
            mass=round(float(w), 6),
            label=_label([found[i] for i in m], [texts[i] for i in m]),
        )
        for cid, m, w in zip(center_ids, members, weights)
    ]
    conflict = _conflict(texts, ids, emb, assignment, found, keys, weights, settings)
    projection = layout.fit_projection(emb)
    positions = projection(emb) if projection else np.zeros((len(ids), 2), np.float32)
    report = InputReport(
        gravity_centers=centers,
        noise_documents=[ids[i] for i in range(len(ids)) if assignment[i] is None],
        conflict=conflict,
        documents=_views(ids, texts, assignment, center_ids, relevance, positions, found, count_tokens),
        prompt_tokens=count_tokens(prompt) if count_tokens and prompt else 0,
        context_window=context_window,
        instruction_conflicts=instruction_conflicts(case.system, case.template),
        delimiter_issue=layout.delimiter_issue(texts, case.template, prompt),
    )
    if members:
        report.strongest_center_position = layout.center_position(prompt, texts, members[0], count_tokens)
        report.lost_in_the_middle = layout.lost_in_the_middle(
            report.strongest_center_position, report.prompt_tokens, settings.long_context_tokens
        )
    return InputAnalysis(report, emb, qvec, center_answers, projection)


def resolve_answers(
    question: ans.Question,
    texts: list[str],
    strong: float = 2.0,
    margin: float = 2.0,
    duplicate_ratio: float = 0.6,
) -> list[ans.Answer | None]:
    """Each document's answer: its best typed candidate, with two corrections.

    - Consensus: when the best answer is unique to the document but another of
      its candidates, scoring within ``margin`` of the best, is another
      document's best answer, the shared one wins (the spans are near-ties;
      the one other documents corroborate is the likelier reading) - unless
      the document is a near-copy (word-sequence similarity at least
      ``duplicate_ratio``) of such a document that differs from it in exactly
      its own answer: an edited copy that changed this value states a
      conflicting claim.
    - A weak answer (score below ``strong``) unique to the document gives way
      to an answer another document states strongly that the document
      mentions; documents without a candidate take the earliest answer of
      another document that they mention.
    """
    ranked = [[c for c in ans.candidates(question, text) if c.score > 0 and c.key] for text in texts]
    own = [cands[0] if cands else None for cands in ranked]
    support = Counter(a.key for a in own if a)
    for i, cands in enumerate(ranked):
        mine = own[i]
        if mine is None or support[mine.key] > 1:
            continue
        shared = [c for c in cands if c.key != mine.key and support[c.key] >= 1 and c.score >= mine.score - margin]
        shared = [c for c in shared if not _edited_copy(texts, own, i, c.key, duplicate_ratio)]
        if shared:
            own[i] = shared[0]
    support = Counter(a.key for a in own if a)
    known = sorted({a.key: a for a in own if a and a.score >= strong}.values(), key=lambda a: a.key)
    known_any = sorted({a.key: a for a in own if a}.values(), key=lambda a: a.key)
    out = []
    for text, mine in zip(texts, own):
        weak = mine is not None and mine.score < strong and support[mine.key] == 1
        if mine is None or weak:
            norm = f" {ans.normalise(text)} "
            pool = known if weak else known_any
            hits = [(norm.find(f" {a.key} "), a) for a in pool if a is not mine and f" {a.key} " in norm]
            if hits:
                mine = min(hits, key=lambda h: (h[0], h[1].key))[1]
        out.append(mine)
    return out


def answer_evidence(found: list[ans.Answer | None], weak: float) -> tuple[np.ndarray, np.ndarray]:
    """Per document, ``(answered, corroborated)`` as ``(n,)`` bool arrays for noise.

    corroborated: another document states the same answer key. answered: the
    document has an answer that is corroborated or scores at least ``weak`` (a
    lone class word far from the subject, unique to its page, is no answer)."""
    support = Counter(a.key for a in found if a)
    backed = np.array([a is not None and support[a.key] > 1 for a in found], bool)
    answered = np.array([a is not None and (bool(b) or a.score >= weak) for a, b in zip(found, backed)], bool)
    return answered, backed


def _edited_copy(texts: list[str], own: list, i: int, key: str, duplicate_ratio: float) -> bool:
    """Whether document ``i`` is a near-copy of a document answering ``key``
    whose aligned differences include ``i``'s own answer span."""
    span = f" {ans.normalise(own[i].span)} "
    return any(
        a is not None and a.key == key and cf.word_ratio(texts[i], texts[j]) >= duplicate_ratio
        and any(span in f" {ans.normalise(x)} " for x, _ in cf.differing_spans(texts[i], texts[j], max_spans=8))
        for j, a in enumerate(own) if j != i
    )


def _answer_strings(a: ans.Answer | None, key: str | None) -> list[str]:
    return [s for s in {key, ans.normalise(a.span) if a else None} if s]


def _label(found: list[ans.Answer | None], texts: list[str]) -> str:
    spans = Counter(a.span for a in found if a)
    if spans:
        return max(spans, key=lambda s: (spans[s], -len(s)))[:60]
    words = texts[0].split()
    return " ".join(words[:6]) + (" …" if len(words) > 6 else "")


def _conflict(texts, ids, emb, assignment, found, keys, weights, settings) -> Conflict:
    spans = [a.span if a else None for a in found]
    pairs = cf.pair_evidence(
        texts, emb, assignment, spans, settings.duplicate_ratio, settings.center_similarity
    )
    out = [
        ConflictPair(a=ids[p.a], b=ids[p.b], kind=p.kind, evidence=cf.quote((ids[p.a], ids[p.b]), list(p.spans)))
        for p in pairs
    ]
    k = len(weights)
    sizes = [sum(1 for a in assignment if a == c) for c in range(k)]
    answered = [any(keys[i] for i, a in enumerate(assignment) if a == c) for c in range(k)]
    confirming = sum(1 for i, a in enumerate(assignment) if a is not None and keys[i]) if k <= 1 else 0
    mismatches = sum(p.kind == "value_mismatch" for p in pairs)
    score = round(cf.conflict_score(sizes, answered, mismatches, len(texts), confirming), 4)
    return Conflict(detected=score >= settings.conflict_threshold, score=score, pairs=out)


def _views(ids, texts, assignment, center_ids, relevance, pos, found, count_tokens) -> list[DocumentView]:
    return [
        DocumentView(
            id=ids[i],
            center=center_ids[assignment[i]] if assignment[i] is not None else None,
            relevance=round(float(relevance[i]), 4),
            tokens=count_tokens(texts[i]) if count_tokens else 0,
            position=[float(x) for x in pos[i]],
            answer=found[i].span if found[i] else None,
        )
        for i in range(len(ids))
    ]
