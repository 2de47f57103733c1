import pytest

from diagnose.text.polarity import polarity, relative_polarity


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Interns are eligible for the travel allowance.", 1),
        ("Interns are not eligible for the travel allowance.", -1),
        ("Interns aren't eligible.", -1),
        ("The field is optional.", -1),
        ("It is not optional.", 1),
        ("Smoking is prohibited on the terrace.", -1),
        ("Les chiens ne sont pas acceptés.", -1),
        ("Les chiens sont acceptés.", 1),
        ("实习生可以申请补贴。", 1),
        ("实习生不可申请补贴。", -1),
        ("该功能不支持导出。", -1),
        ("持ち込みできません。", -1),
        ("持ち込みできます。", 1),
    ],
)
def test_polarity_of_hand_made_claims(text, expected):
    assert polarity(text) == expected


def test_polarity_is_relative_to_the_question():
    assert relative_polarity("Is the field optional?", "The field is optional.") == 1
    assert relative_polarity("Is the field required?", "The field is optional.") == -1
    assert relative_polarity("Is the field required?", "The field is required.") == 1


def test_the_clause_after_a_contrast_carries_the_claim():
    assert polarity("Scooters are not usually allowed on trains, but this line allows folded ones.") == 1
    assert polarity("The fee is usually waived, however members must pay it this year.") == 1
    assert polarity("Delivery is free, but not to islands.") == -1
    assert polarity("一般情况下不退款，但是会员可以申请退款。") == 1
