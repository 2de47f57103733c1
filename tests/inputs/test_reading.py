"""The read tier: the generator reads each document alone (fake backend, mock server, real model)."""

from __future__ import annotations

import json
import math
import statistics

import httpx
import pytest
import torch

from diagnose.inputs.reading import (
    NO_VARIANTS,
    YES_VARIANTS,
    DocumentReader,
    DocumentReading,
    ReadingStats,
)
from diagnose.text.questions import is_yes_no_question
from diagnose.decode.fake import FakeBackend

WORDS = [f"w{i}" for i in range(40)]
VOCAB = ["<eos>", "<unk>", "Yes", "yes", "No", "no", "Paris", "Rome", "sunny", "rainy", "Paris\nbecause"] + WORDS
ID = {word: i for i, word in enumerate(VOCAB)}


def _logits(history: list[int]) -> list[float]:
    """Yes/no leaning from the document's weather word; open answers name a city, then end."""
    out = [-10.0] * len(VOCAB)
    if history and history[-1] in (ID["Paris"], ID["Rome"], ID["Paris\nbecause"]):
        out[0] = 5.0  # end after the answer
        return out
    out[ID["Rome"] if ID["rainy"] in history else ID["Paris"]] = 3.0
    if ID["sunny"] in history:
        out[ID["Yes"]], out[ID["yes"]], out[ID["No"]], out[ID["no"]] = 2.0, 1.0, 0.5, -1.0
    else:
        out[ID["Yes"]], out[ID["yes"]], out[ID["No"]], out[ID["no"]] = -1.0, -2.0, 1.5, 0.0
    return out


class RecordingFake(FakeBackend):
    """The fake, keeping every prompt it was started with."""

    def __init__(self, fn=_logits) -> None:
        super().__init__(VOCAB, fn)
        self.prompts: list[list[int]] = []

    def start(self, prompt_ids, rows):
        self.prompts.append(list(prompt_ids))
        return super().start(prompt_ids, rows)


def _lse(values: list[float]) -> float:
    return math.log(sum(math.exp(v) for v in values))


# --------------------------------------------------------------------------- #
# fake backend
# --------------------------------------------------------------------------- #


def test_yes_no_margin_is_log_yes_minus_log_no_at_the_first_position():
    backend = RecordingFake()
    reader = DocumentReader(backend)
    readings = reader.read("will it be nice", ["it is sunny", "it is rainy"], yes_no=True)
    # Hand computation from _logits: the softmax normaliser cancels in the difference.
    sunny = _lse([2.0, 1.0]) - _lse([0.5, -1.0])
    rainy = _lse([-1.0, -2.0]) - _lse([1.5, 0.0])
    assert readings[0].yes_margin == pytest.approx(sunny, abs=1e-5)
    assert readings[1].yes_margin == pytest.approx(rainy, abs=1e-5)
    assert (readings[0].answer, readings[1].answer) == ("yes", "no")
    assert backend.prefills == 2  # one document at a time, no decoding
    assert all(len(s.forward_rows) == 0 for s in backend.sessions)
    assert reader.stats.generated_tokens == 0
    assert readings[0].prompt_tokens == len(backend.prompts[0])


def test_margin_matches_a_full_log_softmax():
    backend = RecordingFake()
    reading = DocumentReader(backend).read("q", ["sunny day"], yes_no=True)[0]
    prompt = backend.prompts[0]
    logprobs = torch.log_softmax(torch.tensor(_logits(prompt)), dim=-1)
    yes = torch.logsumexp(logprobs[[ID["Yes"], ID["yes"]]], dim=0)
    no = torch.logsumexp(logprobs[[ID["No"], ID["no"]]], dim=0)
    assert reading.yes_margin == pytest.approx(float(yes - no), abs=1e-5)


def test_open_question_is_one_greedy_decode_per_document():
    backend = RecordingFake()
    reader = DocumentReader(backend, max_new_tokens=5)
    readings = reader.read("which city", ["w1 sunny", "w2 rainy"], yes_no=False)
    assert [r.answer for r in readings] == ["Paris", "Rome"]
    assert all(r.yes_margin is None for r in readings)
    assert backend.prefills == 2
    assert reader.stats.documents == 2
    assert reader.stats.generated_tokens == 2
    assert reader.stats.prompt_tokens == sum(len(p) for p in backend.prompts)
    assert reader.stats.prefill_s > 0 and reader.stats.decode_s > 0


def test_answer_is_the_first_line_only():
    def multiline(history: list[int]) -> list[float]:
        out = [-10.0] * len(VOCAB)
        out[0 if history[-1] == ID["Paris\nbecause"] else ID["Paris\nbecause"]] = 5.0
        return out

    reading = DocumentReader(RecordingFake(multiline)).read("q", ["d"], yes_no=False)[0]
    assert reading.answer == "Paris"


def test_long_documents_are_cut_to_max_document_tokens_keeping_the_start():
    backend = RecordingFake()
    reader = DocumentReader(backend, max_document_tokens=5)
    document = " ".join(WORDS[:30])
    assert reader.truncate(document).split() == WORDS[:5]
    reader.read("which city", [document], yes_no=False)
    seen = {VOCAB[i] for i in backend.prompts[0]}
    assert {"w0", "w4"} <= seen and not seen & {"w5", "w29"}


def test_empty_documents_do_not_call_the_model():
    backend = RecordingFake()
    reader = DocumentReader(backend)
    done: list[int] = []
    readings = reader.read("q", ["", "   \n", "sunny"], yes_no=True, on_document=done.append)
    assert readings[:2] == [DocumentReading("", None, 0)] * 2
    assert readings[2].answer == "yes"
    assert backend.prefills == 1
    assert reader.stats.documents == 1
    assert done == [1, 2, 3]


def test_stats_accumulate_over_calls():
    reader = DocumentReader(RecordingFake())
    assert reader.stats == ReadingStats()
    reader.read("q", ["sunny", "rainy"], yes_no=True)
    reader.read("q", ["sunny"], yes_no=False)
    assert reader.stats.documents == 3
    assert reader.stats.generated_tokens == 1


def test_without_yes_no_tokens_the_reader_decodes_instead():
    backend = FakeBackend(["<eos>", "<unk>", "Paris"], lambda h: [5.0 if h[-1] == 2 else -5.0, -5.0, 1.0])
    reading = DocumentReader(backend).read("q", ["d"], yes_no=True)[0]
    assert reading == DocumentReading("Paris", None, reading.prompt_tokens)


def test_variants_are_the_documented_ones():
    assert set(YES_VARIANTS) == {"Yes", "yes", " Yes", " yes", "YES"}
    assert set(NO_VARIANTS) == {"No", "no", " No", " no", "NO"}


# --------------------------------------------------------------------------- #
# remote backend (mock server)
# --------------------------------------------------------------------------- #


def _remote(answer):
    from diagnose.decode.remote import RemoteBackend

    bodies: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return httpx.Response(200, json=answer(body))

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return RemoteBackend("http://server/v1", "m", "llamacpp", client=client), bodies


def _choice(content: str, first: dict | None = None, prompt_tokens: int = 42) -> dict:
    choice: dict = {"message": {"content": content}, "finish_reason": "stop"}
    if first is not None:
        choice["logprobs"] = {"content": [first]}
    return {"choices": [choice], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1}}


def test_remote_yes_no_reads_the_first_tokens_top_logprobs():
    first = {
        "token": "Yes",
        "logprob": -0.2,
        "top_logprobs": [
            {"token": "Yes", "logprob": -0.2},
            {"token": "No", "logprob": -1.9},
            {"token": " yes", "logprob": -2.0},
            {"token": "Maybe", "logprob": -4.0},
        ],
    }
    backend, bodies = _remote(lambda body: _choice("Yes", first))
    reader = DocumentReader(backend)
    reading = reader.read("Is it open?", ["It is open."], yes_no=True)[0]
    assert reading.yes_margin == pytest.approx(_lse([-0.2, -2.0]) - (-1.9))
    assert reading.answer == "yes" and reading.prompt_tokens == 42
    body = bodies[0]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 1
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    assert body["messages"][1]["content"] == "Document:\nIt is open.\n\nQuestion: Is it open?"
    assert reader.stats.documents == 1 and reader.stats.prompt_tokens == 42


def test_remote_missing_variant_gets_a_floor_below_the_lowest_top_logprob():
    first = {
        "token": "No",
        "logprob": -0.1,
        "top_logprobs": [{"token": "No", "logprob": -0.1}, {"token": "The", "logprob": -3.0}],
    }
    backend, _ = _remote(lambda body: _choice("No", first))
    reading = DocumentReader(backend).read("Is it open?", ["Closed."], yes_no=True)[0]
    assert reading.yes_margin == pytest.approx((-3.0 - 1.0) - (-0.1))
    assert reading.answer == "no"


def test_compare_asks_one_pairwise_question_per_pair():
    backend = RecordingFake()
    reader = DocumentReader(backend)
    margins = reader.compare("will it be nice", [("it is sunny", "it is sunny too"), ("it is rainy", ""), ("rainy", "rainy")])
    assert margins[0] == pytest.approx(_lse([2.0, 1.0]) - _lse([0.5, -1.0]), abs=1e-5)
    assert margins[1] is None  # an empty passage: not asked
    assert margins[2] == pytest.approx(_lse([-1.0, -2.0]) - _lse([1.5, 0.0]), abs=1e-5)
    assert backend.prefills == 2 and reader.stats.documents == 2


def test_remote_compare_puts_both_passages_in_one_request():
    first = {"token": "No", "logprob": -0.3, "top_logprobs": [{"token": "No", "logprob": -0.3}, {"token": "Yes", "logprob": -1.5}]}
    backend, bodies = _remote(lambda body: _choice("No", first))
    margins = DocumentReader(backend).compare("Is it open?", [("It is open.", "It is closed.")])
    assert margins == [pytest.approx(-1.5 - (-0.3))]
    content = bodies[0]["messages"][1]["content"]
    assert content.startswith("Passage 1:\nIt is open.\n\nPassage 2:\nIt is closed.\n\nQuestion: Is it open?")
    assert bodies[0]["max_tokens"] == 1 and "same answer" in bodies[0]["messages"][0]["content"]


def test_remote_open_question_is_one_greedy_request_per_document():
    backend, bodies = _remote(lambda body: _choice("  Rome\nIt says so."))
    reader = DocumentReader(backend, max_new_tokens=16)
    readings = reader.read("Which city?", ["It was Rome.", "", "Also Rome."], yes_no=False)
    assert [r.answer for r in readings] == ["Rome", "", "Rome"]
    assert len(bodies) == 2
    assert all(b["temperature"] == 0.0 and b["max_tokens"] == 16 for b in bodies)
    assert all("top_logprobs" not in b for b in bodies)
    assert reader.stats.documents == 2 and reader.stats.decode_s > 0


# --------------------------------------------------------------------------- #
# is_yes_no_question
# --------------------------------------------------------------------------- #

YES_NO = [
    "Is the bakery on the corner open today?",
    "Does this medicine need a prescription?",
    "can penguins fly",
    "Were the tickets refunded?",
    "Should I water the plant every day?",
    "Isn't the deadline next Friday?",
    "Has the package been delivered yet?",
    "In 2024, can residents vote by mail?",
    "According to the text, did the team win the final?",
    "When it snows, does the school close?",
    "Is it true or not that the road is closed?",
    "Tell me whether the museum charges an entry fee.",
    "The contract was signed in May. Is it still valid?",
    "Est-ce que le musée est ouvert le lundi ?",
    "Peut-on payer par carte ?",
    "Faut-il réserver à l'avance ?",
    "Le train part-il à l'heure ?",
    "Y a-t-il un parking près de la gare ?",
    "这家店今天营业吗？",
    "这个药是否需要处方？",
    "他明天能不能来？",
    "你们有没有素食菜单？",
    "这本书可不可以借两周？",
    "明日は雨が降りますか？",
    "この部屋は禁煙ですか。",
    "ここで写真を撮ることはできますか？",
    "何か質問はありますか？",
]

NOT_YES_NO = [
    "What time does the bakery open?",
    "When was the bridge built?",
    "How many people live in the town?",
    "Which of the two parks is bigger?",
    "Who wrote the letter?",
    "Where can I park my car?",
    "Why did the flight get cancelled?",
    "Is the meeting on Monday or Tuesday?",
    "Can you list the ingredients of the soup?",
    "Could you tell me when the shop closes?",
    "Do you know who won the race?",
    "In 2024, which team won the cup?",
    "Describe the history of the castle.",
    "Quand le musée ouvre-t-il ?",
    "Qu'est-ce que la photosynthèse ?",
    "Combien coûte le billet ?",
    "Préférez-vous le thé ou le café ?",
    "这家店几点开门？",
    "这个药多少钱？",
    "谁写了这封信？",
    "你想喝茶还是咖啡？",
    "会议在哪里举行？",
    "駅はどこですか？",
    "会議はいつ始まりますか？",
    "これは何ですか？",
    "このバスとあのバス、どちらが速いですか？",
    "",
]


@pytest.mark.parametrize("question", YES_NO)
def test_yes_no_questions_are_recognised(question):
    assert is_yes_no_question(question)


@pytest.mark.parametrize("question", NOT_YES_NO)
def test_other_questions_are_not_yes_no(question):
    assert not is_yes_no_question(question)


# --------------------------------------------------------------------------- #
# the real embedded generator
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def generator():
    from diagnose.models import ModelRegistry
    from diagnose.settings import ModelSettings

    return ModelRegistry(ModelSettings()).generator()


def _per_document(reader: DocumentReader, label: str) -> None:
    n = max(reader.stats.documents, 1)
    print(
        f"\n[{label}] {reader.stats.documents} documents: prefill {reader.stats.prefill_s / n:.3f} s/doc, "
        f"decode {reader.stats.decode_s / n:.3f} s/doc, prompt {reader.stats.prompt_tokens / n:.0f} tok/doc, "
        f"generated {reader.stats.generated_tokens / n:.1f} tok/doc"
    )


@pytest.mark.models
def test_real_model_answers_a_fact_from_the_document(generator):
    reader = DocumentReader(generator)
    document = (
        "The Halvorsen Bridge crosses the Tessa River. It was opened to traffic in 1937, "
        "after four years of construction."
    )
    reading = reader.read("In which year was the Halvorsen Bridge opened?", [document], yes_no=False)[0]
    _per_document(reader, "open, fact")
    print(f"answer: {reading.answer!r}")
    assert "1937" in reading.answer
    assert reading.yes_margin is None and reading.prompt_tokens > 20


@pytest.mark.models
def test_real_model_margin_follows_the_document(generator):
    reader = DocumentReader(generator)
    question = "Is the city library open on Sundays?"
    yes_doc = "Yes. The city library is open on Sundays, from 10 am to 4 pm."
    no_doc = "No. The city library is closed on Sundays; it is not open on Sundays."
    yes, no = reader.read(question, [yes_doc, no_doc], yes_no=True)
    _per_document(reader, "yes/no")
    print(f"margins: yes doc {yes.yes_margin:+.3f} ({yes.answer}), no doc {no.yes_margin:+.3f} ({no.answer})")
    assert yes.yes_margin is not None and no.yes_margin is not None
    assert yes.yes_margin > no.yes_margin


def _long_document(tokens: int, generator) -> str:
    sentences = [
        "The harbour town of Lindmark grew around a small fishing port on the northern coast.",
        "Its old market hall, built from local grey stone, still hosts a weekly farmers' market.",
        "In the nineteenth century a railway line connected the town with the inland cities.",
        "The lighthouse on the western pier was rebuilt in 1911 after a winter storm damaged it.",
        "Today most residents work in tourism, boat building or the regional hospital.",
        "A ferry leaves for the nearby islands twice a day during the summer season.",
    ]
    text, i = "", 0
    while generator.count_tokens(text) < tokens:
        text += sentences[i % len(sentences)] + " "
        i += 1
    return text.strip()


@pytest.mark.models
def test_real_model_timing_for_a_400_token_document(generator):
    document = _long_document(400, generator)
    docs = [document] * 3
    print(f"\ndocument: {generator.count_tokens(document)} tokens")
    timings = {}
    for label, question, yes_no in (
        ("open", "In which year was the lighthouse rebuilt?", False),
        ("yes/no", "Is there a ferry to the islands?", True),
    ):
        DocumentReader(generator).read(question, docs[:1], yes_no)  # warm-up
        reader = DocumentReader(generator)
        seconds: list[tuple[float, float]] = []
        for d in docs:
            before = (reader.stats.prefill_s, reader.stats.decode_s)
            reading = reader.read(question, [d], yes_no)[0]
            seconds.append((reader.stats.prefill_s - before[0], reader.stats.decode_s - before[1]))
            print(f"[{label}] prefill {seconds[-1][0]:.3f} s, decode {seconds[-1][1]:.3f} s, "
                  f"answer {reading.answer!r}, margin {reading.yes_margin}")
        _per_document(reader, label)
        timings[label] = (statistics.mean(s[0] for s in seconds), statistics.mean(s[1] for s in seconds))
    assert timings["yes/no"][1] == 0.0  # yes/no never decodes
    assert reader.stats.prompt_tokens / 3 > 400


@pytest.mark.models
@pytest.mark.parametrize("yes_no", [True, False])
def test_real_model_reads_a_batch_as_each_document_alone(generator, yes_no):
    """All documents in one multi-prompt batch give what each document read alone gives."""
    documents = [_long_document(60 + 40 * i, generator) for i in range(3)] + [
        "The lighthouse was rebuilt in 1911.", "", "A ferry leaves twice a day."]
    question = "Is there a ferry to the islands?" if yes_no else "In which year was the lighthouse rebuilt?"
    reader = DocumentReader(generator)
    together = reader.read(question, documents, yes_no)
    alone = [reader.read(question, [d], yes_no)[0] for d in documents]
    assert [(r.answer, r.prompt_tokens) for r in together] == [(r.answer, r.prompt_tokens) for r in alone]
    for a, b in zip(together, alone):
        assert (a.yes_margin is None) == (b.yes_margin is None) == (not yes_no or not a.prompt_tokens)
        if a.yes_margin is not None:
            assert a.yes_margin == pytest.approx(b.yes_margin, abs=1e-4)
