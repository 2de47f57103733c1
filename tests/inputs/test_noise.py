import numpy as np

from diagnose.inputs.noise import noise_mask, text_features, unusable
from diagnose.inputs.settings import InputSettings

S = InputSettings()
PROSE = "Gmina Pilzno is an urban-rural gmina in Debica County, in south-eastern Poland."


def test_number_dump_garbled_and_empty_are_unusable():
    dump = "2.7 -0.3 2.4 1.86 67.17 75.81 8.2 1994 38,544,000 481,285 386,398 94,887 12.5"
    garbled = "nL\ufffd\ufffd14p\ufffd , \ufffd0 D\ufffdGi \ufffd\ufffd\ufffdQ7 \ufffd\ufffd8"
    assert unusable(text_features(dump), S) == "number dump"
    assert unusable(text_features(garbled), S) == "garbled"
    assert unusable(text_features("  "), S) == "empty"
    assert unusable(text_features(PROSE), S) is None


def test_boilerplate_share_counts_site_chrome():
    chrome = "Privacy policy About Wikipedia Disclaimers Contact Wikipedia Mobile view Search Toggle"
    assert text_features(chrome).boilerplate > S.boilerplate_share
    assert text_features(PROSE).boilerplate == 0.0


def test_noise_mask_combines_relevance_answers_and_text():
    texts = [PROSE, PROSE, PROSE, "1 2 3 4 5 6 7 8 9 10"]
    feats = [text_features(t) for t in texts]
    rel = np.array([0.6, 0.05, 0.2, 0.7], dtype=np.float32)
    answered = np.array([True, True, False, True])
    got = noise_mask(rel, answered, feats, S)
    # off-topic (below noise_relevance), weak and unanswered, number dump
    assert got.tolist() == [False, True, rel[2] < S.weak_relevance, True]


def test_cjk_relevance_is_lexical_overlap_of_character_grams():
    from diagnose.inputs.noise import lexical_relevance, question_relevance

    q = "珠穆朗玛峰的海拔是多少米？"
    on = "珠穆朗玛峰是喜马拉雅山脉的主峰。根据最新测量，其海拔高度为8611米。"
    off = "北京烤鸭是北京的传统名菜，以色泽红艳、肉质细嫩而著称。"
    assert lexical_relevance(q, on) == 1.0 and lexical_relevance(q, off) == 0.0
    cosine = np.array([0.55, 0.58, 0.4], dtype=np.float32)
    got = question_relevance(q, [on, off, PROSE], cosine)
    # CJK documents are scored lexically, a non-CJK one keeps its cosine
    assert got.tolist() == [1.0, 0.0, np.float32(0.4)]
    assert question_relevance("What is the population of Pilzno?", [on, PROSE], cosine[:2]).tolist() == cosine[:2].tolist()
    assert noise_mask(got, np.array([True, False, True]), [text_features(t) for t in (on, off, PROSE)], S).tolist() == [
        False, True, False]


def test_isolated_unanswered_documents_are_noise():
    from diagnose.inputs.noise import isolation

    emb = np.array([[1, 0, 0], [0.96, 0.28, 0], [0, 0, 1], [0.6, 0, 0.8]], dtype=np.float32)
    near = isolation(emb)
    np.testing.assert_allclose(near, [0.96, 0.96, 0.8, 0.8], rtol=1e-5)
    feats = [text_features(PROSE)] * 4
    rel = np.array([0.5, 0.45, 0.4, 0.2], dtype=np.float32)
    near = np.array([0.9, 0.3, 0.3, 0.48], dtype=np.float32)
    answered = np.array([False, False, True, False])
    # an unanswered doc unlike every other is noise; an answered one is kept;
    # a weakly relevant one without a close neighbour is noise
    assert noise_mask(rel, answered, feats, S, near).tolist() == [False, True, False, True]
    assert noise_mask(rel, answered, feats, S).tolist() == [False, False, False, True]
    assert isolation(emb[:1]).tolist() == [1.0]


def test_corroborated_answers_survive_low_relevance():
    feats = [text_features(PROSE)] * 3
    rel = np.array([0.05, 0.05, 0.6], dtype=np.float32)
    answered = np.array([True, True, True])
    # a page tail far from the question still counts when another document states its answer
    got = noise_mask(rel, answered, feats, S, corroborated=np.array([True, False, True]))
    assert got.tolist() == [False, True, False]
    assert noise_mask(rel, answered, feats, S).tolist() == [True, True, False]


def test_unanswered_documents_below_every_answered_one_are_noise():
    feats = [text_features(PROSE)] * 4
    rel = np.array([0.6, 0.45, 0.42, 0.48], dtype=np.float32)
    answered = np.array([True, True, False, False])
    near = np.full(4, 0.9, dtype=np.float32)
    assert noise_mask(rel, answered, feats, S, near).tolist() == [False, False, True, False]
    assert noise_mask(rel, np.zeros(4, bool), feats, S, near).tolist() == [False] * 4
