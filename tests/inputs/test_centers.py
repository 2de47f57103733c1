import numpy as np

from diagnose.inputs.centers import assign_centers, components, masses, merge_keys, similarity_pairs


def _unit(rows):
    x = np.asarray(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_similarity_pairs_match_brute_force():
    rng = np.random.default_rng(0)
    emb = _unit(rng.standard_normal((12, 8)))
    sims = emb @ emb.T
    expected = {(i, j) for i in range(12) for j in range(i + 1, 12) if sims[i, j] >= 0.2}
    got = similarity_pairs(emb, 0.2)
    assert {(i, j) for i, j, _ in got} == expected
    for i, j, s in got:
        assert abs(s - sims[i, j]) < 1e-5


def test_components_label_by_first_member():
    assert components(5, [(3, 4, 1.0), (0, 2, 1.0)]) == [0, 1, 0, 2, 2]


def test_merge_keys_folds_subsets_into_longer_key():
    assert merge_keys(["ice hockey", "hockey", None, "sumo wrestling"]) == [
        "ice hockey", "ice hockey", None, "sumo wrestling"
    ]


def test_assign_centers_groups_by_key_and_attaches_unanswered():
    emb = _unit([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.95, 0.05, 0], [0, 0, 1]])
    keys = ["1905", "1905", "1900", None, None]
    noise = np.array([False, False, False, False, False])
    got = assign_centers(emb, keys, noise, attach_similarity=0.5, center_similarity=0.75)
    assert got[0] == got[1] == got[3] == 0  # the largest center comes first
    assert got[2] == 1
    assert got[4] is None  # unanswered and like no answered doc: noise


def test_every_non_noise_doc_in_exactly_one_center_and_masses_sum_to_one():
    rng = np.random.default_rng(1)
    emb = _unit(rng.standard_normal((9, 6)))
    keys = ["a", "b", None, "a", None, "c", "b", None, "a"]
    noise = np.array([False, False, False, False, True, False, False, False, True])
    got = assign_centers(emb, keys, noise, attach_similarity=-1.0, center_similarity=0.75)
    assert [i for i, c in enumerate(got) if c is None] == [4, 8]
    m = masses(got)
    assert abs(m.sum() - 1.0) < 1e-9
    assert len(m) == len({c for c in got if c is not None})
    assert list(m) == sorted(m, reverse=True)


def test_without_any_answer_documents_group_by_embedding():
    emb = _unit([[1, 0], [0.99, 0.01], [0, 1]])
    got = assign_centers(emb, [None, None, None], np.zeros(3, bool), 0.5, 0.9)
    assert got[0] == got[1] != got[2]


def test_masses_are_weighted():
    m = masses([0, 0, 1, None], weights=np.array([1.0, 1.0, 2.0, 5.0]))
    np.testing.assert_allclose(m, [0.5, 0.5])


def test_near_copies_that_each_hold_the_others_answer_share_a_center():
    from diagnose.inputs.centers import merge_agreeing_copies

    a = "The town had 4,411 residents in 2006, and 12 villages belong to the town of Pilzno today."
    b = "The town had 4,411 residents in 2006, and 12 villages belong to the gmina of Pilzno now."
    c = "The town had 9,000 residents in 2006, and 12 villages belong to the town of Pilzno today."
    got = merge_agreeing_copies([a, b, c], [0, 1, 2], ["4,411", "12", "9,000"], 0.6)
    assert got[0] == got[1] != got[2]
    assert merge_agreeing_copies([a, c], [0, 1], ["4,411", "9,000"], 0.6) == [0, 1]
