from diagnose.text.names import name_key, proper_names


def test_runs_of_capitalised_words_with_joining_words():
    text = "Harbour Lights (Anna de Vries album) is the second album by Dutch singer Anna de Vries."
    assert [n for n, _ in proper_names(text)] == ["Harbour Lights", "Anna de Vries", "Dutch", "Anna de Vries"]


def test_a_capitalised_sentence_start_is_not_a_name_and_runs_stop_at_a_full_stop():
    text = "Released in 2001. The record was produced by Tom Kessler. It sold well."
    assert [n for n, _ in proper_names(text)] == ["Tom Kessler"]


def test_name_keys_fold_case_accents_and_punctuation():
    assert name_key("The Go-Gos") == name_key("the go-gos") == "the go gos"
    assert name_key("Beyoncé") == name_key("BEYONCE")
