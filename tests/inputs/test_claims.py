import numpy as np

from diagnose.inputs.claims import document_sentences, find_claims, score_sentences


def test_scores_mix_cosine_and_lexical_overlap_and_cjk_questions_lean_on_overlap():
    cos = np.array([0.8, 0.2], np.float32)
    lex = np.array([0.0, 1.0], np.float32)
    np.testing.assert_allclose(score_sentences(cos, lex, 0.0, 0.5), [0.8, 0.7], rtol=1e-6)
    np.testing.assert_allclose(score_sentences(cos, lex, 1.0, 0.5), [0.0, 1.5], rtol=1e-6)


def test_long_documents_keep_their_most_question_like_sentences_in_order():
    text = " ".join(f"Filler sentence number {k}." for k in range(20)) + " The tent weighs 2 kg."
    docs = document_sentences("How much does the tent weigh?", [text, ""], max_sentences=3)
    assert docs.sentences[0][-1].text == "The tent weighs 2 kg."
    assert len(docs.sentences[0]) == 3 and len(docs.sentences[1]) == 1
    assert docs.owners().tolist() == [0, 0, 0, 1]


def test_claims_are_the_best_sentences_and_never_a_restated_question(hash_embedder):
    question = "How much does the tent weigh?"
    texts = ["How much does the tent weigh? The tent weighs 2 kg packed. Shipping is free."]
    docs = document_sentences(question, texts, 8)
    vectors = hash_embedder.encode(docs.flat + [question])
    claims, scores = find_claims(question, docs, vectors[:-1], vectors[-1], 0.5, 2)
    assert [c.sentence.text for c in claims[0]] == ["The tent weighs 2 kg packed.", "Shipping is free."]
    assert claims[0][0].values[0].span == "2 kg"
    assert scores.shape == (3,)


def test_a_character_budget_keeps_the_best_sentences_that_fit_and_always_one():
    text = "The tent weighs 2 kg. " + " ".join(f"Other words {k} here." for k in range(10))
    docs = document_sentences("How much does the tent weigh?", [text, "x" * 500], max_sentences=8, max_chars=60)
    assert docs.sentences[0][0].text == "The tent weighs 2 kg."
    assert sum(len(s.text) for s in docs.sentences[0]) <= 60
    assert len(docs.sentences[1]) == 1  # longer than the budget, but a document always keeps one


def test_claims_carry_the_questions_subject_words(hash_embedder):
    question = "How much does the Pro plan cost per month?"
    docs = document_sentences(question, ["The Pro plan costs $29 per month."], 8)
    vectors = hash_embedder.encode(docs.flat + [question])
    claims, _ = find_claims(question, docs, vectors[:-1], vectors[-1], 0.5, 2)
    assert claims[0][0].subject == ("pro",)


def test_a_table_row_is_read_with_its_header_row(hash_embedder):
    from diagnose.inputs.claims import DocumentSentences
    question = "How much does the Pro plan cost per month?"
    texts = ["Plan prices\nBasic | Pro | Enterprise\nMonthly price | $9 | $19 | $49\nSeats | 1 | 5 | 50\n"]
    docs = document_sentences(question, texts, 8)
    row = docs.flat.index("Monthly price | $9 | $19 | $49")
    assert docs.read[row] == "Basic Pro Enterprise Monthly price | $9 | $19 | $49"
    assert docs.read[0] == docs.flat[0]  # running text is read alone
    vectors = hash_embedder.encode(docs.flat + [question])
    _, with_header = find_claims(question, docs, vectors[:-1], vectors[-1], 0.5, 2)
    _, alone = find_claims(question, DocumentSentences(docs.sentences), vectors[:-1], vectors[-1], 0.5, 2)
    assert with_header[row] > alone[row]


def test_a_sentence_that_counts_what_the_question_asks_to_count_is_a_claim():
    question = "What is the population of Harrow Vale?"
    texts = ["Harrow Vale lies in Ellis County. The last census counted 3,118 people in Harrow Vale."]
    docs = document_sentences(question, texts, 8)
    same = np.ones((len(docs.flat), 4), np.float32) / 2.0  # every sentence as near the question: words decide
    claims, scores = find_claims(question, docs, same, same[0], 0.5, 1)
    assert claims[0][0].sentence.text == "The last census counted 3,118 people in Harrow Vale."
    assert scores[1] > scores[0]
