"""Values stated as conditions (bounds and ages), and questions that ask for one."""

import pytest

from diagnose.text.conditions import asks_age, asks_bound, is_condition
from diagnose.text.values import extract_values


def _value(text: str, span: str):
    return next(v for v in extract_values(text) if v.span == span)


@pytest.mark.parametrize("text, span", [
    ("Orders over $50 ship free of charge.", "$50"),
    ("Employees with more than 5 years of service get 25 days.", "5 years"),
    ("Children under 12 travel for EUR 10.", "12"),
    ("Adults and children 16 years and over may take it.", "16 years"),
    ("A child ticket (ages 4 to 11) costs EUR 10.", "4 to 11"),
    ("It is not suitable for a 16-year-old.", "16"),
    ("Les commandes de plus de 50 € sont livrées gratuitement.", "50 €"),
    ("单笔订单超过500元免运费。", "500元"),
    ("3,000円以上のご注文は送料無料です。", "3,000円"),
    ("Take it on an empty stomach, at least 1 hour before meals.", "1 hour"),
    ("Refunds cover bookings made at least 14 days before arrival.", "14 days"),
    ("Of the residents, 9% are under 5 years of age.", "5 years"),
    ("满1年不满10年的，年假5天。", "1年"),
    ("Fares are listed below. Under 12 travel free.", "12"),
    ("Fares are listed below. Over 65s pay half.", "65s"),
])
def test_a_bound_or_an_age_is_a_condition(text, span):
    assert is_condition(text, _value(text, span))


@pytest.mark.parametrize("text, span", [
    ("Standard shipping costs $5.99 per order.", "$5.99 per order"),
    ("Employees with more than 5 years of service get 25 days.", "25 days"),
    ("Children under 12 travel for EUR 10.", "EUR 10"),
    ("The offer ends before 1 March 2026.", "1 March 2026"),  # a date after "before" is as often the answer
    ("La garantie dure 3 ans.", "3 ans"),  # "ans" is years of a duration as much as of an age
    ("Liability shall not exceed $2,000,000 per occurrence.", "$2,000,000 per occurrence"),  # a limit stated
    ("Take no more than 4 g in 24 hours.", "4 g in 24 hours"),
    ("每日剂量不得超过4克。", "4克"),
    ("At least 212 people died in the floods.", "212"),
    ("The river rose overnight. More than 90 homes were flooded.", "90"),
    ("By Sunday, more than 3,400 homes had been flooded.", "3,400"),
    ("The final toll was over 90.", "90"),
    ("On compte plus de 40 blessés.", "40"),
])
def test_a_value_stated_as_such_is_no_condition(text, span):
    assert not is_condition(text, _value(text, span))


@pytest.mark.parametrize("question, bound", [
    ("What is the maximum daily dose?", True),
    ("How much can employees claim at most per night?", True),
    ("Quel est le plafond des frais d'hôtel ?", True),
    ("What is the limitation of liability in the agreement?", True),
    ("每天最多可以服用多少？", True),
    ("How much does standard shipping cost?", False),
    ("Quel est le prix du billet enfant ?", False),
])
def test_a_question_that_asks_for_a_bound(question, bound):
    assert asks_bound(question) is bound


@pytest.mark.parametrize("question, age", [
    ("How old must a driver be?", True), ("From what age can children ride alone?", True),
    ("À quel âge ?", True), ("几岁可以入学？", True), ("How much is a child ticket?", False),
])
def test_a_question_that_asks_for_an_age(question, age):
    assert asks_age(question) is age
