import numpy as np

from diagnose.inputs.stance import camps


def _unit(rows):
    x = np.asarray(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_two_similar_pairs_with_opposite_votes_are_two_camps_and_no_is_label_one():
    emb = _unit([[1, 0.1, 0], [1, 0.12, 0], [0.1, 1, 0], [0.12, 1, 0]])
    labels = camps(emb, np.array([0.8, 0.6, -0.7, -0.9], np.float32), vote_weight=0.1)
    assert labels.tolist() == [0, 0, 1, 1]


def test_agreeing_votes_on_two_documents_stay_one_camp():
    emb = _unit([[1, 0.3], [0.3, 1]])
    assert camps(emb, np.array([0.5, 0.4], np.float32), 0.1).tolist() == [0, 0]
    assert camps(emb, np.array([0.5, -0.4], np.float32), 0.1).tolist() == [0, 1]


def test_a_single_document_and_the_greedy_path_for_many():
    assert camps(_unit([[1, 0]]), np.array([1.0], np.float32), 0.1).tolist() == [0]
    rng = np.random.default_rng(0)
    side = rng.standard_normal((2, 16))
    emb = _unit(np.vstack([side[0] + 0.1 * rng.standard_normal((8, 16)), side[1] + 0.1 * rng.standard_normal((8, 16))]))
    labels = camps(emb, np.r_[np.ones(8), -np.ones(8)].astype(np.float32), 0.1)  # 16 > MAX_EXACT: greedy
    assert labels.tolist() == [0] * 8 + [1] * 8
