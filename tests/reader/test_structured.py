"""The reader over a made-up engine: prompts, margins and what each reading carries."""

from __future__ import annotations

import math

import pytest

from diagnose.reader.llama import Reply
from diagnose.reader.readings import ReadingStats
from diagnose.reader.structured import ReaderIdentity, ServerEngine, StructuredReader


class ScriptedEngine:
    """Answers by looking the document up in ``replies``; records every prompt."""

    def __init__(self, replies: dict[str, Reply]) -> None:
        self.replies, self.prompts, self.stats = replies, [], ReadingStats()

    def truncate(self, text: str, limit: int) -> str:
        return text[:limit]

    def reply(self, chat, max_tokens, first_tokens=(), stop_lines=0):
        self.prompts.append((chat, max_tokens, first_tokens, stop_lines))
        document = chat[-1]["content"].split("Document:\n", 1)[1].split("\n\nAccording to this document", 1)[0]
        return self.replies[document]


def test_an_open_question_reads_the_answer_and_what_the_document_is_about():
    engine = ScriptedEngine({"It weighs 2 kg.": Reply("2 kg\nAbout: Tarn, a tent", {}, 12)})
    reader = StructuredReader(engine, ReaderIdentity("made-up", "reference"))
    [reading] = reader.read("How heavy is Tarn?", ["It weighs 2 kg."], False)
    assert (reading.answer, reading.about, reading.yes_margin, reading.prompt_tokens) == ("2 kg", "Tarn, a tent", None, 12)
    assert reader.stats.documents == 1


def test_a_yes_no_question_decodes_one_token_and_answers_with_the_margins_sign():
    yes, no = math.log(0.2), math.log(0.7)
    engine = ScriptedEngine({"No, never.": Reply("No", {"Yes": yes, "No": no, "yes": -9.0, "no": -9.0}, 5)})
    reader = StructuredReader(engine, ReaderIdentity("made-up", "reference"))
    [reading] = reader.read("Is it safe?", ["No, never."], True)
    assert engine.prompts[0][1] == 1 and "Yes" in engine.prompts[0][2]
    assert reading.answer == "no"
    expected = math.log(0.2 + math.exp(-9.0)) - math.log(0.7 + math.exp(-9.0))
    assert reading.yes_margin == pytest.approx(expected)


def test_an_empty_document_is_not_read():
    engine = ScriptedEngine({})
    [reading] = StructuredReader(engine, ReaderIdentity("made-up", "reference")).read("Q?", ["   "], False)
    assert reading.answer == "" and engine.prompts == []


class FakeBackend:
    def __init__(self, text, top):
        self.text, self.top, self.calls = text, top, []

    def complete(self, messages, max_tokens, top_logprobs=0):
        self.calls.append((messages, max_tokens, top_logprobs))
        return self.text, self.top, {"prompt_tokens": 40}


def test_a_server_engine_asks_for_top_logprobs_only_for_the_margin_and_keeps_the_asked_lines():
    backend = FakeBackend("yes\nAbout: Tarn\nextra line", {"yes": -0.1, "no": -2.5})
    engine = ServerEngine(backend)
    reply = engine.reply([{"role": "user", "content": "x"}], 1, ("yes", "no"), 1)
    assert backend.calls[0][2] == ServerEngine.TOP_LOGPROBS and reply.text == "yes"
    assert reply.first_logprobs == {"yes": -0.1, "no": -2.5} and reply.prompt_tokens == 40
    engine.reply([{"role": "user", "content": "x"}], 32)
    assert backend.calls[1][2] == 0
