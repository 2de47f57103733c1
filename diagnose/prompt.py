"""Assemble a case into chat messages, exactly as the sampled model will see them."""

from __future__ import annotations

from diagnose.case import Case, Document

DEFAULT_TEMPLATE = "{documents}\n\nQuestion: {question}"
"""Used when a case gives no template: documents first, then the question."""


def format_documents(documents: list[Document]) -> str:
    """Each document under a numbered header naming its id, separated by blank lines."""
    return "\n\n".join(
        f"Document [{i}] (id: {doc.id})\n{doc.text.strip()}" for i, doc in enumerate(documents, 1)
    )


def user_message(case: Case) -> str:
    template = case.template or DEFAULT_TEMPLATE
    # str.replace, not str.format: documents routinely contain braces.
    return template.replace("{documents}", format_documents(case.documents)).replace(
        "{question}", case.question.strip()
    )


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
