"""Assemble a case into chat messages, exactly as the sampled model will see them.

Placeholders are substituted in one pass: what a placeholder inserts (a document's
text, the question) is never searched for placeholders again, so a document that
quotes ``{question}`` is shown as written. That also makes the assembled length a
sum that :func:`prompt_size` computes from the case without building the prompt,
and every assembly checks it first (:func:`check_prompt_size`): a template that
writes ``{documents}`` a thousand times is refused before it allocates anything.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from diagnose.case import Case, Document
from diagnose.errors import PromptTooLarge

DEFAULT_TEMPLATE = "{documents}\n\nQuestion: {question}"
"""Used when a case gives no template: documents first, then the question."""


DEFAULT_DOCUMENT_FORMAT = "Document [{index}] (id: {id})\n{text}"
"""Each document under a numbered header naming its id (``Case.document_format``)."""
DEFAULT_SEPARATOR = "\n\n"

MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""Largest assembled prompt (system plus user message) the engine builds, in characters:
about a million tokens, beyond any context window. The service refuses much less
(``RAG_DIAGNOSE_MAX_PROMPT_TOKENS`` x ``RAG_DIAGNOSE_PROMPT_CHARS_PER_TOKEN``)."""

_TEMPLATE_NAMES = ("documents", "question")
_DOCUMENT_NAMES = ("index", "id", "source", "text")
_TEMPLATE_SLOTS = re.compile(r"\{(%s)\}" % "|".join(_TEMPLATE_NAMES))
_DOCUMENT_SLOTS = re.compile(r"\{(%s)\}" % "|".join(_DOCUMENT_NAMES))
_MESSAGE_JOIN = "\n\n"
"""Between the system prompt and the user turn in :func:`flat_prompt`."""


def format_documents(
    documents: list[Document], document_format: str | None = None, separator: str | None = None
) -> str:
    """The document block: each document written by ``document_format``, joined by ``separator``.

    The default format strips each text; a custom format gets the text as given,
    so a chain's own layout (e.g. ``"{text}"`` joined by blank lines) is reproduced exactly.
    """
    layout = document_format or DEFAULT_DOCUMENT_FORMAT
    custom = bool(document_format)
    written = []
    for i, doc in enumerate(documents, 1):
        values = {"index": str(i), "id": doc.id, "source": doc.source or "",
                  "text": doc.text if custom else doc.text.strip()}
        # Not str.format: documents routinely contain braces. One pass: inserted text is not re-read.
        written.append(_DOCUMENT_SLOTS.sub(lambda slot, v=values: v[slot.group(1)], layout))
    return (DEFAULT_SEPARATOR if separator is None else separator).join(written)


def user_message(case: Case, max_chars: int = MAX_PROMPT_CHARS) -> str:
    """The user turn; :class:`CaseError` naming ``template``, ``document_format`` or the
    longest part when the whole prompt would exceed ``max_chars`` (nothing is built then)."""
    check_prompt_size(case, max_chars)
    block = format_documents(case.documents, case.document_format, case.document_separator)
    values = {"documents": block, "question": case.question.strip()}
    return _TEMPLATE_SLOTS.sub(lambda slot: values[slot.group(1)], case.template or DEFAULT_TEMPLATE)


def build_messages(case: Case, max_chars: int = MAX_PROMPT_CHARS) -> list[dict[str, str]]:
    """System prompt (when the case has one) and the user turn.

    Without a system prompt the model's own chat template supplies its default.
    """
    messages = []
    if case.system:
        messages.append({"role": "system", "content": case.system})
    messages.append({"role": "user", "content": user_message(case, max_chars)})
    return messages


def flat_prompt(case: Case, max_chars: int = MAX_PROMPT_CHARS) -> str:
    """The messages as one text, for layout analysis and token counts."""
    return _MESSAGE_JOIN.join(m["content"] for m in build_messages(case, max_chars))


# -- the assembled size, without assembling ---------------------------------------------------


@dataclass(frozen=True)
class PromptSize:
    """``chars == len(flat_prompt(case))``, and the parts it is the sum of."""

    chars: int
    system: int
    """Characters the system prompt adds (with the blank line after it), 0 without one."""
    question: int
    """Of the stripped question, once."""
    template_literal: int
    """Of the template's own text around its placeholders."""
    template_slots: Counter
    """How often the template writes ``{documents}`` and ``{question}``."""
    block: int
    """Of the document block, once."""
    block_once: int
    """What the block would be with each of ``document_format``'s placeholders written once."""
    format_slots: Counter
    """How often ``document_format`` writes each of its placeholders (per document)."""

    def without_repeats(self, field: str) -> int:
        """The size were ``field`` (``template`` or ``document_format``) to write each
        placeholder at most once."""
        documents, question = self.template_slots["documents"], self.template_slots["question"]
        block = self.block
        if field == "template":
            documents, question = min(documents, 1), min(question, 1)
        elif field == "document_format":
            block = self.block_once
        return self.system + self.template_literal + documents * block + question * self.question

    def repeats(self, field: str) -> bool:
        slots = self.template_slots if field == "template" else self.format_slots
        return any(n > 1 for n in slots.values())

    def culprit(self, max_chars: int) -> str:
        """The field to name when ``chars`` exceeds ``max_chars``: the template or document
        format whose repeated placeholders make it so, else the longest part as written."""
        repeating = [f for f in ("template", "document_format") if self.repeats(f)]
        for field in repeating:
            if self.without_repeats(field) <= max_chars:
                return field
        if repeating:
            return repeating[0]
        return max(_PARTS, key=lambda part: _part(self, part))


def prompt_size(case: Case) -> PromptSize:
    """The length of :func:`flat_prompt`, summed from the case's parts: each placeholder
    counted as often as it is written, times the length of what it inserts."""
    template_slots, template_literal = _slots(case.template or DEFAULT_TEMPLATE, _TEMPLATE_NAMES)
    format_slots, format_literal = _slots(case.document_format or DEFAULT_DOCUMENT_FORMAT, _DOCUMENT_NAMES)
    custom = bool(case.document_format)
    separator = DEFAULT_SEPARATOR if case.document_separator is None else case.document_separator
    n = len(case.documents)
    block = block_once = len(separator) * max(n - 1, 0) + n * format_literal
    for i, doc in enumerate(case.documents, 1):
        lengths = {"index": len(str(i)), "id": len(doc.id), "source": len(doc.source or ""),
                   "text": len(doc.text) if custom else _stripped_length(doc.text)}
        block += sum(format_slots[name] * length for name, length in lengths.items())
        block_once += sum(min(format_slots[name], 1) * length for name, length in lengths.items())
    question = _stripped_length(case.question)
    system = len(case.system) + len(_MESSAGE_JOIN) if case.system else 0
    chars = (system + template_literal + template_slots["documents"] * block
             + template_slots["question"] * question)
    return PromptSize(chars, system, question, template_literal, template_slots, block, block_once, format_slots)


def check_prompt_size(case: Case, max_chars: int = MAX_PROMPT_CHARS, bound: str = "") -> PromptSize:
    """:func:`prompt_size`, or :class:`PromptTooLarge` naming the field to blame
    (:meth:`PromptSize.culprit`) when the prompt would exceed ``max_chars``; ``bound`` says
    what sets that limit (a service names its settings), in parentheses after it."""
    size = prompt_size(case)
    if size.chars <= max_chars:
        return size
    field = size.culprit(max_chars)
    if field == "template":
        how = (f"the template writes {{documents}} {size.template_slots['documents']} and "
               f"{{question}} {size.template_slots['question']} times")
    elif field == "document_format":
        written = ", ".join(f"{{{name}}} {n}" for name, n in sorted(size.format_slots.items()) if n)
        how = f"the document format writes {written} times per document"
    else:
        how = f"the {field.replace('documents', 'document block')} alone is {_part(size, field):,} characters"
    raise PromptTooLarge(field, f"{how}: the prompt would be {size.chars:,} characters; "
                           f"at most {max_chars:,} are accepted" + (f" ({bound})" if bound else ""))


_PARTS = ("documents", "question", "template", "system")
"""The parts of a prompt :meth:`PromptSize.culprit` can name, in the order ties are broken."""


def _part(size: PromptSize, field: str) -> int:
    return {"documents": size.block, "question": size.question, "template": size.template_literal,
            "system": size.system}[field]


def _slots(text: str, names: tuple[str, ...]) -> tuple[Counter, int]:
    """How often each placeholder occurs and the length of the text around them.

    ``str.count`` finds what the one-pass substitution finds: no placeholder overlaps
    another (each is ``{name}`` without inner braces), so the counts are exact.
    """
    counts = Counter({name: text.count(f"{{{name}}}") for name in names})
    return counts, len(text) - sum(n * (len(name) + 2) for name, n in counts.items())


def _stripped_length(text: str) -> int:
    return len(text.strip())
