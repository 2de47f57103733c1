"""The reader: a model of its own reads each document alone (:mod:`diagnose.reader.prompt`).

:class:`StructuredReader` satisfies the input stage's ``diagnose.inputs.reading.Reader``
protocol. Per document it returns a :class:`~diagnose.reader.readings.DocumentReading` whose
``answer`` is the reply's first line, ``yes_margin`` the yes-minus-no log-probability margin
at the first answer position (yes/no questions), and ``about`` what the document says it is about. The documents of one call are read in one
pass over the engine, in order, so the prompts' shared head (system message and question)
is evaluated once (the engine's key/value cache).

Engines (one ``reply(chat, max_tokens, first_tokens, stop_lines)`` and ``truncate``):
:class:`~diagnose.reader.llama.LlamaEngine` in-process, :class:`ServerEngine` over an
OpenAI-compatible server (the first token's ``top_logprobs`` give the margin).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol

from diagnose.reader.llama import Reply
from diagnose.reader.readings import NO_VARIANTS, YES_VARIANTS, DocumentReading, ReadingStats, margin_from_logprobs
from diagnose.reader.prompt import messages, parse_reply

__all__ = ["ReaderIdentity", "ServerEngine", "StructuredReader", "reference_reader", "server_reader"]

ReaderKind = Literal["static", "reference", "sampled", "server"]
REPLY_LINES = 2
MAX_REPLY_TOKENS = 32


@dataclass(frozen=True)
class ReaderIdentity:
    """The report's ``input.reader``."""

    name: str
    kind: ReaderKind
    sha256: str | None = None
    kernels: str | None = None
    """The in-process engine's build (:func:`diagnose.reader.llama.build_kernels`); None for a server."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "sha256": self.sha256, "kernels": self.kernels}


class Engine(Protocol):
    stats: ReadingStats

    def reply(self, chat: list[dict[str, str]], max_tokens: int, first_tokens: tuple[str, ...] = (),
              stop_lines: int = 0) -> Reply: ...

    def truncate(self, text: str, limit: int) -> str: ...


class StructuredReader:
    """Reads each document alone with ``engine`` (see the module docstring)."""

    decides = True

    def __init__(self, engine: Engine, identity: ReaderIdentity, max_document_tokens: int = 512) -> None:
        if max_document_tokens < 1:
            raise ValueError("max_document_tokens must be >= 1")
        self.engine = engine
        self.identity = identity
        self.max_document_tokens = max_document_tokens
        self._lock = threading.Lock()

    @property
    def stats(self) -> ReadingStats:
        return self.engine.stats

    def read(self, question: str, documents: list[str], yes_no: bool,
             on_document: Callable[[int], None] | None = None) -> list[DocumentReading]:
        out = []
        with self._lock:  # one engine, one prompt at a time (the service's threads share it)
            for done, text in enumerate(documents, start=1):
                out.append(self._read_one(question, text or "", yes_no))
                if on_document:
                    on_document(done)
        return out

    def compare(self, question: str, pairs: list[tuple[str, str]]) -> list[float | None]:
        """Not asked: the reader's per-document margins already judge the stances."""
        return [None] * len(pairs)

    def _read_one(self, question: str, text: str, yes_no: bool) -> DocumentReading:
        if not text.strip():
            return DocumentReading("", None, 0)
        chat = messages(question, self.engine.truncate(text, self.max_document_tokens), yes_no)
        if yes_no:  # the margin is the answer: one token
            reply = self.engine.reply(chat, 1, YES_VARIANTS + NO_VARIANTS, 1)
        else:
            reply = self.engine.reply(chat, MAX_REPLY_TOKENS, (), REPLY_LINES)
        self.stats.documents += 1
        fields = parse_reply(reply.text)
        margin = margin_from_logprobs(reply.first_logprobs) if yes_no else None
        answer = fields.answer
        if margin is not None:
            answer = "yes" if margin >= 0 else "no"
        return DocumentReading(answer, margin, reply.prompt_tokens, about=fields.about, date=fields.date,
                               superseded=fields.superseded)


class ServerEngine:
    """The reader's prompts sent to an OpenAI-compatible server (greedy, seed 0)."""

    CHARS_PER_TOKEN = 4
    TOP_LOGPROBS = 20

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.stats = ReadingStats()

    def truncate(self, text: str, limit: int) -> str:
        return text[: limit * self.CHARS_PER_TOKEN]

    def reply(self, chat: list[dict[str, str]], max_tokens: int, first_tokens: tuple[str, ...] = (),
              stop_lines: int = 0) -> Reply:
        started = time.perf_counter()
        text, top, usage = self.backend.complete(chat, max_tokens, self.TOP_LOGPROBS if first_tokens else 0)
        self.stats.decode_s += time.perf_counter() - started
        prompt_tokens = usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else 0
        self.stats.prompt_tokens += prompt_tokens
        self.stats.evaluated_tokens += prompt_tokens
        if stop_lines:
            text = "\n".join(text.splitlines()[:stop_lines])
        return Reply(text, top if first_tokens else {}, prompt_tokens)


def server_reader(url: str, model: str = "reader", api_key: str | None = None) -> StructuredReader:
    """A reader over the OpenAI-compatible server at ``url`` (greedy, the reference prompts)."""
    from diagnose.decode.remote import RemoteBackend

    backend = RemoteBackend(url.strip(), model, "openai", api_key=api_key)
    return StructuredReader(ServerEngine(backend), ReaderIdentity(f"{model} @ {url.strip()}", "server"))


def reference_reader(engine: Engine) -> StructuredReader:
    """The pinned reference reader over its loaded ``engine``."""
    from diagnose.reader.weights import REFERENCE

    return StructuredReader(engine, ReaderIdentity(REFERENCE.name, "reference", REFERENCE.sha256,
                                                   getattr(engine, "kernels", None)))
