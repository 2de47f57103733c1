"""LangChain adapter on real langchain_core objects: retrievers, prompts, LCEL chains, callbacks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder, PromptTemplate, format_document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from diagnose.adapters.langchain import (
    CaseCaptureHandler,
    case_from_chain,
    case_from_documents,
    case_from_retriever,
    case_to_yaml,
    join_page_content,
)
from diagnose.case_file import load_case
from diagnose.prompt import build_messages, format_documents

QUESTION = "When was the Stone Bridge built?"
SYSTEM = "Answer only from the context. Cite the passage."
DOCS = [
    LCDocument(page_content="The Stone Bridge was built in 1887.", id="b1",
               metadata={"source": "wiki/Stone_Bridge", "score": 0.91}),
    LCDocument(page_content="Records show the Stone Bridge\nwas completed in 1891.", id="b2",
               metadata={"source": "archive/1891"}),
    LCDocument(page_content="The river is 40 km long.", metadata={"relevance_score": 0.2}),
]


class FixedRetriever(BaseRetriever):
    """Returns the same documents for every query."""

    docs: list[LCDocument]

    def _get_relevant_documents(self, query, *, run_manager):
        return list(self.docs)


def _prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [("system", SYSTEM), ("human", "Context:\n{context}\n\nQuestion: {question}")]
    )


def _chain_messages(prompt, docs, fmt=join_page_content) -> list[dict[str, str]]:
    """What the chain sends its model, as role/content dicts."""
    rendered = prompt.invoke({"context": fmt(docs), "question": QUESTION}).to_messages()
    role = {"system": "system", "human": "user"}
    return [{"role": role[m.type], "content": m.content} for m in rendered]


def test_case_from_documents_converts_ids_scores_and_sources():
    case = case_from_documents("bridge", QUESTION, DOCS, system=SYSTEM)
    assert [d.id for d in case.documents] == ["b1", "b2", "d2"]
    assert case.documents[0].score == 0.91 and case.documents[0].source == "wiki/Stone_Bridge"
    assert case.documents[1].text == DOCS[1].page_content
    assert case.documents[2].score == 0.2 and case.documents[2].source is None
    assert case.system == SYSTEM and case.template is None


def test_case_from_retriever_reproduces_the_chain_prompt_around_the_document_block():
    retriever = FixedRetriever(docs=DOCS)
    case = case_from_retriever("bridge", QUESTION, retriever, _prompt(), sampling={"seeds": 4})
    chain = _chain_messages(_prompt(), DOCS)

    assert case.question == QUESTION
    assert [d.id for d in case.documents] == ["b1", "b2", "d2"]
    assert case.sampling.seeds == 4
    assert case.system == chain[0]["content"] == SYSTEM
    assert case.template == "Context:\n{documents}\n\nQuestion: {question}"
    # The chain's blank-line-joined block is kept exactly through the case's layout fields.
    assert (case.document_format, case.document_separator) == ("{text}", "\n\n")
    assert build_messages(case) == chain


def test_a_custom_document_formatter_is_recovered_exactly():
    def bulleted(docs):
        return "\n".join(f"- {d.page_content}" for d in docs)

    case = case_from_retriever("bridge", QUESTION, FixedRetriever(docs=DOCS), _prompt(), format_document=bulleted)
    assert (case.document_format, case.document_separator) == ("- {text}", "\n")
    assert build_messages(case) == _chain_messages(_prompt(), DOCS, bulleted)


def test_a_stuff_documents_layout_naming_each_source_is_recovered_exactly():
    # What a stuff-documents chain does: each document through its document_prompt, joined by a separator.
    document_prompt = PromptTemplate.from_template("Source: {source}\n{page_content}")
    sourced = [LCDocument(page_content=d.page_content, metadata={"source": f"kb/{i}"}) for i, d in enumerate(DOCS)]

    def stuff(docs):
        return "\n\n---\n\n".join(format_document(d, document_prompt) for d in docs)

    case = case_from_retriever("bridge", QUESTION, FixedRetriever(docs=sourced), _prompt(), format_document=stuff)
    assert (case.document_format, case.document_separator) == ("Source: {source}\n{text}", "\n\n---\n\n")
    assert build_messages(case) == _chain_messages(_prompt(), sourced, stuff)


def test_a_block_no_format_can_write_falls_back_with_a_warning():
    def page_numbers(docs):  # metadata a case does not hold
        return "\n".join(f"p.{i * 7}: {d.page_content}" for i, d in enumerate(docs, 2))

    with pytest.warns(UserWarning, match="cannot be written as one document_format"):
        case = case_from_retriever("bridge", QUESTION, FixedRetriever(docs=DOCS), _prompt(),
                                   format_document=page_numbers)
    chain = _chain_messages(_prompt(), DOCS, page_numbers)
    assert case.document_format is None
    assert build_messages(case)[1]["content"] == chain[1]["content"].replace(
        page_numbers(DOCS), format_documents(case.documents))


def test_case_from_retriever_is_exact_when_the_chain_formats_documents_like_diagnose():
    def diagnose_style(docs):
        return format_documents(case_from_documents("x", "x", docs).documents)

    case = case_from_retriever("bridge", QUESTION, FixedRetriever(docs=DOCS), _prompt(),
                               format_document=diagnose_style)
    assert build_messages(case) == _chain_messages(_prompt(), DOCS, diagnose_style)


def test_case_from_retriever_with_an_in_memory_vector_store_and_custom_variables():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(DOCS[:2], ids=["b1", "b2"])
    prompt = ChatPromptTemplate.from_messages(
        [("human", "Q: {input}\nUse these passages:\n---\n{passages}\n---\nQ again: {input}")]
    )
    case = case_from_retriever("store", "  " + QUESTION + " ", store.as_retriever(search_kwargs={"k": 2}),
                               prompt, document_variable="passages", question_variable="input")
    assert sorted(d.id for d in case.documents) == ["b1", "b2"]
    assert case.system is None
    assert case.question == QUESTION
    assert case.template == "Q: {question}\nUse these passages:\n---\n{documents}\n---\nQ again: {question}"


def test_case_from_retriever_rejects_prompts_a_case_cannot_hold():
    retriever = FixedRetriever(docs=DOCS)
    in_system = ChatPromptTemplate.from_messages([("system", "Context: {context}"), ("human", "{question}")])
    with pytest.raises(ValueError, match="system message"):
        case_from_retriever("c", QUESTION, retriever, in_system)
    history = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{context}\n{question}")]
    )
    with pytest.raises(ValueError, match="one human message"):
        case_from_retriever("c", QUESTION, retriever, history,
                            prompt_inputs={"history": [("human", "hi"), ("ai", "hello")]})
    no_question = ChatPromptTemplate.from_messages([("human", "{context}")])
    with pytest.raises(ValueError, match="'question'"):
        case_from_retriever("c", QUESTION, retriever, no_question)


def _lcel_chain(retriever, model):
    def format_docs(docs):
        return "\n\n".join(doc.page_content for doc in docs)

    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | _prompt()
        | model
        | StrOutputParser()
    )


def test_capture_handler_records_a_live_lcel_chain(tmp_path):
    model = FakeListChatModel(responses=["It was built in 1887.", "unused"])
    handler = CaseCaptureHandler()
    answer = _lcel_chain(FixedRetriever(docs=DOCS), model).invoke(QUESTION, config={"callbacks": [handler]})
    assert answer == "It was built in 1887." and model.i == 1

    case = handler.case("captured", sampling={"temperatures": [0.7]})
    assert case.question == QUESTION
    assert [(d.id, d.text) for d in case.documents] == [("b1", DOCS[0].page_content),
                                                        ("b2", DOCS[1].page_content),
                                                        ("d2", DOCS[2].page_content)]
    assert case.system == SYSTEM
    assert case.template == "Context:\n{documents}\n\nQuestion: {question}"
    assert case.sampling.temperatures == [0.7]

    path = tmp_path / "cases" / "bridge.yaml"
    written = handler.write(path, sampling={"temperatures": [0.7]})
    assert written.id == "bridge"
    assert load_case(path) == written
    assert [p.name for p in path.parent.iterdir()] == ["bridge.yaml"]  # no temp file left


def test_captured_case_sends_the_model_byte_for_byte_what_the_chain_sent():
    sent = CaseCaptureHandler()  # records what the chat model receives
    model = FakeListChatModel(responses=["1887"])
    _lcel_chain(FixedRetriever(docs=DOCS), model).invoke(QUESTION, config={"callbacks": [sent]})
    case = sent.case("captured")
    role = {"system": "system", "human": "user"}
    assert build_messages(case) == [{"role": role[r], "content": c} for r, c in sent.messages]


def test_case_from_chain_stops_before_the_model(caplog):
    model = FakeListChatModel(responses=["a", "b"])
    with caplog.at_level("WARNING"):
        case = case_from_chain("stopped", QUESTION, _lcel_chain(FixedRetriever(docs=DOCS), model))
    assert not [r for r in caplog.records if "callback" in r.getMessage()]  # no "Error in ... callback"
    assert model.i == 0  # never called
    assert case.template == "Context:\n{documents}\n\nQuestion: {question}"
    assert len(case.documents) == 3


def test_capture_handler_with_a_string_prompt_and_llm():
    prompt = PromptTemplate.from_template("Passages:\n{context}\nAnswer this: {question}\nAnswer:")
    chain = (
        {"context": FixedRetriever(docs=DOCS[:2]) | join_page_content, "question": RunnablePassthrough()}
        | prompt
        | FakeListLLM(responses=["1887"])
    )
    handler = CaseCaptureHandler()
    chain.invoke(QUESTION, config={"callbacks": [handler]})
    case = handler.case("llm")
    assert case.system is None
    assert case.template == "Passages:\n{documents}\nAnswer this: {question}\nAnswer:"


def test_capture_handler_without_a_run_says_what_is_missing():
    with pytest.raises(ValueError, match="no retrieval was captured"):
        CaseCaptureHandler().case("x")


def test_case_yaml_round_trips_awkward_text(tmp_path):
    docs = [LCDocument(page_content="line one  \nline two\ttab\n", id="a"),
            LCDocument(page_content="multi\nline\n\nblock", id="b"),
            LCDocument(page_content='quotes " and : colons {braces}', id="c")]
    case = case_from_documents("yaml-trip", QUESTION, docs, system="Be brief.\nCite ids.")
    path = tmp_path / "c.yaml"
    path.write_text(case_to_yaml(case), encoding="utf-8")
    assert load_case(path) == case
    assert "null" not in path.read_text(encoding="utf-8")


def test_only_this_adapter_imports_langchain():
    """STYLE point 10: one adapter module imports langchain; the engine duck-types documents."""
    package = Path(__file__).resolve().parents[2] / "diagnose"

    def imports_langchain(path: Path) -> bool:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(name.split(".")[0].startswith("langchain") for name in names):
                return True
        return False

    importing = sorted(str(p.relative_to(package)) for p in package.rglob("*.py") if imports_langchain(p))
    assert importing == ["adapters/langchain.py"]


def test_vector_store_uuids_give_way_to_metadata_ids_and_sources():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    chunks = [LCDocument(page_content="Chunk one of the handbook.", metadata={"source": "hr/handbook.pdf"}),
              LCDocument(page_content="Chunk two of the handbook.", metadata={"source": "hr/handbook.pdf"}),
              LCDocument(page_content="A policy page.", metadata={"id": "policy-7", "source": "hr/policy"})]
    store.add_documents(chunks)  # the store assigns each a random UUID
    stored = [store.get_by_ids([i])[0] for i in store.store]
    assert all(len(d.id) == 36 for d in stored)
    ids = {d.text: d.id for d in case_from_documents("c", QUESTION, stored).documents}
    assert ids == {"Chunk one of the handbook.": "hr/handbook.pdf", "Chunk two of the handbook.": "hr/handbook.pdf#2",
                   "A policy page.": "policy-7"}
