import pytest

from diagnose.text.questions import is_yes_no_question


@pytest.mark.parametrize(
    "question",
    [
        "Can interns claim the travel allowance?",
        "Does the Basic plan include phone support?",
        "In 2023, was the office open on Sundays?",
        "Est-ce que la livraison est gratuite ?",
        "Faut-il un visa ?",
        "实习生可以申请补贴吗？",
        "该套餐是否包含电话支持？",
        "ペットを連れて行けますか？",
    ],
)
def test_yes_no_questions(question):
    assert is_yes_no_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "What is the monthly price of the Basic plan?",
        "How long is the warranty?",
        "When does enrolment close?",
        "Is the router black or white?",
        "Quel est le délai de livraison ?",
        "保修期是多少年？",
        "料金はいくらですか？",
        "",
    ],
)
def test_open_questions(question):
    assert not is_yes_no_question(question)
