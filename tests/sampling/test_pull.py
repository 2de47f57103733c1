"""Center pull credits a sample only for what it states (made-up cases, no dev data)."""

from __future__ import annotations

import numpy as np

from diagnose.case import Case, Document, SamplingSpec
from diagnose.decode.fake import FakeBackend
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.sampling.controls import run_control
from diagnose.sampling.pull import NONE, attribute_samples
from tests.fakes import WordEmbedder


def _unit(*rows: list[float]) -> np.ndarray:
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


DOCS = _unit([1.0, 0.1, 0.0], [0.0, 1.0, 0.1])
"""Two documents, one per center; a sample identical to the first resembles center "a" only."""


def test_a_sample_that_states_no_answer_follows_no_center_however_alike():
    # German, no number at all, worded like the first center's document.
    texts = ["Die Tagesdosis steht in der Packungsbeilage.", "Höchstens 45 mg am Tag."]
    got = attribute_samples(texts, _unit([1.0, 0.1, 0.0], [1.0, 0.1, 0.0]), {"a": [0], "b": [1]},
                            {"a": ["30 mg"], "b": ["45 mg"]}, DOCS)
    assert got == [NONE, "b"]


def test_resemblance_decides_only_when_no_center_has_an_answer():
    got = attribute_samples(["Das steht im ersten Text."], _unit([1.0, 0.1, 0.0]), {"a": [0], "b": [1]},
                            {}, DOCS)
    assert got == ["a"]


VOCAB = ["<eos>", "<unk>", "41", "57"]


def _always_57(history: list[int]) -> list[float]:
    """Says 57 whatever the prompt holds, then ends: the model's own prior, not the documents'."""
    if history and history[-1] == 3:
        return [9.0, -20.0, -20.0, -20.0]
    return [-20.0, -20.0, -20.0, 3.0]


def test_a_control_credits_only_the_centers_whose_documents_it_kept():
    tower = "The Karnholm tower on the north mole is {} metres tall and painted red ."
    case = Case(id="karnholm", question="How tall is the Karnholm tower ?",
                documents=[Document(id="k1", text=tower.format(41)), Document(id="k2", text=tower.format(41)),
                           Document(id="k3", text=tower.format(57))],
                sampling=SamplingSpec(seeds=4, temperatures=[0.7], max_new_tokens=4, top_k=0, top_p=1.0))
    fake, embedder = FakeBackend(VOCAB, _always_57), WordEmbedder()
    analysis = analyze_inputs(case, embedder, InputSettings(), count_tokens=fake.count_tokens)
    by_label = {c.label.split()[0]: c for c in analysis.report.gravity_centers}
    assert {"41", "57"} <= set(by_label) and by_label["41"].documents == ["k1", "k2"]

    control, _ = run_control(case, fake, fake.chat_ids, embedder, analysis)

    assert control.documents == ["k1", "k2"]
    run = control.runs[0]
    assert [s.text for s in run.samples] == ["57"] * 4
    assert run.center_pull[by_label["57"].id] == 0.0 and run.center_pull[NONE] == 1.0
    assert {s.center for s in run.samples} == {NONE}
