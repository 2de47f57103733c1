"""Claims: the sentences of each document that answer the question.

Each document is split into sentences (:mod:`diagnose.text.sentences`); each
sentence is scored against the question by embedding cosine plus lexical
overlap of content tokens (character bigrams for CJK, where the English
embedder is blind); a document's best sentences are its claims, each with its
typed values (:mod:`diagnose.text.values`) and its polarity relative to the
question (:mod:`diagnose.text.polarity`).

Numeric core: :func:`score_sentences` is pure over float32 arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diagnose.text.polarity import relative_polarity
from diagnose.text.questions import predicate_text, subject_text
from diagnose.text.roles import counted_things, counts
from diagnose.text.sentences import Sentence, cjk_share, content_tokens, overlap, split_sentences
from diagnose.text.tables import table_cell
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values


@dataclass(frozen=True)
class Claim:
    doc: int
    """Index of the document in the case."""
    sentence: Sentence
    score: float
    """Relevance of the sentence to the question (cosine + weighted lexical overlap)."""
    values: tuple[Value, ...]
    polarity: int
    """+1 when the sentence affirms what the question asks, -1 when it denies it."""
    subject: tuple[str, ...] = ()
    """The content tokens of the question's subject (:func:`diagnose.text.questions.subject_text`):
    in a table, the column or row they name holds the answer."""


@dataclass(frozen=True)
class DocumentSentences:
    """The sentences of every document, flattened for one embedding call."""

    sentences: list[list[Sentence]]
    """Per document, its sentences (at most ``max_sentences``, lexically best first kept in text order)."""
    headers: list[list[str]] | None = None
    """Per document and sentence, the header row of the table the sentence is a row of ("" for a
    sentence of running text); None: not known."""

    @property
    def flat(self) -> list[str]:
        return [s.text for doc in self.sentences for s in doc]

    @property
    def read(self) -> list[str]:
        """Each flattened sentence with the words it is read by: a table row with its header row."""
        if self.headers is None:
            return self.flat
        return [f"{h} {s.text}" if h else s.text for doc, hs in zip(self.sentences, self.headers)
                for s, h in zip(doc, hs)]

    def owners(self) -> np.ndarray:
        """``(n_sentences,)`` int: the document index of each flattened sentence."""
        return np.array([i for i, doc in enumerate(self.sentences) for _ in doc], dtype=np.int64)


def document_sentences(
    question: str, texts: list[str], max_sentences: int, max_chars: int = 1_000_000
) -> DocumentSentences:
    """Split each text and keep its lexically most question-like sentences (ties:
    earlier first), at most ``max_sentences`` and ``max_chars`` characters in all
    (the first always), in text order. An empty document keeps its (stripped)
    text as one sentence so that it still has a vector."""
    qtok = content_tokens(question)
    out = []
    for text in texts:
        sents = split_sentences(text) or [Sentence(0, text.strip() or " ")]
        ranked = sorted(range(len(sents)), key=lambda k: (-overlap(qtok, sents[k].text), k))
        keep, used = [], 0
        for k in ranked[:max_sentences]:
            if keep and used + len(sents[k].text) > max_chars:
                continue
            keep.append(k)
            used += len(sents[k].text)
        out.append([sents[k] for k in sorted(keep)])
    return DocumentSentences(out, [[_header(text, s) for s in doc] for text, doc in zip(texts, out)])


def _header(text: str, sentence: Sentence) -> str:
    """The header row of the table ``sentence`` is a row of, as words; "" for running text."""
    placed = text[sentence.start:sentence.start + len(sentence.text)] == sentence.text  # not a stand-in
    cell = table_cell(text, sentence.start) if placed else None
    return " ".join(h for h in cell.headers if h) if cell is not None else ""


def score_sentences(cosine: np.ndarray, lexical: np.ndarray, question_cjk: float, lexical_weight: float) -> np.ndarray:
    """Relevance per sentence, ``(n,)`` float32.

    cosine, lexical: ``(n,)`` float32 in [-1, 1] and [0, 1]. The lexical share is
    weighted by ``lexical_weight``; for a CJK question (``question_cjk`` = share of
    its characters that are CJK) the English embedder's cosine is replaced by the
    lexical share in proportion."""
    cosine = np.asarray(cosine, np.float32)
    lexical = np.asarray(lexical, np.float32)
    w = float(np.clip(question_cjk, 0.0, 1.0))
    return ((1 - w) * cosine + w * lexical + lexical_weight * lexical).astype(np.float32)


def find_claims(
    question: str,
    docs: DocumentSentences,
    sentence_emb: np.ndarray,
    question_emb: np.ndarray,
    lexical_weight: float,
    per_document: int,
) -> tuple[list[list[Claim]], np.ndarray]:
    """Each document's best ``per_document`` claims (best first) and every sentence's score.

    The lexical share counts the question's predicate tokens (what it asks)
    fully and its subject's (capitalised names, which every retrieved page
    repeats, titles included) at half weight, in the sentence and, for a table
    row, in its table's header row (:attr:`DocumentSentences.read`). A sentence that is itself a
    question (an FAQ heading) states nothing: it is a claim only when the
    document has no other sentence.

    sentence_emb: ``(n_sentences, d)`` float32 unit rows in ``docs.flat`` order;
    question_emb: ``(d,)``. Returns the claims per document and ``(n_sentences,)`` scores."""
    predicate = content_tokens(predicate_text(question))
    subject = [t for t in content_tokens(question) if t not in predicate]
    flat = docs.flat
    cosine = sentence_emb @ question_emb if len(flat) else np.zeros(0, np.float32)
    counted = counted_things(question)
    lexical = np.array([min(1.0, (overlap(predicate, s) * len(predicate) + 0.5 * overlap(subject, s) * len(subject)
                                  + _counts_asked(s, counted)) / max(len(predicate) + 0.5 * len(subject), 1e-9))
                        for s in docs.read], np.float32)
    scores = score_sentences(cosine, lexical, cjk_share(question), lexical_weight)
    asks = np.array([_is_question(s) for s in flat], bool)
    owners = docs.owners()
    named = tuple(content_tokens(subject_text(question)))
    claims: list[list[Claim]] = []
    for i, sents in enumerate(docs.sentences):
        rows = np.flatnonzero(owners == i)
        stated = [r for r in rows if not asks[r]] or list(rows)
        best = sorted(stated, key=lambda r: (-scores[r], r))[:per_document]
        claims.append([
            Claim(
                doc=i,
                sentence=sents[r - rows[0]],
                score=float(scores[r]),
                values=tuple(extract_values(sents[r - rows[0]].text)),
                polarity=relative_polarity(question, sents[r - rows[0]].text),
                subject=named,
            )
            for r in best
        ])
    return claims, scores


def _counts_asked(sentence: str, counted: list[str]) -> float:
    """1 when ``sentence`` counts what the question asks to count ("the census counted 12,456 *people*"
    for "the population of"), as if it held one more of the question's words; else 0."""
    return float(bool(counted) and any(counts(v, sentence, counted) for v in extract_values(sentence)))


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？"))
