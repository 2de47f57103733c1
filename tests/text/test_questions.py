import pytest

from diagnose.text.questions import is_yes_no_question, stated_values


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


from diagnose.text.questions import AMOUNT_KINDS, COUNT, DATE_KINDS, PER_TIME, asked_dimensions, asked_value_kinds, predicate_text, subject_text  # noqa: E402


@pytest.mark.parametrize(
    "question, kinds",
    [
        ("When does the spring sale end?", DATE_KINDS),
        ("On what date was the invoice sent?", DATE_KINDS),
        ("How many seats does the hall have?", AMOUNT_KINDS),
        ("保修期是多少年？", AMOUNT_KINDS),
        ("What was the total number of seats sold?", AMOUNT_KINDS),
        ("Quel est le nombre de places ?", AMOUNT_KINDS),
        ("What are the steps of the audit?", None),
        ("Who signed the lease?", frozenset()),
        ("What is the default timeout of the gateway?", None),
        ("返品は購入後何日以内に可能ですか？", AMOUNT_KINDS),  # within how many days: a span
        ("ケルン社の保証期間は何年ですか？", AMOUNT_KINDS),  # the warranty period is how many years
        ("新製品は何日に発売されますか？", DATE_KINDS),  # on what day
        ("¿Cuántos empleados tiene Fenwick?", AMOUNT_KINDS),
        ("Wie viele Mitarbeiter hat Fenwick?", AMOUNT_KINDS),
        ("¿Cuándo abrió la tienda?", DATE_KINDS),
    ],
)
def test_asked_value_kinds(question, kinds):
    assert asked_value_kinds(question) == kinds


@pytest.mark.parametrize(
    "question, dimensions",
    [
        ("How many weeks of leave do new parents get?", {"[time]"}),
        ("What is the price per month of the Basic plan?", {"money", PER_TIME}),
        ("What share of employees work remotely?", {"percent"}),
        ("How much does the stroller weigh?", {"[mass]"}),
        ("What is the maximum upload size in MB?", {"[information]"}),
        ("Who signed the lease?", set()),
        ("What is the rate limit of the Kellin API?", {"percent", PER_TIME}),  # a share or an amount per time
        ("What is the interest rate on the Harrow saver account?", {"percent", PER_TIME}),
        ("What is the output voltage of the Arlo charger?", {"[mass] * [length] ** 2 / [time] ** 3 / [current]"}),
        ("Quelle est la température maximale du boîtier ?", {"[temperature]"}),
        ("这款路由器的内存是多少？", {"[information]"}),
        ("What is the height of the Fenwick tower?", {"[length]"}),
        ("What is the length of the Fenwick lease?", set()),  # a length may be a time
        ("What is the dosing frequency of Arvol?", set()),  # and so may a frequency
        ("How many employees does Fenwick have?", {COUNT}),  # how many of things that are no unit
        ("What is the population of Harrow Vale?", {COUNT}),
        ("Quelle est la population de Dunmore ?", {COUNT}),
        ("What is the population of St. Kellin, Ohio?", {COUNT}),  # "St." abbreviates a name, no stokes
        ("Kellin市的人口是多少？", {COUNT}),
        ("这款音箱的续航时间是多少？", set()),  # "多少" alone asks any amount, not a count
        ("How many days of leave do new parents get?", {"[time]"}),  # a unit: measured, not counted
        ("Combien de temps dure la garantie du Velo X ?", {"[time]"}),  # a span of time, not a count
        ("Quelle est la durée du préavis chez Lumo ?", {"[time]"}),
        ("What is the duration of the Fenwick trial?", {"[time]"}),
        ("这款音箱的保修期是多长时间？", {"[time]"}),
        ("退货期限多久？", {"[time]"}),
        ("How long is the Fenwick bridge?", set()),  # a length or a span of time
        ("What was the profession of Henry Hale?", set()),  # a name, not henries (inductance)
        ("Who founded the Candela Works in Lyon?", set()),  # nor candelas
        ("Can I take my cat on the Harrow ferry?", set()),  # pint: centi-atmospheres
        ("Is the MS degree at Kellin free?", set()),  # an acronym, not megasiemens
        ("When was the 24th Harrow Brigade formed?", set()),  # "th" of an ordinal, not thou
        ("Wie viele Mitarbeiter hat Fenwick?", {COUNT}),  # "hat" is "has", not hecto-atmospheres
        ("Wie viele Tage Urlaub gibt es?", {"[time]"}),  # a capitalised noun that is a unit word
        ("What is the maximum upload size in GB?", {"[information]"}),
        ("How much did Kellin pay for Harrow Mills?", {"money"}),
        ("How much did the Fenwick fair spend on security?", {"money"}),
        ("How tall is the Fenwick tower?", {"[length]"}),
    ],
)
def test_asked_dimensions(question, dimensions):
    assert asked_dimensions(question) == dimensions


@pytest.mark.parametrize("question, subject", [
    ("How much does the Pro plan cost per month?", "Pro"),
    ("What is the default timeout of the Orbit Gateway?", "Orbit Gateway"),
    ("Combien coûte le forfait Pro par mois ?", "Pro"),
    ("Pro套餐每月多少钱？", "Pro"),
    ("Proプランの月額料金はいくらですか？", "Pro"),
    ("Pro plan price?", ""),  # a sentence's first word is capitalised whatever it is
    ("Quel est le tarif Étudiant chez Vélonor à Besançon ?", "Étudiant Vélonor Besançon"),  # accented capitals
])
def test_subject_text_is_the_capitalised_names_in_any_language(question, subject):
    assert subject_text(question) == subject


def test_predicate_text_drops_the_capitalised_subject():
    assert predicate_text("What is the default timeout of the Orbit Gateway?") == "What is the default timeout of the"
    assert predicate_text("Quel est le tarif Étudiant chez Vélonor ?") == "Quel est le tarif chez ?"


def test_units_of_the_values_a_question_states_are_conditions_not_dimensions():
    assert asked_dimensions("What is the maximum amount an adult may take in 24 hours?") == set()
    assert asked_dimensions("How many hours does the 2 kg battery last?") == {"[time]"}


@pytest.mark.parametrize("question, stated", [
    ("How many laps is the Harrow 500 race?", []),  # a number in a name names the subject
    ("When did Flight 31 land in Dunmore?", []),
    ("How many orders over $50 ship free in 24 hours?", ["$50", "24 hours"]),
    ("What was the fare in 1931?", ["1931"]),
    ("How far is it to mile 12 of the Kellin trail?", ["12"]),
])
def test_stated_values_are_the_questions_own_values_outside_names(question, stated):
    assert [v.span for v in stated_values(question)] == stated


@pytest.mark.parametrize(("question", "dimension"), [
    ("How far is the lighthouse from the harbour?", "[length]"),
    ("How deep is Lake Varn?", "[length]"),
    ("Wie hoch ist der Kellerturm?", "[length]"),
    ("钟楼有多高？", "[length]"),
    ("赤岳の標高は？", "[length]"),
    ("What is the area of the Orvel estate?", "[length] ** 2"),
    ("Quelle est la superficie du domaine ?", "[length] ** 2"),
    ("How fast does the ferry sail?", "[length] / [time]"),
    ("What is the boiling point of the coolant?", "[temperature]"),
    ("How long did the strike last?", "[time]"),
    ("How long does a refund take?", "[time]"),
    ("How old was the bridge when it closed?", "[time]"),
])
def test_a_question_that_asks_how_far_deep_fast_hot_or_how_long_something_lasts_names_its_dimension(question, dimension):
    assert dimension in asked_dimensions(question)


def test_how_long_something_is_names_no_dimension_and_combien_de_temps_counts_nothing():
    from diagnose.text.roles import counted_things
    assert asked_dimensions("How long is the Orvel footbridge?") == frozenset()  # a length or a time
    assert counted_things("Combien de temps dure la garantie ?") == []
