"""The read tier's answers, from hand-made readings (no model)."""

from diagnose.inputs.answers import NO, YES, DocAnswer
from diagnose.inputs.read_answers import read_answers
from diagnose.inputs.reading import DocumentReading
from diagnose.inputs.settings import InputSettings

S = InputSettings()


def test_typed_values_in_the_readings_decide_open_answers(hash_embedder):
    readings = [DocumentReading("It is 1.5 GB.", None, 10), DocumentReading("1536 MB", None, 10),
                DocumentReading("Two gigabytes", None, 10)]
    found = read_answers(readings, [None, None, None], [[], [], []], hash_embedder, False, S)
    assert found[0].value is not None and found[0].key == found[1].key
    assert found[2].key != found[0].key


def test_equal_free_text_readings_share_a_key(hash_embedder):
    readings = [DocumentReading("The blue button", None, 5), DocumentReading("the blue button.", None, 5),
                DocumentReading("A lever on the left", None, 5)]
    found = read_answers(readings, [None] * 3, [[], [], []], hash_embedder, False, S)
    assert found[0].key == found[1].key != found[2].key
    assert found[0].key.startswith("read:")


def test_yes_no_margins_add_to_the_static_vote():
    static = [DocAnswer(YES, "claims yes", None, None, 0.2), DocAnswer(YES, "claims yes", None, None, 0.2)]
    readings = [DocumentReading("yes", 1.0, 5), DocumentReading("no", -3.0, 5)]
    found = read_answers(readings, static, [[], []], None, True, S)
    assert [a.key for a in found] == [YES, NO]
    assert abs(found[1].strength - abs(0.2 + (-3.0 - S.read_margin_bias) / S.read_margin_scale)) < 1e-9


def test_a_read_value_the_document_states_in_other_words_is_kept(hash_embedder):
    """The model reads "2 years" where the document writes a hyphenated number word; "3 years"
    is a value the document does not state (a small model invents numbers), so it is dropped."""
    texts = ["Every unit ships with a two-year warranty on parts.", "Parts are covered for one year."]
    readings = [DocumentReading("2 years", None, 4), DocumentReading("3 years", None, 4)]
    found = read_answers(readings, [None, None], [[], []], hash_embedder, False, S, texts=texts)
    assert found[0] is not None and found[0].value is not None and found[0].value.span == "2 years"
    assert found[1] is None
