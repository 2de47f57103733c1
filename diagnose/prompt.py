"""Assemble a case into chat messages, exactly as the sampled model will see them."""

from __future__ import annotations

from diagnose.case import Case, Document

DEFAULT_TEMPLATE = "{documents}\n\nQuestion: {question}"
"""Used when a case gives no template: documents first, then the question."""


DEFAULT_DOCUMENT_FORMAT = "Document [{index}] (id: {id})\n{text}"
"""Each document under a numbered header naming its id (``Case.document_format``)."""
DEFAULT_SEPARATOR = "\n\n"


def format_documents(
    documents: list[Document], document_format: str | None = None, separator: str | None = None
) -> str:
    """The document block: each document written by ``document_format``, joined by ``separator``.

    The default format strips each text; a custom format gets the text as given,
    so a chain's own layout (e.g. ``"{text}"`` joined by blank lines) is reproduced exactly.
    """
    layout = document_format or DEFAULT_DOCUMENT_FORMAT
    # str.replace, not str.format: documents routinely contain braces. {text} goes last.
    return (DEFAULT_SEPARATOR if separator is None else separator).join(
        layout.replace("{index}", str(i))
        .replace("{id}", doc.id)
        .replace("{source}", doc.source or "")
        .replace("{text}", doc.text if document_format else doc.text.strip())
        for i, doc in enumerate(documents, 1)
    )


def user_message(case: Case) -> str:
    template = case.template or DEFAULT_TEMPLATE
    block = format_documents(case.documents, case.document_format, case.document_separator)
    return template.replace("{documents}", block).replace("{question}", case.question.strip())


def build_messages(case: Case) -> list[dict[str, str]]:
    """System prompt (when the case has one) and the user turn.

    Without a system prompt the model's own chat template supplies its default.
    """
    messages = []
    if case.system:
        messages.append({"role": "system", "content": case.system})
    messages.append({"role": "user", "content": user_message(case)})
    return messages


def flat_prompt(case: Case) -> str:
    """The messages as one text, for layout analysis and token counts."""
    return "\n\n".join(m["content"] for m in build_messages(case))
