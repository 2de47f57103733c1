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
