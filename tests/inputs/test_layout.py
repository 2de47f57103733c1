import numpy as np

from diagnose.inputs.layout import center_position, delimiter_issue, lost_in_the_middle, project_2d


def test_projection_is_deterministic_and_spreads_points():
    rng = np.random.default_rng(3)
    emb = rng.standard_normal((6, 10)).astype(np.float32)
    a, b = project_2d(emb), project_2d(emb.copy())
    assert a.shape == (6, 2) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert a[:, 0].std() >= a[:, 1].std() > 0
    assert project_2d(emb[:1]).tolist() == [[0.0, 0.0]]


def test_delimiters_in_the_prompt():
    docs = ["First passage text.", "Second passage text."]
    glued = "Context: First passage text. Second passage text. Question: q"
    framed = "Context:\n[1] First passage text.\n\n[2] Second passage text.\nQuestion: q"
    assert delimiter_issue(docs, "T {documents} {question}", glued) is not None
    assert delimiter_issue(docs, "T\n{documents}\n{question}", framed) is None
    assert delimiter_issue(docs, None, glued) is None  # default template: the engine delimits


def test_delimiters_from_the_template_alone():
    assert delimiter_issue(["a", "b"], "Use these {documents} to answer {question}", None)
    assert delimiter_issue(["a", "b"], "Documents:\n{documents}\n\nQ: {question}", None) is None


def test_center_position_and_lost_in_the_middle():
    docs = ["alpha " * 10, "beta " * 10, "gamma " * 10]
    prompt = "".join(docs)
    mid = center_position(prompt, docs, [1], None)
    assert abs(mid - 0.5) < 0.05
    assert center_position(prompt, docs, [0], None) < 0.2
    assert lost_in_the_middle(mid, 5000, 2000, 0.25, 0.75)
    assert not lost_in_the_middle(mid, 500, 2000, 0.25, 0.75)
    assert lost_in_the_middle(0.25, 2000, 2000, 0.25, 0.75) and lost_in_the_middle(0.75, 2000, 2000, 0.25, 0.75)
    assert center_position(None, docs, [0], None) is None
