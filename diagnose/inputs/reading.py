"""The read tier: the case's generator reads each document alone and answers from it.

For every document the model gets a two-message prompt (a fixed English system
instruction, then ``Document:\\n{text}\\n\\nQuestion: {question}``) and answers:

* open questions: one greedy decode (:func:`~diagnose.decode.engine.decode_rows`,
  temperature 0, ``max_new_tokens``, stop at end of sequence); the answer is the
  first line of the decoded text, stripped, at most :data:`MAX_ANSWER_CHARS` chars;
* yes/no questions: no decoding at all. One prefill gives the logits of the first
  answer position; after ``log_softmax`` over the whole vocabulary,
  ``yes_margin = logsumexp(yes variants) - logsumexp(no variants)`` where the
  variants are those of :data:`YES_VARIANTS` / :data:`NO_VARIANTS` that the
  tokenizer has as one token. The answer is ``"yes"`` when the margin is >= 0.

In-process, every document of a call is one prompt of a single multi-prompt
batch (:mod:`diagnose.decode.multi_prompt`): the prompts share their head (the
system instruction and ``Document:``) as the tree's root, the greedy answers
decode together, and the yes/no margins come from one batched prefill; each
reading is what that document's prompt alone gives. A document is cut to ``max_document_tokens`` tokens (its start is kept) so
that one huge document cannot blow memory or time. An empty document gives
``DocumentReading("", None, 0)`` without calling the model.

Backends: :class:`~diagnose.decode.backend.TransformersBackend`, the test
:class:`~diagnose.decode.fake.FakeBackend` (variants looked up in its word
vocabulary) and :class:`~diagnose.decode.remote.RemoteBackend` (one
``/chat/completions`` request per document through
:meth:`RemoteBackend.complete`, temperature 0; for yes/no one token with
``top_logprobs`` 20, a variant missing from them counts as the lowest returned
logprob minus 1). A server has no tokenizer here, so a document is cut at
:data:`REMOTE_CHARS_PER_TOKEN` characters per token, and a request's wall time is
counted as ``prefill_s`` for yes/no (one token) and ``decode_s`` for open questions.

Which of the two a question is: :func:`diagnose.text.questions.is_yes_no_question`.

:meth:`DocumentReader.compare` asks the pairwise question of two documents in one
prompt (each cut to half of ``max_document_tokens``): "do the two passages give
the same answer to this question?", read as the same yes-minus-no margin (one
prefill, or one token with ``top_logprobs`` on a server); :mod:`diagnose.inputs.compare`
decides which documents are compared.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from diagnose.reader.readings import NO_VARIANTS, YES_VARIANTS, DocumentReading, ReadingStats, margin_from_logprobs

__all__ = [
    "DocumentReader",
    "DocumentReading",
    "NO_VARIANTS",
    "Reader",
    "ReadingStats",
    "YES_VARIANTS",
    "margin_from_logprobs",
]


SYSTEM_OPEN = "Answer the question using only the document. Reply with the answer only, in a few words."
SYSTEM_YES_NO = "Answer the question using only the document. Reply with yes or no, then a short reason."

SYSTEM_PAIR = ("Two passages follow, then a question. Reply yes if both passages give the same answer "
               "to the question, no if they give different answers.")

MAX_ANSWER_CHARS = 200
NO_INFORMATION = "This document says nothing about the question."
"""Read in place of a document to measure the model's own lean on a yes/no question."""
REMOTE_CHARS_PER_TOKEN = 4
"""Characters per token assumed when cutting a document for a server (no tokenizer here)."""
REMOTE_TOP_LOGPROBS = 20
_CHARS_PER_TOKEN_BOUND = 16
"""A token is rarely longer than this: text beyond max tokens x this is never tokenized."""


DocumentCallback = Callable[[int], None]
"""Called after each document with the number of documents done so far (1..n)."""


class Reader(Protocol):
    """What the read tier asks of a reader (:class:`DocumentReader`, :class:`~diagnose.reader.structured.StructuredReader`,
    or one wrapping them)."""

    decides: bool
    """Whether its answers make the centers by themselves (a reader that reads: the reference
    model or a server serving it), rather than adjusting the text's answers (the sampled model)."""

    def read(self, question: str, documents: list[str], yes_no: bool) -> list[DocumentReading]: ...

    def compare(self, question: str, pairs: list[tuple[str, str]]) -> list[float | None]: ...


class DocumentReader:
    """Reads each document alone with ``backend`` and answers the question from it."""

    decides = False

    def __init__(self, backend: Any, max_new_tokens: int = 24, max_document_tokens: int = 768) -> None:
        if max_new_tokens < 1:
            raise ValueError("max_new_tokens must be >= 1")
        if max_document_tokens < 1:
            raise ValueError("max_document_tokens must be >= 1")
        self.backend = backend
        self.max_new_tokens = max_new_tokens
        self.max_document_tokens = max_document_tokens
        self.stats = ReadingStats()
        self._remote = not backend.in_process
        self._variant_ids: tuple[list[int], list[int]] | None = None

    # -- public ----------------------------------------------------------------- #

    def read(
        self,
        question: str,
        documents: list[str],
        yes_no: bool,
        on_document: DocumentCallback | None = None,
    ) -> list[DocumentReading]:
        """One :class:`DocumentReading` per document, in order: in-process, every document in one
        multi-prompt batch (:mod:`diagnose.decode.multi_prompt`); on a server, one at a time."""
        if self._remote:
            readings = []
            for done, text in enumerate(documents, start=1):
                readings.append(self._read_remote_one(question, text or "", yes_no))
                if on_document:
                    on_document(done)
            return readings
        readings = [DocumentReading("", None, 0)] * len(documents)
        todo = [i for i, text in enumerate(documents) if (text or "").strip()]
        prompts = [self.backend.chat_ids(self.messages(question, self.truncate(documents[i]), yes_no)) for i in todo]
        self.stats.documents += len(prompts)
        self.stats.prompt_tokens += sum(len(ids) for ids in prompts)
        if yes_no and all(self._variants()):
            for i, ids, margin in zip(todo, prompts, self._margins(prompts)):
                readings[i] = DocumentReading("yes" if margin >= 0 else "no", margin, len(ids))
        else:
            for i, ids, answer in zip(todo, prompts, self._greedy(prompts)):
                readings[i] = DocumentReading(answer, None, len(ids))
        if on_document:
            for done in range(1, len(documents) + 1):
                on_document(done)
        return readings

    def compare(self, question: str, pairs: list[tuple[str, str]]) -> list[float | None]:
        """Per pair of documents, ``log P(yes) - log P(no)`` for "do these two passages give the
        same answer to the question?" (each passage cut to half of ``max_document_tokens``;
        None when the model gave neither answer, or a passage is empty). In-process, every
        pair in one multi-prompt batch."""
        todo = [k for k, (a, b) in enumerate(pairs) if a.strip() and b.strip()]
        half = self.max_document_tokens // 2
        messages = [self.pair_messages(question, self.truncate(pairs[k][0], half), self.truncate(pairs[k][1], half))
                    for k in todo]
        out: list[float | None] = [None] * len(pairs)
        if self._remote:
            for k, m in zip(todo, messages):
                out[k] = self._remote_margin(m)
            return out
        prompts = [self.backend.chat_ids(m) for m in messages]
        self.stats.documents += len(prompts)
        self.stats.prompt_tokens += sum(len(ids) for ids in prompts)
        if all(self._variants()):
            for k, margin in zip(todo, self._margins(prompts)):
                out[k] = margin
        return out

    def pair_messages(self, question: str, a: str, b: str) -> list[dict[str, str]]:
        """The chat messages of the pairwise question (already truncated passages)."""
        return [
            {"role": "system", "content": SYSTEM_PAIR},
            {"role": "user", "content": f"Passage 1:\n{a}\n\nPassage 2:\n{b}\n\nQuestion: {question}\n\n"
                                        "Do the two passages give the same answer to this question?"},
        ]

    def messages(self, question: str, document: str, yes_no: bool) -> list[dict[str, str]]:
        """The chat messages for one (already truncated) document."""
        return [
            {"role": "system", "content": SYSTEM_YES_NO if yes_no else SYSTEM_OPEN},
            {"role": "user", "content": f"Document:\n{document}\n\nQuestion: {question}"},
        ]

    def truncate(self, text: str, limit: int | None = None) -> str:
        """The start of ``text`` that fits in ``limit`` tokens (default ``max_document_tokens``)."""
        limit = limit or self.max_document_tokens
        if self._remote:
            return text[: limit * REMOTE_CHARS_PER_TOKEN]
        text = text[: limit * _CHARS_PER_TOKEN_BOUND]
        tokenizer = getattr(self.backend, "tokenizer", None)
        if tokenizer is not None and callable(tokenizer):
            if getattr(tokenizer, "is_fast", False):
                enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
                if len(enc["input_ids"]) <= limit:
                    return text
                return text[: enc["offset_mapping"][limit - 1][1]]
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            return text if len(ids) <= limit else tokenizer.decode(ids[:limit])
        count = getattr(self.backend, "count_tokens", None)
        if count is None or count(text) <= limit:
            return text
        # Any other backend: the longest prefix that count_tokens accepts (binary search).
        low, high = 0, len(text)
        while low < high:
            mid = (low + high + 1) // 2
            if count(text[:mid]) <= limit:
                low = mid
            else:
                high = mid - 1
        return text[:low]

    # -- in-process batches ----------------------------------------------------- #

    def _greedy(self, prompts: list[list[int]]) -> list[str]:
        """Each prompt's greedy answer (first line), all prompts decoded in one batch."""
        from diagnose.case import SamplingSpec
        from diagnose.decode.engine import DecodeStats, Row
        from diagnose.decode.multi_prompt import PromptRows, decode_prompts

        spec = SamplingSpec(
            seeds=1,
            temperatures=[0.0],
            top_k=0,
            top_p=1.0,
            repetition_penalty=1.0,
            max_new_tokens=self.max_new_tokens,
        )
        stats = DecodeStats()
        traces = decode_prompts(self.backend, [PromptRows(ids, [Row(0.0, 0)]) for ids in prompts], spec, stats=stats)
        self.stats.prefill_s += stats.prefill_seconds
        self.stats.decode_s += stats.decode_seconds
        self.stats.generated_tokens += sum(len(t[0].tokens) for t in traces)
        return [_first_line(self.backend.decode(t[0].tokens)) for t in traces]

    def _margins(self, prompts: list[list[int]]) -> list[float]:
        """``logsumexp(yes variants) - logsumexp(no variants)`` at each prompt's first answer position."""
        import torch

        from diagnose.decode.multi_prompt import first_logits

        yes_ids, no_ids = self._variants()
        started = time.perf_counter()
        margins = []
        for logits in first_logits(self.backend, prompts):
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            margins.append(float(torch.logsumexp(logprobs[yes_ids], dim=0) - torch.logsumexp(logprobs[no_ids], dim=0)))
        self.stats.prefill_s += time.perf_counter() - started
        return margins

    def _variants(self) -> tuple[list[int], list[int]]:
        """Token ids of the yes and no variants that are single tokens (cached)."""
        if self._variant_ids is None:
            self._variant_ids = (
                _single_tokens(self.backend, YES_VARIANTS),
                _single_tokens(self.backend, NO_VARIANTS),
            )
        return self._variant_ids

    # -- a server, one request per document --------------------------------------- #

    def _remote_margin(self, messages: list[dict[str, str]]) -> float | None:
        """The yes-no margin of ``messages`` from a server's first-token top logprobs."""
        started = time.perf_counter()
        _, top, usage = self.backend.complete(messages, 1, REMOTE_TOP_LOGPROBS)
        self.stats.prefill_s += time.perf_counter() - started
        self.stats.prompt_tokens += _int(usage.get("prompt_tokens"))
        self.stats.documents += 1
        return margin_from_logprobs(top)

    def _read_remote_one(self, question: str, text: str, yes_no: bool) -> DocumentReading:
        if not text.strip():
            return DocumentReading("", None, 0)
        messages = self.messages(question, self.truncate(text), yes_no)
        started = time.perf_counter()
        if yes_no:
            text, top, usage = self.backend.complete(messages, 1, REMOTE_TOP_LOGPROBS)
        else:
            text, top, usage = self.backend.complete(messages, self.max_new_tokens, 0)
        elapsed = time.perf_counter() - started
        prompt_tokens = _int(usage.get("prompt_tokens"))
        self.stats.documents += 1
        self.stats.prompt_tokens += prompt_tokens
        self.stats.generated_tokens += _int(usage.get("completion_tokens"))
        if yes_no:
            self.stats.prefill_s += elapsed
            margin = margin_from_logprobs(top)
            if margin is not None:
                return DocumentReading("yes" if margin >= 0 else "no", margin, prompt_tokens)
        else:
            self.stats.decode_s += elapsed
        return DocumentReading(_first_line(text), None, prompt_tokens)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0].strip()[:MAX_ANSWER_CHARS] if lines else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _single_tokens(backend: Any, variants: Sequence[str]) -> list[int]:
    """Ids of the variants that the backend's tokenizer encodes as exactly one token."""
    found: list[int] = []
    tokenizer = getattr(backend, "tokenizer", None)
    vocab = getattr(backend, "vocab", None)
    for variant in variants:
        if tokenizer is not None and callable(tokenizer):
            ids = list(tokenizer(variant, add_special_tokens=False)["input_ids"])
            token = ids[0] if len(ids) == 1 else None
        elif isinstance(vocab, list):  # the fake backend: words are tokens
            token = vocab.index(variant.strip()) if variant.strip() in vocab else None
        else:
            token = None
        if token is not None and token not in found:
            found.append(token)
    return found
