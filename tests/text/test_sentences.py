from diagnose.text.sentences import cjk_share, content_tokens, overlap, split_sentences


def test_prose_tables_and_cjk_split_into_sentences_with_offsets():
    text = "| Plan | Limit | | | Free | 10 per day | | | Pro | 500 per day |\nThe limit resets daily. 套餐每天重置。试用期不可使用！"
    sents = split_sentences(text)
    # A flattened table breaks at its row breaks (two pipes in a row); a row's cells stay together.
    assert [s.text for s in sents] == [
        "| Plan | Limit", "Free | 10 per day", "Pro | 500 per day |", "The limit resets daily.", "套餐每天重置。", "试用期不可使用！",
    ]
    for s in sents:
        assert text[s.start:s.start + len(s.text)] == s.text


def test_overlong_runs_are_cut_at_a_space():
    text = " ".join(["word"] * 300)
    sents = split_sentences(text, max_chars=100)
    assert len(sents) > 10 and all(len(s.text) <= 100 for s in sents)
    assert sum(len(s.text.split()) for s in sents) == 300


def test_content_tokens_drop_grammar_and_stem_words():
    assert content_tokens("What are the limits of the Limited plan?") == ["limit", "plan"]
    assert "的" not in "".join(content_tokens("员工的年假有多少天？"))
    assert content_tokens("员工的年假") == ["员工", "年假"]


def test_overlap_is_the_share_of_question_tokens_present():
    q = content_tokens("How heavy is the packed tent?")
    assert overlap(q, "The packed tent is heavy: 2 kg.") == 1.0
    assert overlap(q, "The tent weighs 2 kg.") == 2 / 3  # "heavy" meets "weighs"
    assert overlap(q, "The tent is green.") == 1 / 3
    assert overlap(q, "Shipping is free.") == 0.0
    assert overlap([], "anything") == 0.0


def test_cjk_share():
    assert cjk_share("年假 5 天") == 0.75
    assert cjk_share("") == 0.0


def test_a_measure_adjective_meets_its_noun():
    for question, text in [("the height", "324 m high"), ("the height", "a tall mast"), ("la hauteur", "12 m haut"),
                           ("the length", "5 km long"), ("la longueur", "une piste longue"), ("Tiefe", "8 m tief")]:
        assert overlap(content_tokens(question), text) == 1.0
    assert overlap(content_tokens("the height"), "the length") == 0.0
