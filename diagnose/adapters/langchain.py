"""LangChain adapter: cases from LangChain documents, retrievers, prompts and live chains.

This is the only module that imports ``langchain_core`` (STYLE point 10); the
engine accepts LangChain ``Document`` objects duck-typed (``adapters.documents``).

- :func:`case_from_documents`: a Case from a list of LangChain ``Document``\\ s.
- :func:`case_from_retriever`: run a retriever and render a prompt template the
  way an LCEL RAG chain does, and build the case from the result.
- :class:`CaseCaptureHandler`: a callback handler that records a live chain's
  retrieval and rendered prompt; ``.case(id)`` builds the case, ``.write(path)``
  writes it as a YAML case file. :func:`case_from_chain` runs a chain with one.

How exact the case is. A case holds one optional system message and one user
message, ``template`` with ``{documents}`` and ``{question}`` filled in
(``diagnose.prompt.build_messages``). The case reproduces the chain's system
message and every character of its user message around the document block and
the question; this is checked when the case is built (``ValueError`` when the
prompt cannot be expressed that way: documents in the system message, chat
history or few-shot turns, non-text content). The document block is exact too:
the chain's per-document format and separator are recovered from the rendered
block (``adapters.block_layout``: page contents joined by blank lines, a
stuff-documents chain's ``document_prompt``, bullets, headers naming the
index, id or source) and carried as ``document_format``/``document_separator``.
Only when no single format and separator write the block (a formatter that
prints other metadata) does the case fall back to diagnose's own layout, with a
``UserWarning``; pass ``document_format``/``document_separator`` to match it.
The documents stay separate either way, since gravity centers, conflicts and
noise are computed per document. Document ids are stable across runs
(``adapters.documents``: ``metadata["id"]`` or ``source`` before a vector
store's random UUID).

A handler that stops the chain before its model (``stop_before_model``) does it
by raising :class:`PromptCaptured`; LangChain logs every exception a handler
raises, so that one log line is filtered out (it is not an error).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LCDocument
from langchain_core.messages import BaseMessage
from langchain_core.prompts import BasePromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig

from diagnose.adapters.block_layout import infer_layout
from diagnose.document import to_documents
from diagnose.case import Case, case_from_dict
from diagnose.case_file import case_to_yaml
from diagnose.report import write_atomic
from diagnose.prompt import user_message

__all__ = [
    "CaseCaptureHandler",
    "PromptCaptured",
    "case_from_chain",
    "case_from_documents",
    "case_from_retriever",
    "case_to_yaml",
    "join_page_content",
]

DocumentFormatter = Callable[[list[LCDocument]], str]

# Stand-ins rendered through the prompt to find where its variables land.
_CONTEXT_MARK = "\ue000documents\ue000"
_QUESTION_MARK = "\ue000question\ue000"
_QUESTION_KEYS = ("question", "input", "query")


def join_page_content(documents: Sequence[LCDocument]) -> str:
    """The usual LCEL ``format_docs``: page contents separated by blank lines."""
    return "\n\n".join(doc.page_content for doc in documents)


def case_from_documents(
    id: str, question: str, documents: Sequence[LCDocument], **case_fields: Any
) -> Case:
    """A Case from LangChain documents; ``case_fields`` are any other case fields.

    Each document's id is its ``id`` (or ``metadata["id"]``, else ``d<index>``);
    ``metadata["score"]``/``["relevance_score"]``, ``["source"]`` and the date and authority
    (``diagnose.document``: ``date``, ``effective_date``, ``status: archived``...) are kept.
    """
    return _case(id=id, question=question, documents=list(documents), **case_fields)


def case_from_retriever(
    id: str,
    question: str,
    retriever: BaseRetriever | Runnable,
    prompt: BasePromptTemplate,
    *,
    document_variable: str = "context",
    question_variable: str = "question",
    format_document: DocumentFormatter | None = None,
    prompt_inputs: Mapping[str, Any] | None = None,
    **case_fields: Any,
) -> Case:
    """Retrieve for ``question`` and render ``prompt`` as the chain would; build the case.

    Does what ``{document_variable: retriever | format_document, question_variable:
    RunnablePassthrough()} | prompt`` does: ``retriever.invoke(question)``, the
    documents joined by ``format_document`` (default :func:`join_page_content`),
    then ``prompt.invoke``. ``prompt_inputs`` fills any other prompt variables.
    The question is stripped first, as the case format strips it. See the module
    docstring for how exact the resulting case is.
    """
    question = question.strip()
    documents = list(retriever.invoke(question))
    context = (format_document or join_page_content)(documents)
    extra = dict(prompt_inputs or {})
    rendered = _messages(prompt.invoke({**extra, document_variable: context, question_variable: question}))
    marked = _messages(
        prompt.invoke({**extra, document_variable: _CONTEXT_MARK, question_variable: _QUESTION_MARK})
    )
    system, human = _split(rendered)
    marked_system, marked_human = _split(marked)
    if _CONTEXT_MARK in (marked_system or "") or _QUESTION_MARK in (marked_system or ""):
        raise ValueError(
            "the prompt puts the documents or the question in its system message; a case's "
            "system prompt is fixed text, so they must be in the human message"
        )
    for slot, mark in (("{documents}", _CONTEXT_MARK), ("{question}", _QUESTION_MARK)):
        if mark not in marked_human:
            variable = document_variable if slot == "{documents}" else question_variable
            raise ValueError(f"the prompt's human message does not use the variable {variable!r}")
    template = marked_human.replace(_CONTEXT_MARK, "{documents}").replace(_QUESTION_MARK, "{question}")
    return _build(id, question, documents, system, template, human, context, case_fields)


def case_from_chain(
    id: str,
    question: Any,
    chain: Runnable,
    *,
    config: RunnableConfig | None = None,
    call_model: bool = False,
    **case_fields: Any,
) -> Case:
    """Run ``chain`` on ``question`` with a :class:`CaseCaptureHandler` and return the case.

    With ``call_model=False`` (the default) the chain is stopped when its chat
    model or LLM is about to be called, so no model is queried.
    """
    handler = CaseCaptureHandler(stop_before_model=not call_model)
    config = dict(config or {})
    config["callbacks"] = [*(config.get("callbacks") or []), handler]
    try:
        chain.invoke(question, config=config)
    except PromptCaptured:
        pass
    return handler.case(id, **case_fields)


class PromptCaptured(Exception):
    """Raised by a ``stop_before_model`` handler to end the chain before the model call."""


class _DropPromptCaptured(logging.Filter):
    """LangChain logs "Error in <handler> callback: PromptCaptured(...)" before re-raising it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "PromptCaptured" not in record.getMessage()


_CALLBACK_LOGGER = logging.getLogger("langchain_core.callbacks.manager")
_DROP_PROMPT_CAPTURED = _DropPromptCaptured()


class CaseCaptureHandler(BaseCallbackHandler):
    """Records a live chain's retrieval and rendered prompt, to write them as a case.

    Pass it in ``config={"callbacks": [handler]}``. The last retrieval, the last
    prompt-template inputs and the last model prompt are kept. ``document_variable``
    and ``question_variable`` name the prompt variables holding the formatted
    documents and the question; by default the documents' variable is the one whose
    text contains every retrieved passage and the question's is ``question``,
    ``input`` or ``query`` (else the retriever's query is the question).
    ``stop_before_model`` raises :class:`PromptCaptured` instead of calling the model.
    """

    def __init__(
        self,
        *,
        document_variable: str | None = None,
        question_variable: str | None = None,
        stop_before_model: bool = False,
    ) -> None:
        self.document_variable = document_variable
        self.question_variable = question_variable
        self.stop_before_model = stop_before_model
        self.raise_error = stop_before_model
        if stop_before_model and _DROP_PROMPT_CAPTURED not in _CALLBACK_LOGGER.filters:
            _CALLBACK_LOGGER.addFilter(_DROP_PROMPT_CAPTURED)
        self.query: str | None = None
        self.documents: list[LCDocument] | None = None
        self.prompt_inputs: dict[str, Any] | None = None
        self.messages: list[tuple[str, str]] | None = None

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kwargs: Any) -> None:
        self.query = query

    def on_retriever_end(self, documents: Sequence[LCDocument], *, run_id: UUID, **kwargs: Any) -> None:
        self.documents = list(documents)

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if kwargs.get("run_type") == "prompt" and isinstance(inputs, dict):
            self.prompt_inputs = dict(inputs)

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.messages = [(m.type, m.content) for m in messages[0]]
        self._maybe_stop()

    def on_llm_start(self, serialized: Any, prompts: list[str], *, run_id: UUID, **kwargs: Any) -> None:
        self.messages = [("human", prompts[0])]
        self._maybe_stop()

    def _maybe_stop(self) -> None:
        if self.stop_before_model:
            raise PromptCaptured("prompt captured; the model was not called")

    def case(self, id: str, **case_fields: Any) -> Case:
        """The captured call as a Case (``case_fields``: sampling, constraints, model, ...)."""
        if self.documents is None:
            raise ValueError("no retrieval was captured: did the chain run with this handler?")
        if self.messages is None:
            raise ValueError("no model prompt was captured: did the chain reach its model?")
        system, human = _split(self.messages)
        question = self._question().strip()
        context = self._context(human)
        start = human.find(context)
        if not context or start < 0:
            raise ValueError("the retrieved documents do not appear in the prompt's human message")
        end = start + len(context)
        template = (
            _mark_question(human[:start], question) + "{documents}" + _mark_question(human[end:], question)
        )
        if "{question}" not in template:
            raise ValueError(f"the question {question!r} does not appear in the prompt's human message")
        return _build(id, question, self.documents, system, template, human, context, case_fields)

    def write(self, path: str | Path, id: str | None = None, **case_fields: Any) -> Case:
        """Write the captured case as YAML (atomically); the id defaults to the file's stem."""
        case = self.case(id or Path(path).stem, **case_fields)
        write_atomic(path, case_to_yaml(case))
        return case

    def _question(self) -> str:
        inputs = self.prompt_inputs or {}
        if self.question_variable is not None:
            if self.question_variable not in inputs:
                raise ValueError(f"the prompt had no variable {self.question_variable!r}")
            return str(inputs[self.question_variable])
        for key in _QUESTION_KEYS:
            if isinstance(inputs.get(key), str):
                return inputs[key]
        if self.query is None:
            raise ValueError("no question found: name it with question_variable=")
        return self.query

    def _context(self, human: str) -> str:
        """The formatted document block as it sits in the human message."""
        inputs = self.prompt_inputs or {}
        if self.document_variable is not None:
            if self.document_variable not in inputs:
                raise ValueError(f"the prompt had no variable {self.document_variable!r}")
            return str(inputs[self.document_variable])
        texts = [doc.page_content for doc in self.documents or []]
        for value in inputs.values():
            if isinstance(value, str) and texts and all(t in value for t in texts):
                return value
        if not texts:
            return str(inputs.get("context", ""))
        # No prompt-template run seen: the span from the first passage to the end of the last.
        start = human.find(texts[0])
        last = human.rfind(texts[-1])
        return human[start : last + len(texts[-1])] if 0 <= start <= last else ""


# ---------------------------------------------------------------- helpers


def _build(
    id: str,
    question: str,
    documents: list[LCDocument],
    system: str | None,
    template: str,
    human: str,
    context: str,
    case_fields: dict[str, Any],
) -> Case:
    """Build the case, checking its template gives back the chain's human message."""
    # Same substitution order as diagnose.prompt.user_message, with the chain's block.
    if template.replace("{documents}", context).replace("{question}", question) != human:
        raise ValueError(
            "the case template does not reproduce the chain's human message (does the prompt "
            "or a document contain the literal text {documents} or {question}?)"
        )
    if "document_format" not in case_fields:
        case_fields = {**_layout_fields(context, documents), **case_fields}
    case = _case(
        id=id, question=question, documents=documents, system=system, template=template, **case_fields
    )
    if case.document_format is not None and user_message(case) != human:
        raise ValueError(
            "document_format/document_separator do not reproduce the chain's document block"
        )
    return case


def _layout_fields(context: str, documents: list[LCDocument]) -> dict[str, str]:
    """``document_format``/``document_separator`` that write the chain's block exactly;
    none (diagnose's own layout, with a warning) when no single format and separator can."""
    layout = infer_layout(context, to_documents(documents))
    if layout is None:
        warnings.warn(
            "the chain's document block cannot be written as one document_format and separator; "
            "the case uses diagnose's own layout, so the diagnosed prompt differs from the chain's "
            "around each document (pass document_format= and document_separator= to match it)",
            UserWarning, stacklevel=4)
        return {}
    return {"document_format": layout[0], "document_separator": layout[1]}


def _case(*, documents: Sequence[Any], **fields: Any) -> Case:
    """Validate through ``case_from_dict``, so plain dicts work for ``sampling`` and
    ``constraints`` and errors name the field (CaseError)."""
    data = msgspec.to_builtins(fields)
    data["documents"] = [msgspec.to_builtins(d) for d in to_documents(documents)]
    return case_from_dict(data)


def _messages(prompt_value: Any) -> list[tuple[str, Any]]:
    return [(m.type, m.content) for m in prompt_value.to_messages()]


def _split(messages: Sequence[tuple[str, Any]]) -> tuple[str | None, str]:
    """(system, human) from a rendered prompt; anything else cannot be a case."""
    roles = [role for role, _ in messages]
    if roles not in (["human"], ["system", "human"]):
        raise ValueError(
            f"a case holds an optional system message and one human message; the prompt renders {roles}"
        )
    for role, content in messages:
        if not isinstance(content, str):
            raise ValueError(f"the {role} message has non-text content")
    system = messages[0][1] if roles[0] == "system" else None
    return system, messages[-1][1]


def _mark_question(text: str, question: str) -> str:
    return text.replace(question, "{question}") if question else text

