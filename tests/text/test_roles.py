"""Roles: amounts per span of time, counts of the asked things, and what a question asks."""

import pytest

from diagnose.text.compare import same_value
from diagnose.text.questions import COUNT, PER_TIME, asked_dimensions
from diagnose.text.roles import (
    as_rate, asks_count, counted_things, counted_word, counts, is_whole, listed_things, named_span, names_word,
)
from diagnose.text.sentences import content_tokens
from diagnose.text.values import extract_values


@pytest.mark.parametrize("text", [
    "Adults may take up to 4 g a day.",
    "The maximum is 4,000 mg per day.",
    "Never more than 4000 mg daily.",
    "Do not exceed 4 g in 24 hours.",
    "La dose maximale est de 4 g par jour.",
    "成人每日最大剂量为4克。",
    "1日あたりの最大量は4,000mgです。",
    "Adults should not exceed 4,000 mg of Velorin a day.",
    "Take no more than 4 g of the syrup daily.",
])
def test_an_amount_per_day_is_one_rate_in_any_wording(text):
    values = [v for v in extract_values(text) if v.dimension == "[mass] / [time]"]
    assert len(values) == 1
    assert same_value(values[0], extract_values("4 g/day")[0])


def test_what_an_amount_is_of_does_not_make_it_a_rate_without_a_span():
    assert [(v.span, v.per) for v in extract_values("The tank holds 500 l of water in total.")] == [("500 l", 0.0)]
    assert [v.span for v in extract_values("Take 500 mg of Velorin every 4 hours.")] == ["500 mg", "4 hours"]


def test_an_amount_without_a_span_of_time_stays_an_amount():
    assert [v.dimension for v in extract_values("One 500 mg tablet every 4 to 6 hours.")] == ["[mass]", "[time]"]
    assert extract_values("The store is open 24 hours a day.")[0].dimension == "[time]"


def test_a_spelled_count_before_an_amount_does_not_join_it():
    assert [v.span for v in extract_values("Take one 500 mg tablet.")] == ["500 mg"]


@pytest.mark.parametrize("question, rate", [
    ("What is the maximum daily dose of Velorin?", True),
    ("How many hours a day is the pool open?", True),
    ("Quelle est la dose maximale par jour ?", True),
    ("每天最多可以服用多少？", True),
    ("1日あたりの最大用量はいくらですか？", True),
    ("套餐每月多少钱？", True),
    ("What is the annual fee of the Gold card?", True),
    ("What is the maximum dose of Velorin?", False),
    ("How long is a day pass valid?", False),
    ("Where is The Weekly Courier printed?", False),  # a word of a name
    ("Daily, how much may an adult take?", True),
])
def test_a_question_asks_an_amount_per_time_by_its_qualifier(question, rate):
    assert (PER_TIME in asked_dimensions(question)) is rate


def test_a_count_of_the_asked_things_is_read_in_any_wording():
    tokens = content_tokens("What are the steps to renew a badge?")
    for text, number in [("Renewal is a five-step process.", "five"), ("Skip the last two steps.", "two")]:
        v = next(v for v in extract_values(text) if v.span == number)
        assert names_word(tokens, counted_word(text, v.end))
    assert not names_word(tokens, counted_word("It takes 3 days.", 4))
    assert names_word(content_tokens("续订徽章的步骤是什么？"), counted_word("共五个步骤", 2))
    assert asks_count("How many steps are there?") and asks_count("Combien d'étapes ?") and asks_count("有几个步骤？")
    assert not asks_count("What are the steps to renew a badge?")


@pytest.mark.parametrize("text, part, whole", [
    ("The Greens won 41 of the 120 seats.", "41", "120"),
    ("She finished 12 out of 40 races.", "12", "40"),
    ("Les Verts ont obtenu 41 sur 120 sièges.", "41", "120"),
    ("Die Grünen gewannen 41 der 120 Sitze.", "41", "120"),
])
def test_a_part_counts_the_noun_after_its_whole_and_the_whole_is_no_count(text, part, whole):
    counted = [content_tokens(text.split()[-1])[0]]
    values = {v.span: v for v in extract_values(text)}
    assert counts(values[part], text, counted) and not counts(values[whole], text, counted)
    assert is_whole(text, values[whole]) and not is_whole(text, values[part])


@pytest.mark.parametrize("question, counted", [
    ("What is the population of Harrow Vale?", True),
    ("公司有多少名员工？", True),
    ("会議室は何人まで使えますか？", True),
    ("Combien coûte le forfait Pro ?", False),  # how much: any amount
    ("这款音箱的续航时间是多少？", False),  # "多少" alone asks any amount
    ("年假有几天？", False),  # a unit: measured, not counted
    ("¿Cuántos empleados tiene Fenwick?", True),
    ("Quanti dipendenti conta la Kellin?", True),
    ("Wie viele Mitarbeiter hat Fenwick?", True),
    ("Hoeveel winkels heeft Fenwick?", True),
    ("¿Cuánto cuesta el plan Pro?", False),  # how much: any amount
])
def test_a_question_asks_a_count_of_things_not_any_amount(question, counted):
    assert asks_count(question) is counted
    assert (COUNT in asked_dimensions(question)) is counted


@pytest.mark.parametrize("question, things", [
    ("What are the steps to renew a badge?", ["steps"]),
    ("Quelles sont les étapes du renouvellement ?", ["etape"]),
    ("续订徽章的步骤是什么？", ["步骤"]),
    ("バッジ更新の手順は何ですか？", ["手順"]),
    ("What is the maximum amount per caplet?", []),
    ("Which line is the station on?", []),
])
def test_a_question_that_asks_for_a_list_names_the_things(question, things):
    assert listed_things(question) == things


def test_percentages_a_step_apart_at_the_written_precision_differ():
    p = lambda s: extract_values(s)[0]  # noqa: E731
    assert not same_value(p("99.95%"), p("99.9%"))
    assert same_value(p("33.33%"), p("33.3%"))


def test_a_cjk_question_names_the_unit_it_counts_in():
    assert asked_dimensions("新员工每年有多少天年假？") == {PER_TIME, "[time]"}
    assert asked_dimensions("有給休暇は何日ですか？") == {"[time]"}


@pytest.mark.parametrize("label, seconds", [
    ("Price per month", 2629800.0),
    ("Pro Price per month", 2629800.0),  # a per-word before a noun ("Pro Price") hides no later "per month"
    ("Monthly", 2629800.0),
    ("Fee (USD/mo)", 2629800.0),
    ("Prix par mois", 2629800.0),
    ("每月价格", 2629800.0),
    ("月額料金", 2629800.0),
    ("Max per day", 86400.0),
    ("Price", None),
    ("Day pass", None),
])
def test_a_table_label_names_the_span_its_amounts_are_per(label, seconds):
    span = named_span(label)
    assert (span.factor if span is not None else None) == seconds


def test_an_amount_read_as_a_rate_equals_the_same_rate_written_out():
    month, day = named_span("per month"), named_span("per day")
    assert same_value(as_rate(extract_values("$19")[0], month), extract_values("$19 a month")[0])
    assert not same_value(as_rate(extract_values("$19")[0], month), extract_values("$29 per month")[0])
    assert same_value(as_rate(extract_values("2 g")[0], day), extract_values("2,000 mg daily")[0])
    already, count = extract_values("$228 per year")[0], extract_values("5 seats")[0]
    assert as_rate(already, month) == already and as_rate(count, month) == count


@pytest.mark.parametrize("text, rate", [
    ("Pro套餐每月29美元，包含5个席位。", True),
    ("料金は月額2,900円です。", True),
    ("プロプランは月2,980円で使えます。", True),  # a lone span opening its phrase, right before the amount
    ("会员年费299元。", True),
    ("1月29美元的促销。", False),  # January, not "a month"
    ("今月2,980円のセール。", False),  # "this month": the span is part of a word
    ("3月2,980円に値下げ。", False),
    ("今年29万円を投資。", False),
])
def test_a_cjk_span_before_money_makes_it_an_amount_per_time(text, rate):
    money = next(v for v in extract_values(text) if v.kind == "money")
    assert money.dimension.endswith("/year") is rate


def test_a_data_size_per_span_of_time_is_one_rate_in_any_wording():
    monthly = extract_values("100 GB a month")[0]
    assert monthly.dimension == "[information] / [time]"
    for text in ("100 GB per month", "100 GB/month", "100 GB monthly"):
        assert same_value(extract_values(text)[0], monthly)
    assert same_value(as_rate(extract_values("100 GB")[0], named_span("Storage per month")), monthly)


@pytest.mark.parametrize("question, things", [
    ("How many volunteers joined the Harbour Run?", ["volun", "joine"]),
    ("What is the number of branches of Corvel Bank?", ["branc"]),
    ("Combien d'adhérents compte le club ?", ["adher", "compt"]),
    ("¿Cuántos socios tiene la cooperativa?", ["socio", "tiene"]),
    ("合作社有几名会员？", ["会员"]),
    ("How many did the Harbour Run sell?", []),  # no thing named: any count answers
    ("When did the Harbour Run start?", []),
])
def test_a_question_names_the_things_it_asks_to_count(question, things):
    assert counted_things(question) == things


@pytest.mark.parametrize("question", ["What is the population of Harrow Vale?", "Quelle est la population de Varne ?",
                                      "Varne的人口是多少？"])
def test_a_population_is_counted_in_people(question):
    things = counted_things(question)
    assert all(names_word(things, word) for word in ("people", "inhabitants", "residents", "habitants"))
    assert not names_word(things, "farms")
