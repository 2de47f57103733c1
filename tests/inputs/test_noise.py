import numpy as np

from diagnose.inputs.noise import noise_mask, text_features, unusable
from diagnose.inputs.settings import InputSettings

S = InputSettings()
PROSE = "Harbor Tower is an office building on the quay of Porto Lindo, finished in 1988."


def test_number_dump_garbled_and_empty_are_unusable():
    dump = "3.1 -0.2 2.9 1.75 66.2 74.9 8.8 1991 12,544,000 381,205 286,311 94,110 11.5"
    garbled = "nL\ufffd\ufffd14p\ufffd , \ufffd0 D\ufffdGi \ufffd\ufffd\ufffdQ7 \ufffd\ufffd8"
    assert unusable(text_features(dump), S) == "number dump"
    assert unusable(text_features(garbled), S) == "garbled"
    assert unusable(text_features("  "), S) == "empty"
    assert unusable(text_features(PROSE), S) is None


def test_boilerplate_share_counts_site_chrome():
    chrome = "Privacy policy About us Disclaimers Contact Cookie statement Mobile view Search Toggle"
    assert text_features(chrome).boilerplate > S.boilerplate_share
    assert text_features(PROSE).boilerplate == 0.0


def test_noise_mask_combines_relevance_answers_and_text():
    texts = [PROSE, PROSE, PROSE, "1 2 3 4 5 6 7 8 9 10"]
    feats = [text_features(t) for t in texts]
    rel = np.array([1.0, 0.2, 0.45, 0.9], dtype=np.float32)
    answered = np.array([True, True, False, True])
    # kept; below noise_relevance; below relative_relevance x the best; a number dump
    assert noise_mask(rel, answered, feats, S).tolist() == [False, True, True, True]


def test_isolated_unanswered_documents_are_noise():
    from diagnose.inputs.noise import isolation

    emb = np.array([[1, 0, 0], [0.96, 0.28, 0], [0, 0, 1], [0.6, 0, 0.8]], dtype=np.float32)
    np.testing.assert_allclose(isolation(emb), [0.96, 0.96, 0.8, 0.8], rtol=1e-5)
    assert isolation(emb[:1]).tolist() == [1.0]
    feats = [text_features(PROSE)] * 4
    rel = np.array([0.7, 0.7, 0.7, 0.9], dtype=np.float32)
    near = np.array([0.9, 0.3, 0.3, 0.3], dtype=np.float32)
    answered = np.array([False, False, True, False])
    # unanswered and unlike every other document: noise, unless clearly about the question
    assert noise_mask(rel, answered, feats, S, near).tolist() == [False, True, False, False]
    assert noise_mask(rel, answered, feats, S).tolist() == [False] * 4


def test_corroborated_answers_survive_low_relevance():
    feats = [text_features(PROSE)] * 3
    rel = np.array([0.1, 0.1, 1.0], dtype=np.float32)
    answered = np.array([True, True, True])
    # a page tail far from the question still counts when another document states its answer
    got = noise_mask(rel, answered, feats, S, corroborated=np.array([True, False, True]))
    assert got.tolist() == [False, True, False]
    assert noise_mask(rel, answered, feats, S).tolist() == [True, True, False]


def test_boilerplate_without_an_answer_is_noise():
    chrome = "Privacy policy About us Disclaimers Contact Cookie statement Mobile view Search Toggle login"
    feats = [text_features(PROSE), text_features(chrome), text_features(chrome)]
    rel = np.array([1.0, 0.9, 0.9], dtype=np.float32)
    assert noise_mask(rel, np.array([True, False, True]), feats, S).tolist() == [False, True, False]
