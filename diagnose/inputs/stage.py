"""The input stage: embed once, then answers, noise, centers, conflict and layout.

Steps, in order:
1. embed the documents and the question (the only model call);
2. type the question and extract each document's answer span;
3. mark noise (unusable text, off-topic, unanswered boilerplate);
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
from diagnose.inputs.noise import noise_mask, question_relevance, text_features
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
    found = resolve_answers(question, texts)
    features = [text_features(t) for t in texts]
    noise = noise_mask(relevance, np.array([a is not None for a in found], bool), features, settings)
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
    report = InputReport(
        gravity_centers=centers,
        noise_documents=[ids[i] for i in range(len(ids)) if assignment[i] is None],
        conflict=conflict,
        documents=_views(ids, texts, assignment, center_ids, relevance, emb, found, count_tokens),
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
    return InputAnalysis(report, emb, qvec, center_answers)


def resolve_answers(question: ans.Question, texts: list[str], strong: float = 2.0) -> list[ans.Answer | None]:
    """Each document's answer: its best typed candidate, unless that is weak
    (score below ``strong``) and unique to it while the document mentions an
    answer another document states strongly; documents without a candidate
    take the earliest answer of another document that they mention."""
    own = []
    for text in texts:
        cands = [c for c in ans.candidates(question, text) if c.score > 0 and c.key]
        own.append(cands[0] if cands else None)
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
    answered = len({assignment[i] for i in range(len(keys)) if assignment[i] is not None and keys[i]})
    mismatches = sum(p.kind == "value_mismatch" for p in pairs)
    score = round(cf.conflict_score(weights, answered, mismatches), 4)
    return Conflict(detected=score >= settings.conflict_threshold, score=score, pairs=out)


def _views(ids, texts, assignment, center_ids, relevance, emb, found, count_tokens) -> list[DocumentView]:
    pos = layout.project_2d(emb) if len(ids) else np.zeros((0, 2), np.float32)
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
