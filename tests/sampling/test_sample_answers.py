"""What a sample answers: typed values in the documents' unit, names, answers to something else."""

from __future__ import annotations

import numpy as np

from diagnose.sampling.sample_answers import answer_frame, read_answers, same_answer
from diagnose.sampling.semantic import answer_clusters

LEAVE = {"c1": ["16 weeks"]}
IDS = ["h1", "h2", "h3"]


def test_a_bare_number_a_unit_and_words_are_one_answer():
    frame = answer_frame(LEAVE, IDS)
    found = read_answers(["16", "16 weeks of paid parental leave", "It is sixteen weeks of paid leave."], frame)
    assert [a.kind for a in found] == ["answer"] * 3
    assert all(same_answer(found[0], other) for other in found[1:])
    assert found[0].text == "16 weeks"


def test_document_references_are_not_values():
    frame = answer_frame(LEAVE, IDS)
    [cited] = read_answers(["Document [3] (id: h3) says the leave is 16 weeks."], frame)
    assert cited.kind == "answer" and cited.cites == 2 and same_answer(cited, read_answers(["16 weeks"], frame)[0])
    [listing] = read_answers(["Document [1] (id: h1)\nDocument [2] (id: h2)"], frame)
    assert listing.kind == "other" and listing.cites >= 2


def test_a_value_of_another_kind_answers_something_else():
    frame = answer_frame(LEAVE, IDS)
    [year] = read_answers(["The policy was adopted in 2019."], frame)
    [free] = read_answers(["Ask your manager."], frame)
    assert (year.kind, free.kind) == ("other", "none")


def test_different_values_differ_and_a_custom_format_is_masked():
    frame = answer_frame({"c1": ["30 days"], "c2": ["14 days"]}, ["a", "b"], document_format="<doc n={index}>{text}</doc>")
    thirty, fourteen, cited = read_answers(["30", "14 days", "as <doc n=2> says: 30 days"], frame)
    assert not same_answer(thirty, fourteen) and same_answer(thirty, cited)


def test_names_answer_when_the_documents_answer_with_names():
    frame = answer_frame({"c1": ["Ada Lovelace"], "c2": ["Grace Hopper"]}, ["x"])
    ada, grace, ada2 = read_answers(["It was Ada Lovelace.", "Grace Hopper wrote it", "It was Ada Lovelace!"], frame,
                                    question="Who wrote the first program?")
    assert same_answer(ada, ada2) and not same_answer(ada, grace)


def test_answer_clusters_join_equal_answers_whatever_their_wording():
    frame = answer_frame(LEAVE, IDS)
    texts = ["16", "sixteen weeks", "12 weeks", "no idea", "no idea at all"]
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(5, 8)).astype(np.float32)
    emb[4] = emb[3]  # the two free-text samples read alike
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    clusters = answer_clusters(texts, emb, read_answers(texts, frame), threshold=0.9)
    assert clusters == [0, 0, 1, 2, 2]


def test_a_rate_over_the_asked_period_answers_with_its_amount():
    """Samples that give the right daily dose as a rate ("4 g/day") answer the question, not something else."""
    frame = answer_frame({"c1": ["4 g"], "c2": ["2 g"]}, ["m1", "m2"])
    question = "What is the maximum daily dose of the Veltrin syrup?"
    per_day, in_mg, amount, weekly = read_answers(["4 g/day", "Up to 4000 mg per day.", "2 g", "4 g per week"],
                                                  frame, question)
    assert [a.kind for a in (per_day, in_mg, amount, weekly)] == ["answer", "answer", "answer", "other"]
    assert per_day.text == "4 g" and same_answer(per_day, in_mg) and not same_answer(per_day, amount)
    assert same_answer(per_day, read_answers(["4 g"], frame, question)[0])


def test_an_amount_answers_a_rate_over_the_asked_period():
    frame = answer_frame({"c1": ["3 mg/day"]}, ["m1"])
    [amount] = read_answers(["Take 3 mg."], frame, "How much Veltrin may a child take per day?")
    [unasked] = read_answers(["Take 3 mg."], frame, "How much Veltrin may a child take?")
    assert amount.kind == "answer" and same_answer(amount, read_answers(["3 mg/day"], frame)[0])
    assert unasked.kind == "other"


def test_a_value_written_in_the_documents_class_beats_a_number_read_into_it():
    """A numbered list's "1." is not the answer when the sample also writes "612 m"."""
    frame = answer_frame({"c1": ["612 m"], "c2": ["587 m"]}, ["p1", "p2"])
    [listed] = read_answers(["1. The Velmar pass lies at 587 m.\n2. It is closed in winter."], frame,
                            "How high is the Velmar pass?")
    assert listed.kind == "answer" and listed.text == "587 m"
    assert same_answer(listed, read_answers(["587 m"], frame)[0])
