import pytest

from diagnose.text.change import tells_change


@pytest.mark.parametrize("sentence", [
    "Since March the fee is $12 per month (it was $10 before).",
    "The limit is 20 kg, replacing the 15 kg limit of the old policy.",
    "The window was raised from 14 to 30 days.",
    "Le délai passe de 14 à 30 jours.",
    "退货期限由7天调整为14天。",
    "従来は30日でしたが、60日に変更されました。",
])
def test_a_sentence_that_tells_of_a_change(sentence):
    assert tells_change(sentence)


@pytest.mark.parametrize("sentence", [
    "The kettle weighs 1.2 kg empty and 2.9 kg full.",
    "Doors close 20 minutes before departure; the desk opens 2 hours before.",
    "She was born in 1931 and died in 1990.",
    "Le colis pèse 2 kg et mesure 40 cm.",
    "包裹重2公斤，长40厘米。",
])
def test_a_sentence_of_two_values_in_two_roles_tells_no_change(sentence):
    assert not tells_change(sentence)
