"""Sampled outputs placed on the document map, in the documents' own 2-D frame."""

from __future__ import annotations

import numpy as np
import pytest

from diagnose.case import Case, Document, SamplingSpec
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.inputs.layout import fit_projection, project_2d
from diagnose.decode.engine import decode_rows, rows_for
from diagnose.decode.fake import FakeBackend
from diagnose.sampling.stage import measure_run, sample_positions
from tests.fakes import WordEmbedder

VOCAB = ["<eos>", "<unk>", "paris", "is", "the", "capital", "lyon"]


def _says(words: list[str], prompt_len: int):
    """Greedy logits that generate ``words`` then end."""
    ids = [VOCAB.index(w) for w in words] + [0]

    def logits(history: list[int]) -> list[float]:
        step = min(len(history) - prompt_len, len(ids) - 1)
        return [5.0 if i == ids[step] else 0.0 for i in range(len(VOCAB))]

    return logits


def test_a_hand_checkable_frame():
    # Spread only along x: the first axis is +x (largest loading positive), the second has no spread.
    docs = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    frame = fit_projection(docs)
    assert frame is not None
    np.testing.assert_array_equal(frame.mean, [0.0, 0.0, 0.0])
    assert frame(np.array([[0.6, 0.8, 0.0]]))[0].tolist() == pytest.approx([0.6, 0.0])
    assert project_2d(docs).tolist() == [[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]


def test_the_frame_reproduces_each_document_position_row_by_row():
    emb = WordEmbedder().encode(["paris is the capital", "lyon is the capital", "the capital", "lyon lyon"])
    frame = fit_projection(emb)
    assert frame is not None
    whole = project_2d(emb)
    for i in range(len(emb)):
        np.testing.assert_array_equal(frame(emb[i : i + 1])[0], whole[i])


def test_no_frame_under_two_documents():
    assert fit_projection(np.zeros((0, 4))) is None
    assert fit_projection(np.ones((1, 4))) is None


def _case(*texts: str) -> Case:
    return Case(
        id="map",
        question="What is the capital?",
        documents=[Document(id=f"d{i}", text=t) for i, t in enumerate(texts)],
        sampling=SamplingSpec(seeds=2, temperatures=[0.0], max_new_tokens=8, top_k=0, top_p=1.0),
    )


def _measure(case: Case, words: list[str]):
    embedder = WordEmbedder()
    analysis = analyze_inputs(case, embedder, InputSettings())
    prompt = [2, 3]
    backend = FakeBackend(VOCAB, _says(words, len(prompt)))
    traces = decode_rows(backend, prompt, rows_for(case.sampling), case.sampling)
    return analysis, measure_run(case, backend, traces, embedder, analysis)


def test_a_sample_repeating_a_document_lands_on_that_document():
    case = _case("paris is the capital", "lyon is the capital", "the capital is lyon lyon")
    analysis, run = _measure(case, ["paris", "is", "the", "capital"])
    assert [s.text for s in run.samples] == ["paris is the capital"] * 2
    for sample in run.samples:
        assert len(sample.position) == 2 and all(isinstance(x, float) for x in sample.position)
        assert sample.position == analysis.report.documents[0].position


def test_a_sample_elsewhere_lands_at_its_own_projection():
    case = _case("paris is the capital", "lyon is the capital", "the capital is lyon lyon")
    analysis, run = _measure(case, ["lyon", "lyon"])
    emb = analysis.doc_embeddings.astype(np.float64)
    mean = emb.mean(axis=0)
    _, _, vt = np.linalg.svd(emb - mean, full_matrices=False)
    axes = [v * np.sign(v[np.argmax(np.abs(v))]) for v in vt[:2]]
    sample = WordEmbedder().encode(["lyon lyon"])[0].astype(np.float64)
    expected = [float((sample - mean) @ a) for a in axes]
    np.testing.assert_allclose(run.samples[0].position, expected, atol=2e-6)


def test_one_document_gives_no_sample_positions():
    _, run = _measure(_case("paris is the capital"), ["paris"])
    assert [s.position for s in run.samples] == [[], []]


def test_an_empty_sample_has_no_position():
    case = _case("paris is the capital", "lyon is the capital")
    analysis = analyze_inputs(case, WordEmbedder(), InputSettings())
    vectors = WordEmbedder().encode(["", "paris is the capital"])
    positions = sample_positions(analysis, vectors)
    assert positions[0] == [] and positions[1] == analysis.report.documents[0].position
    assert sample_positions(analysis, np.zeros((0, 1), np.float32)) == []
