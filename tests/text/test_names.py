import pytest

from diagnose.text.names import abbreviates, name_key, named_apart, proper_names


def test_runs_of_capitalised_words_with_joining_words():
    text = "Harbour Lights (Anna de Vries album) is the second album by Dutch singer Anna de Vries."
    assert [n for n, _ in proper_names(text)] == ["Harbour Lights", "Anna de Vries", "Dutch", "Anna de Vries"]


def test_a_capitalised_sentence_start_is_not_a_name_and_runs_stop_at_a_full_stop():
    text = "Released in 2001. The record was produced by Tom Kessler. It sold well."
    assert [n for n, _ in proper_names(text)] == ["Tom Kessler"]


def test_name_keys_fold_case_accents_and_punctuation():
    assert name_key("The Go-Gos") == name_key("the go-gos") == "the go gos"
    assert name_key("Beyoncé") == name_key("BEYONCE")


def test_initials_abbreviate_a_longer_name():
    assert abbreviates("R", "Republican")
    assert abbreviates("U.K.", "United Kingdom")
    assert abbreviates("NFL", "National Football League")
    assert abbreviates("USA", "United States of America")  # a joining word may be skipped
    assert not abbreviates("CA", "Canada")
    assert not abbreviates("Rome", "Republican")  # not a run of capitals
    assert not abbreviates("R", "R")  # not longer
    assert not abbreviates("NFL", "National Hockey League")


@pytest.mark.parametrize("a, b, apart", [
    ("Manchester United", "Manchester City", True),
    ("the Democratic Party", "the Republican Party", True),
    ("Kim Jong-un", "Kim Jong-il", True),
    ("Manchester United F.C.", "Manchester United", False),  # one within the other
    ("The Democratic Party", "the Democratic party", False),  # one name in other case
    ("Basketball", "Football", False),  # single words: no name to tell apart
    ("Action comedy", "Crime drama", False),  # no names
])
def test_two_names_told_apart_by_one_word_in_the_same_place(a, b, apart):
    assert named_apart(a, b) is apart


def test_a_sentence_start_the_caller_knows_as_a_name_is_one():
    text = "Norvik won. Caldera lost to Norvik."
    assert [n for n, _ in proper_names(text)] == ["Norvik"]
    assert [n for n, _ in proper_names(text, frozenset({"norvik"}))] == ["Norvik", "Norvik"]
