"""diagnose.text.values: typed values in en / zh / fr / ja sentences, and normalise_text."""

from __future__ import annotations

import time

import pytest

from diagnose.text import Value, comparable, extract_values, normalise_text, same_value
from diagnose.text import dates as dates_module
from diagnose.text.compare import range_end
from diagnose.text.value_classes import value_class


def one(text: str) -> Value:
    found = extract_values(text)
    assert len(found) == 1, (text, found)
    return found[0]


# --- equal readings -------------------------------------------------------------------------

SAME = [
    ("since 2024", "2024-03-05"),  # a year-only date covers the day: no contradiction
    ("due 22 November", "November 22, 2024"),  # "due" is not Italian "two" here
    ("年假共5个工作日", "5天"),
    ("1.5 GB", "1536 MB"),
    ("1.5 GB", "1.5 GiB"),
    ("$1,200", "1200 USD"),
    ("2024-03-05", "March 5, 2024"),
    ("v2.4.0", "version 2.4"),
    ("2.4.0", "v2.4"),
    ("两年", "24个月"),
    ("贰年", "2年"),
    ("60 minutes", "one hour"),
    ("one hour", "sixty (60) minutes"),
    ("60 min", "1 hour"),
    ("1800 seconds", "30 minutes"),
    ("two weeks", "14 days"),
    ("12 months", "1 year"),
    ("1 week", "7 days"),
    ("quatorze jours", "14 jours"),
    ("14 jours", "deux semaines"),
    ("une heure", "60 minutes"),
    ("二週間", "14日間"),
    ("€49,99", "49.99 EUR"),
    ("49,99 €", "€49,99"),
    ("3,480円", "3,480 yen"),
    ("3,480 yen", "¥3,480"),
    ("三千四百八十円", "3480円"),
    ("3万円", "30,000 yen"),
    ("1.5亿元", "150 million CNY"),
    ("100元", "100 CNY"),
    ("85–264 VAC", "85 ~ 264 Vac"),
    ("85–264 VAC", "85 V to 264 V AC"),
    ("400-888-1234", "4008881234"),
    ("400 888 1234", "400-888-1234"),
    ("2025年3月31日", "2025-03-31"),
    ("$4.82B", "$4,820 million"),
    ("$4,820 million", "4.82 billion dollars"),
    ("06/30/2024", "2024-06-30"),
    ("6/30/2024", "30 June 2024"),
    ("June 30, 2024", "2024-06-30"),
    ("le 5 mars 2024", "2024-03-05"),
    ("1er juillet 2024", "July 1, 2024"),
    ("2024年3月5日に発売", "March 5, 2024"),
    ("90%", "90 percent"),
    ("90 percent", "百分之九十"),
    ("$24", "24 USD"),
    ("US$24.00", "USD 24"),
    ("$24/month", "288 USD per year"),
    ("1.50 kg", "1.5 kg"),
    ("1.504 kg", "1.5 kg"),
    ("1500 grams", "1.5 kg"),
    ("8848.86米", "8848.86 m"),
    ("两千米", "2 km"),
    ("5000毫安时", "5,000 mAh"),
    ("12千瓦时", "12 kWh"),
    ("6.7英寸", "6.7 inches"),
    ("6.7インチ", "6.7 inch"),
    ("0 °C", "32 °F"),
    ("1 Gbps", "1000 Mbps"),
    ("300 req/min", "5 requests per second"),
    ("in 1998", "founded in 1998"),
    ("https://Example.com/Docs/", "https://example.com/docs"),
]


@pytest.mark.parametrize("a,b", SAME)
def test_same_value(a, b):
    va, vb = one(a), one(b)
    assert comparable(va, vb) and same_value(va, vb), (va, vb)


@pytest.mark.parametrize("rate", ["3,000 mg/day", "3,000 mg per day", "3 g a day", "3 g daily"])
def test_an_amount_per_day_in_any_writing_states_that_amount(rate):
    assert one(rate).per == 86400
    assert same_value(one(rate), one("3 g")) and not same_value(one(rate), one("4 g"))


def test_a_unit_over_a_length_is_no_rate():
    assert one("5 kg/m2").per == 0


# --- disagreeing readings ------------------------------------------------------------------------

DIFFER = [
    ("142 m", "97 m"),
    ("July 1, 2024", "July 15, 2024"),
    ("90%", "100%"),
    ("0–70 °C", "-40–85 °C"),
    ("1.52 kg", "1.5 kg"),
    ("1 year", "11 months"),
    ("$1,200", "$1,300"),
    ("400-888-1234", "400-888-1235"),
    ("in 1998", "in 1999"),
    ("v2.4.0", "v2.5"),
    ("2.3", "2.4.0"),  # a plain number against a version
    ("3 jours", "3 semaines"),
    ("两年", "三年"),
    ("1612", "1617"),  # two years (or counts) within 0.5% of each other are still two
    ("4,411 residents", "4,420 residents"),
]


@pytest.mark.parametrize("a,b", DIFFER)
def test_comparable_but_different(a, b):
    va, vb = one(a), one(b)
    assert comparable(va, vb) and not same_value(va, vb), (va, vb)


NOT_COMPARABLE = [
    ("$24", "288 USD per year"),
    ("$24", "€24"),
    ("142 m", "142 s"),
    ("90%", "90 kg"),
    ("1.5 kg", "1.5 GB"),
    ("11/22", "in 2024"),
    ("1200 mg", "in 1998"),
    ("85–264 VAC", "100 V"),
]


@pytest.mark.parametrize("a,b", NOT_COMPARABLE)
def test_not_comparable(a, b):
    va, vb = one(a), one(b)
    assert not comparable(va, vb), (va, vb)


# --- kinds and keys ---------------------------------------------------------------------------

KEYS = [
    ("1.5 GB", "quantity", "quantity:byte:1610612736"),
    ("$1,200", "money", "money:USD:1200"),
    ("2024-03-05", "date", "date:2024-03-05"),
    ("founded in 1998", "date", "date:1998"),
    ("since 2021", "date", "date:2021"),
    ("in 1905", "date", "date:1905"),
    ("the 1990s", "date", "date:1990s"),
    ("March 2024", "date", "date:2024-03"),
    ("11/22", "date", "date:--11-22"),
    ("3月31日", "date", "date:--03-31"),
    ("2025年", "date", "date:2025"),
    ("v2.4.0", "version", "version:2.4"),
    ("version 2.3", "version", "version:2.3"),
    ("release 1.2.3-beta", "version", "version:1.2.3b0"),
    ("Use Node v18.17.0.", "version", "version:18.17"),
    ("90%", "percent", "percent:90"),
    ("85–264 VAC", "range", "range:volt:85:264"),
    ("10–20%", "range", "range:percent:10:20"),
    ("$10–$20", "range", "range:USD:10:20"),
    ("between 10 and 20 users", "range", "range:number:10:20"),
    ("400-888-1234", "identifier", "identifier:4008881234"),
    ("+1 (555) 123-4567", "identifier", "identifier:15551234567"),
    ("010-12345678", "identifier", "identifier:01012345678"),
    ("call 1-800-555-0199", "identifier", "identifier:18005550199"),
    ("Write to Ops@Example.COM today", "identifier", "identifier:ops@example.com"),
    ("see https://Example.com/a/b/.", "identifier", "identifier:https://example.com/a/b"),
    ("connect to vpn.kitaboshi.co.jp first", "identifier", "identifier:vpn.kitaboshi.co.jp"),
    ("官网https://example.cn/a/。", "identifier", "identifier:https://example.cn/a"),
    ("host 10.0.0.1", "identifier", "identifier:10.0.0.1"),
    ("1200 mg", "quantity", "quantity:kilogram:0.0012"),
    ("1500 grams", "quantity", "quantity:kilogram:1.5"),
    ("2099 requests", "quantity", "quantity:request:2099"),
    ("8848.86米", "quantity", "quantity:meter:8848.86"),
    ("最高时速350公里/小时", "quantity", "quantity:meter/second:97.2222222222222"),
    ("2.7 million", "number", "number:2700000"),
    ("4,411", "number", "number:4411"),
    ("1.234.567", "number", "number:1234567"),
    ("2048 tokens", "number", "number:2048"),
    ("a 2.3 ratio", "number", "number:2.3"),
    ("49,99 €", "money", "money:EUR:49.99"),
    ("€49,99", "money", "money:EUR:49.99"),
    ("$2M", "money", "money:USD:2000000"),
    ("3,480円", "money", "money:JPY:3480"),
    ("288 USD per year", "money", "money:USD/year:288"),
    ("价格为¥99", "money", "money:CNY:99"),
    ("価格は¥3,480です", "money", "money:JPY:3480"),
    ("2pm", "quantity", "quantity:time_of_day:50400"),
    ("14:00–16:00", "range", "range:time_of_day:50400:57600"),
    ("8点30分", "quantity", "quantity:time_of_day:30600"),
    ("下午3点", "quantity", "quantity:time_of_day:54000"),
    ("15h30", "quantity", "quantity:time_of_day:55800"),
    ("周二下午2点至4点", "range", "range:time_of_day:50400:57600"),
    ("午後3時から5時まで", "range", "range:time_of_day:54000:61200"),
    ("de 14h30 à 16h", "range", "range:time_of_day:52200:57600"),
    ("2:00-4:00 pm", "range", "range:time_of_day:50400:57600"),
    ("10:00-2:00 pm", "range", "range:time_of_day:36000:50400"),
    ("9 a.m. to 5 p.m.", "range", "range:time_of_day:32400:61200"),
]


@pytest.mark.parametrize("text,kind,key", KEYS)
def test_kind_and_key(text, kind, key):
    v = one(text)
    assert (v.kind, v.key) == (kind, key), v


def test_magnitudes_and_dimensions():
    metre = one("高8848.86米")
    assert metre.magnitude == pytest.approx(8848.86) and metre.dimension == "[length]"
    money = one("€49,99")
    assert money.magnitude == pytest.approx(49.99) and money.dimension == "EUR"
    assert one("1 hour").dimension == "[time]" and one("1 hour").magnitude == pytest.approx(3600)
    for text in ("2024-03-05", "v2.4", "400-888-1234"):
        assert one(text).magnitude is None


def test_year_versus_quantity_in_a_life_span():
    found = extract_values("Albert (July 15, 1905 – March 2, 1977) took 1200 mg daily")
    assert [(v.kind, v.key) for v in found] == [
        ("date", "date:1905-07-15"),
        ("date", "date:1977-03-02"),
        ("quantity", "quantity:kilogram/second:1.38888888888889e-8"),  # "daily": a rate
    ]


def test_year_ranges_are_two_years_but_counts_stay_numbers():
    assert [v.key for v in extract_values("from 1998 to 2001")] == ["date:1998", "date:2001"]
    assert [v.key for v in extract_values("1000-2000 users")] == ["range:number:1000:2000"]
    assert one("it costs 1200 in total").kind == "number"
    assert [v.key for v in extract_values("results for 2023 and 2024")] == ["date:2023", "date:2024"]


def test_descending_pairs_are_not_ranges():
    assert [v.key for v in extract_values("the score was 3-1")] == ["number:3", "number:1"]


def test_numeric_dates_month_first_unless_impossible():
    assert one("03/04/2024").key == "date:2024-03-04"
    assert one("13/04/2024").key == "date:2024-04-13"
    assert one("30.06.2024").key == "date:2024-06-30"  # dots: day first
    assert one("6/30/24").key == "date:2024-06-30"


def test_month_words_that_are_common_words():
    assert one("you may 5 times").kind == "number"
    assert one("May 5").key == "date:--05-05"
    assert one("Sept. 3, 2021").key == "date:2021-09-03"
    assert one("il y a sept jours").key == one("7 days").key


def test_version_number_comparisons():
    number, version = one("2.3"), one("2.4.0")
    assert (number.kind, version.kind) == ("number", "version")
    assert comparable(number, version) and not same_value(number, version)
    assert same_value(one("2.4"), one("v2.4.0"))


def test_parenthesised_restatement_is_one_value():
    v = one("sixty (60) minutes")
    assert v.span == "sixty (60) minutes" and v.key == "quantity:second:3600"
    v = one("after 60 minutes (one hour) it stops")
    assert v.span == "60 minutes (one hour)"
    assert len(extract_values("$1,200 (1200 USD)")) == 1


def test_lone_one_is_not_a_number_but_one_hour_is():
    assert extract_values("no one came, one of them left") == []
    assert one("un an").key == one("12 months").key


def test_an_hour_without_a_part_of_the_day_or_a_range_is_no_time_of_day():
    assert one("这场比赛他得了3点").key == "number:3"  # three points
    assert one("8h de batterie").key == one("8 hours").key  # a span, not eight o'clock
    assert [v.kind for v in extract_values("9:00から5時間")] == ["quantity", "quantity"]  # from 9:00 for five hours


def test_chinese_words_are_not_numbers():
    assert extract_values("一些人统一了意见，唯一的办法") == []
    assert extract_values("十分重要，一点也不难") == []
    assert extract_values("第三章") == []  # an ordinal: the third chapter


def test_no_values_in_plain_words_and_ordinals():
    assert extract_values("The 3rd time, 1st place, 5G and 3D") == []
    assert extract_values("COVID-19") == []


def test_a_number_after_a_hyphen_ends_a_name_whose_word_holds_a_letter():
    assert extract_values("the airline flew a Skyrow K210-450 and a Vantis T8-3") == []  # model names
    assert extract_values("see clause R114-7 du règlement") == []  # no "7 du" (a unit) of an article number
    assert extract_values("the Tiefkühlwarenlagerverordnung-12 and e.g.K9-4") == []  # a long word; a word after a dot
    assert [v.key for v in extract_values("rows 10-12 in the 2019-2020 season")] == [
        "range:number:10:12", "range:number:2019:2020"]  # numbers on both sides stay a range


def test_a_multiplication_sign_is_no_letter_but_an_accented_letter_is():
    assert [v.key for v in extract_values("a 5×3 grid, 12÷4 rows")] == ["number:5", "number:3", "number:12", "number:4"]
    assert extract_values("the 5é model") == []  # a number run into a word is a name, accents included


# --- offsets -----------------------------------------------------------------------------------

MIXED = [
    "The PSU accepts 85–264 VAC, weighs 1.5 kg and costs $1,200 (released March 5, 2024, v2.4.0).",
    "该设备重两千克，价格３,４８０円，保修两年，电话400-888-1234，官网https://example.cn/a/。",
    "Le forfait coûte 49,99 € par mois, avec quatorze jours d'essai depuis 2021.",
    "2025年3月31日に発売、容量１.５ GB、動作温度-40–85 ℃、重量1.5㎏、連絡先 foo@example.com。",
    "Tickets: sixty (60) minutes, 90%, 2.7 million users, 14:00–16:00 on 06/30/2024.",
]


@pytest.mark.parametrize("text", MIXED)
def test_spans_are_offsets_into_the_input_in_order_without_overlap(text):
    found = extract_values(text)
    assert found
    for v in found:
        assert text[v.start : v.end] == v.span and v.span.strip() == v.span
    for a, b in zip(found, found[1:]):
        assert a.end <= b.start


def test_fullwidth_and_compatibility_characters():
    text = "重量1.5㎏、温度-40–85 ℃、容量１.５ GB"
    assert [v.key for v in extract_values(text)] == [
        "quantity:kilogram:1.5",
        "range:degree_Celsius:-40:85",
        "quantity:byte:1610612736",
    ]


def test_value_is_hashable_and_frozen():
    v = one("1.5 GB")
    assert {v: 1}[v] == 1
    with pytest.raises(AttributeError):
        v.key = "x"  # type: ignore[misc]


# --- robustness and speed ----------------------------------------------------------------------

GARBAGE = [
    "",
    "9" * 10_000,
    "1.1." * 2_500,
    "1-" * 5_000,
    "1 2 " * 2_000,
    "🙂" * 500,
    "\x00\x01\x1b[0m\x7f" * 200,
    "一" * 3_000,
    "年" * 3_000,
    "$" * 3_000 + "5",
    "a.b" * 3_000,
    "\ud800 12 \udfff",
    "%%%///---~~~" * 500,
]


@pytest.mark.parametrize("text", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_does_not_raise_and_is_quick(text):
    start = time.perf_counter()
    found = extract_values(text)
    normalise_text(text)
    assert time.perf_counter() - start < 2.0
    assert all(isinstance(v, Value) for v in found)


def _sentences(n: int) -> list[str]:
    parts = [
        "The unit draws {a} W at 85–264 VAC and ships on March {d}, 20{y} for ${p},000 (v{a}.{d}.0).",
        "该设备重{a}.{d}千克，价格{p},480円，保修两年，电话400-888-{a}{d}{y}，温度-40–85 °C。",
        "Le forfait coûte {d},99 € par mois, quatorze jours d'essai, depuis 20{y}, voir www.exemple.fr.",
        "Storage {d}.5 GB, {a}% uptime, 300 req/min, 14:00–16:00 on 06/{d}/20{y}; sixty (60) minutes.",
        "2025年3月{d}日に発売、価格は¥{p},480、容量{a} MB、重量1.5 kg、連絡先 foo{a}@example.com。",
    ]
    out = []
    for i in range(n):
        text = ""
        j = i
        while len(text) < 300:
            text += parts[j % len(parts)].format(a=10 + i, d=1 + i % 28, y=10 + i % 15, p=1 + i % 9) + " "
            j += 1
        out.append(text[:300])
    return out


def test_speed_on_300_character_sentences():
    sentences = _sentences(50)
    for s in sentences:  # warm-up: pint's registry, dateparser's locales, caches
        extract_values(s)
    start = time.perf_counter()
    for s in sentences:
        extract_values(s)
    mean_ms = (time.perf_counter() - start) * 1000 / len(sentences)
    assert mean_ms < 20, mean_ms


def test_dateparser_only_sees_short_spans(monkeypatch):
    seen = []
    real = dates_module._dateparser_date

    def spy(span, languages, order):
        seen.append(span)
        return real(span, languages, order)

    monkeypatch.setattr(dates_module, "_dateparser_date", spy)
    text = "On 30 June 2024 and June 30, 2024, le 1er juillet 2024, " + "x " * 200
    assert [v.key for v in extract_values(text)] == ["date:2024-06-30", "date:2024-06-30", "date:2024-07-01"]
    assert seen and all(len(s) < 30 for s in seen)


# --- normalise_text --------------------------------------------------------------------------------

NORMALISED = [
    ("Café  DÉJÀ vu!", "cafe deja vu"),
    ("４,４１１ people", "4411 people"),
    ("1 234 567 and 2024 100", "1234567 and 2024 100"),
    ("两年", "2年"),
    ("百分之九十", "90"),
    ("八千八百四十八点八六米", "8848.86米"),
    ("Version 2.4.0; done.", "version 2.4.0 done"),
    ("The U.S. economy, e.g. 1.5.", "the u s economy e g 1.5"),
    ("がぎぐ パン", "がぎぐ パン"),
    ("ﬁle – Straße", "file strasse"),
    ("一些人 统一 唯一 一样 一点也不", "一些人 统一 唯一 一样 一点也不"),
    ("49,99 €", "49.99 €"),
    ("1,2,3", "1 2 3"),
    ("l’été", "l ete"),
    ("\u3000全角\u3000空白\n", "全角 空白"),
    ("한국어 텍스트", "한국어 텍스트"),
]


@pytest.mark.parametrize("text,expected", NORMALISED)
def test_normalise_text(text, expected):
    assert normalise_text(text) == expected


def test_normalise_text_is_idempotent():
    for text, _ in NORMALISED:
        once = normalise_text(text)
        assert normalise_text(once) == once


def test_an_ordinal_is_not_an_amount():
    assert [v.span for v in extract_values("入职第一年的员工，年假共5个工作日。")] == ["5个工作日"]


@pytest.mark.parametrize("compound, plain", [
    ("a two-year warranty", "a warranty of 2 years"),
    ("16-week paid leave", "sixteen weeks of paid leave"),
    ("a 30-day window", "a window of 30 days"),
])
def test_a_hyphenated_measure_is_the_same_value_as_its_plain_form(compound, plain):
    (a,), (b,) = extract_values(compound), extract_values(plain)
    assert a.kind == "quantity" and same_value(a, b)


def test_hyphenated_measures_that_differ_are_comparable_and_different():
    (two,), (one,) = extract_values("a two-year warranty"), extract_values("covered for 1 year")
    assert comparable(two, one) and not same_value(two, one)


@pytest.mark.parametrize("text", ["Form 10-K", "a 3-D model", "a 5-star review"])
def test_a_hyphen_before_a_non_unit_or_a_letter_code_keeps_a_plain_number(text):
    assert [v.kind for v in extract_values(text)] == ["number"]


@pytest.mark.parametrize("bare,per", [("EUR 150", "EUR 150 per night"), ("$4.95", "$4.95 per order")])
def test_an_amount_of_money_equals_the_same_amount_per_a_unit_that_is_no_span_of_time(bare, per):
    assert same_value(one(bare), one(per)) and same_value(one(per), one(bare))
    assert not same_value(one("EUR 140"), one("EUR 150 per night"))
    assert not same_value(one("$288"), one("$24/month"))  # per time it is kept per year, not as written


@pytest.mark.parametrize("adverb, per", [("$9 monthly", "$9 a month"), ("EUR 40 daily", "EUR 40 per day"),
                                         ("$99 annual", "$99 per year")])
def test_money_per_a_span_of_time_said_by_an_adverb_is_the_same_rate(adverb, per):
    assert same_value(one(adverb), one(per)) and not comparable(one(adverb), one("$9"))


def test_a_price_per_a_unit_named_in_other_words_is_one_price():
    assert same_value(one("$24 per user"), one("24 USD per seat"))
    assert comparable(one("$24 per user"), one("$30 per seat")) and not same_value(one("$24 per user"), one("$30 per seat"))
    assert comparable(one("EUR 12 per ticket"), one("EUR 10")) and not same_value(one("EUR 12 per ticket"), one("EUR 10"))
    assert not comparable(one("$24/month"), one("$24"))  # a price per month is a rate apart
    assert value_class(one("EUR 150 per night")) == value_class(one("EUR 180"))


@pytest.mark.parametrize("amount, rate", [("$24", "$24/month"), ("1,200円", "月額1,200円"), ("EUR 40", "EUR 40 daily")])
def test_an_amount_of_money_states_the_rate_written_with_it_as_an_amount_states_its_daily_dose(amount, rate):
    assert same_value(one(amount), one(rate)) and same_value(one(rate), one(amount))
    assert not comparable(one(amount), one(rate))  # still a rate apart: it contradicts no amount
    assert not same_value(one("$30"), one("$24/month")) and not same_value(one("$288"), one("$24/month"))


def test_a_quantity_is_an_end_of_a_range_in_any_unit_of_its_dimension():
    (r,) = extract_values("from 500 mg to 4 g")
    assert range_end(extract_values("4,000 mg")[0], r) and range_end(extract_values("0.5 g")[0], r)
    assert not range_end(extract_values("2 g")[0], r)
    assert not range_end(extract_values("4 m")[0], r)


@pytest.mark.parametrize("text, spans", [
    ("The dose is 4 g once daily.", ["4 g"]),  # Spanish "once" is 11
    ("Are 3 doses enough for the course?", ["3"]),  # Spanish reads "doses" as 2
    ("Take it once a day.", []),
    ("Nine doses were given.", ["Nine"]),
    ("Délai : quatorze jours.", ["quatorze jours"]),  # no function word: the number words decide
])
def test_number_words_are_read_in_the_texts_own_language(text, spans):
    assert [v.span for v in extract_values(text)] == spans


@pytest.mark.parametrize("text, key", [
    ("Tuesdays 2-4 pm", "range:time_of_day:50400:57600"),
    ("open 9 to 11:30 am", "range:time_of_day:32400:41400"),
    ("11-1 pm", "range:time_of_day:39600:46800"),  # across noon: the first hour is the morning's
])
def test_a_bare_hour_opens_a_range_that_ends_with_its_part_of_the_day(text, key):
    assert [v.key for v in extract_values(text)] == [key]


def test_a_bare_hour_is_no_time_outside_such_a_range():
    assert [v.key for v in extract_values("pages 2-4, 5 pm")] == ["range:number:2:4", "quantity:time_of_day:61200"]
    assert [v.key for v in extract_values("from 10-12 a.m.")] == ["number:10", "quantity:time_of_day:0"]


@pytest.mark.parametrize("text, key", [
    ("The shop is at 12 St Mary Street.", "number:12"),
    ("Follow the B4 to 7 Rd Harrow and turn left.", "number:7"),
    ("Offices at 40 ST. Kellin Square.", "number:40"),
])
def test_an_address_abbreviation_after_a_number_is_no_unit(text, key):
    assert [v.key for v in extract_values(text)] == [key]
    assert extract_values("A viscosity of 3 stokes.")[0].kind == "quantity"  # the unit by its name


@pytest.mark.parametrize("written", ["50 Nm", "50 N·m", "50 N.m", "36.88 lb-ft", "36.88 ft-lbs"])
def test_a_torque_is_one_value_in_any_writing_of_its_unit(written):
    torque = extract_values(f"The Kellin drill delivers {written} of torque.")
    assert [v.span for v in torque] == [written] and same_value(torque[0], extract_values("50 newton metres")[0])
    assert not same_value(torque[0], extract_values("60 Nm")[0])


@pytest.mark.parametrize("written", ["5 business days", "five working days", "5 working-days", "5 Werktage"])
def test_a_span_of_days_that_says_which_days_count_is_measured_in_days(written):
    span = extract_values(f"Refunds reach the card within {written} of the return.")
    assert [v.span for v in span] == [written] and span[0].kind == "quantity"
    seven = extract_values("within 7 days")[0]
    assert comparable(span[0], seven) and not same_value(span[0], seven)


@pytest.mark.parametrize("text, span, key", [
    ("Charging takes 3½ hours.", "3½ hours", "quantity:second:12600"),
    ("Charging takes 3 ½ hours.", "3 ½ hours", "quantity:second:12600"),
    ("Rest for ½ hour.", "½ hour", "quantity:second:1800"),
])
def test_a_vulgar_fraction_is_read_as_decimals_joined_to_its_whole_number(text, span, key):
    assert [(v.span, v.key) for v in extract_values(text)] == [(span, key)]


def test_a_number_word_of_hundreds_after_digits_is_no_scale_of_them():
    assert [v.key for v in extract_values("A stamp costs 99 cents.")] == ["number:99"]  # French "cents" is 100
    assert [v.key for v in extract_values("In 1912 two ships sailed.")] == ["date:1912", "number:2"]


@pytest.mark.parametrize("text, keys", [
    ("He was mayor of Dunmore (1990–95).", ["date:1990", "date:1995"]),
    ("the 1999–00 season", ["date:1999", "date:2000"]),
    ("She taught there 1961 – 68.", ["date:1961", "date:1968"]),
    ("See pages 190–95.", ["number:190", "number:95"]),  # no year: a range of pages, read apart
    ("Signed 1995–90 in error", ["date:1995", "number:90"]),  # an end before the start is no end year
])
def test_a_span_of_years_written_with_the_last_two_digits_ends_in_that_year(text, keys):
    assert [v.key for v in extract_values(text)] == keys


@pytest.mark.parametrize("text, key", [
    ("令和5年4月1日から適用", "date:2023-04-01"),
    ("平成元年に設立", "date:1989"),
    ("令和五年四月一日", "date:2023-04-01"),
    ("民国38年", "date:1949"),
])
def test_a_year_of_an_era_is_its_gregorian_year(text, key):
    assert [v.key for v in extract_values(text)] == [key]


def _one(text: str) -> Value:
    found = extract_values(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("written, english", [
    ("La torre mide 150 metros.", "150 m"), ("La pista mide 12 kilómetros.", "12 km"),
    ("Il pèse 3 kilogrammes.", "3 kg"), ("Es wiegt 3 Kilogramm.", "3 kg"), ("O pacote pesa 500 gramas.", "500 g"),
    ("La strada è lunga 4 chilometri.", "4 km"), ("Una dose di 250 milligrammi.", "250 mg"),
    ("La garanzia è di 2 anni.", "2 years"), ("A garantia é de 2 anos.", "2 years"),
    ("De termijn is 30 dagen.", "30 days"), ("Il termine è di 30 giorni.", "30 days"),
])
def test_a_metric_or_time_word_of_a_supported_language_is_its_unit(written, english):
    value, expected = _one(written), _one(english)
    assert value.kind == "quantity" and same_value(value, expected)
    assert not same_value(value, _one(english.replace(english.split()[0], "7")))


@pytest.mark.parametrize("written, metric", [
    ("1,200 sq ft", "111.48 m²"),  # 1 ft = 0.3048 m: 1,200 × 0.3048² = 111.483648 m²
    ("85 sq. ft", "7.897 m²"), ("3.5 square kilometres", "3.5 km²"), ("400 square metres", "400 m²"),
    ("12 square miles", "31.08 km²"),  # 1 mi = 1.609344 km: 12 × 1.609344² = 31.0799 km²
])
def test_an_area_written_in_words_is_an_area(written, metric):
    value = _one(f"The site covers {written} in all.")
    assert value.span == written and same_value(value, _one(metric))


@pytest.mark.parametrize("text, key", [
    ("The city was founded in 753 BC.", "date:-0753"), ("founded in 753 BCE", "date:-0753"),
    ("César meurt en 44 av. J.-C.", "date:-0044"), ("nació en el 63 a. C.", "date:-0063"),
    ("The empire fell in AD 476.", "date:0476"), ("It fell in 476 CE.", "date:0476"),
    ("Er wurde 800 n. Chr. gekrönt.", "date:0800"),
])
def test_a_year_before_or_after_the_epoch_is_a_year(text, key):
    assert [v.key for v in extract_values(text)] == [key]


def test_a_year_before_the_epoch_differs_from_the_same_year_after_it():
    before, after = _one("in 753 BC"), _one("in AD 753")
    assert comparable(before, after) and not same_value(before, after)


@pytest.mark.parametrize("text", ["We run 3 AD servers.", "Two 2 CE-marked devices."])
def test_an_era_abbreviation_that_does_not_end_the_phrase_is_no_year(text):
    assert all(v.kind != "date" for v in extract_values(text))


def test_a_day_written_as_the_ordinal_of_a_month_is_a_date():
    assert _one("It was signed on the 4th of July, 1776.").key == "date:1776-07-04"
    assert _one("He scored 3 of May's goals.").kind == "number"  # "of" after a bare number is no date


def test_a_span_of_days_written_as_a_compound_adjective_is_measured_in_days():
    value = _one("A 30-business-day review period applies.")
    assert value.span == "30-business-day" and same_value(value, _one("30 days"))


@pytest.mark.parametrize("text", ["In Q3 2024 revenue grew.", "H1 2024 sales were flat."])
def test_a_year_after_a_quarter_or_half_is_a_year(text):
    assert [v.key for v in extract_values(text) if v.kind == "date"] == ["date:2024"]


@pytest.mark.parametrize("word", ["units", "pts", "shots"])
def test_a_count_word_that_pint_reads_as_a_unit_is_no_unit(word):
    assert _one(f"They logged 24 {word} last week.").key == "number:24"


def test_a_year_before_the_epoch_dates_no_document():
    found = dates_module.dates_in("Founded 753 BC, rebuilt AD 476, reopened 1 March 2020.")
    assert [d.isoformat() for _, _, d in found] == ["0476-01-01", "2020-03-01"]


@pytest.mark.parametrize("text, key", [
    ("In 1853 he moved to Lyon.", "date:1853"),  # pint: hecto-elementary charges
    ("We adopted 3 cats.", "number:3"),  # centi-atmospheres
    ("Their 2014 EP sold well.", "number:2014"),  # exa-poises
])
def test_a_word_that_pint_reads_only_as_a_prefix_on_a_unit_that_takes_none_is_no_unit(text, key):
    assert [v.key for v in extract_values(text)] == [key]
    assert _one("It is 5 km away.").key == "quantity:meter:5000" and _one("a 2 kPa drop").dimension == _one("2 bar").dimension


def test_an_exponent_that_lost_its_superscript_still_squares_its_unit():
    area = _one("The park covers 12 km 2 (4.63 sq mi) of forest.")  # 4.63 mi² = 11.99 km²
    assert area.kind == "quantity" and same_value(area, _one("12 km²"))
    assert [v.key for v in extract_values("He ran 5 km 2 times a week.")] == ["quantity:meter:5000", "number:2"]


def test_a_glued_m_after_money_is_millions_and_alone_is_metres():
    assert same_value(_one("The firm was fined £2.3m."), _one("a fine of GBP 2,300,000"))
    assert _one("The club paid €45m.").key == "money:EUR:45000000"
    assert _one("The wall is 5m high.").key == "quantity:meter:5"


@pytest.mark.parametrize("written, whole", [
    ("1 hour 30 minutes", "90 minutes"), ("2 hours and 15 minutes", "135 minutes"),
    ("6 feet 2 inches", "1.8796 m"),  # 6 × 0.3048 m + 2 × 0.0254 m
    ("3 lb 4 oz", "1.4742 kg"),  # 3 × 0.45359237 kg + 4 × 0.028349523 kg
])
def test_an_amount_written_in_falling_units_is_one_amount(written, whole):
    value = _one(f"It took {written} in all.")
    assert value.span == written and same_value(value, _one(whole))


@pytest.mark.parametrize("text, count", [
    ("Open 5 days, 8 hours a day.", 2),  # a comma parts two amounts
    ("Boxes of 10 cm 5 cm and 2 cm.", 3),  # the same unit thrice is a list
    ("She waited 30 minutes 2 hours later.", 2),  # a larger unit after a smaller one
])
def test_amounts_that_are_no_falling_units_stay_apart(text, count):
    assert len(extract_values(text)) == count


@pytest.mark.parametrize("text, keys", [
    ("Sales peaked in the mid-1990s.", ["date:1990s"]),
    ("Output is back to pre-2008 levels.", ["date:2008"]),
    ("Restart the service on batch-vm-03.", []),  # a host's name, as "COVID-19" is a name
])
def test_a_number_after_a_prefix_and_a_hyphen_is_the_number(text, keys):
    assert [v.key for v in extract_values(text)] == keys


def test_lakh_and_crore_scale_a_number():
    assert _one("The village has 2.5 lakh people.").key == "number:250000"
    assert same_value(_one("The grant is Rs 3 crore."), _one("INR 30,000,000"))


@pytest.mark.parametrize("written, plain", [("2,5 Mrd. Euro", "EUR 2,500,000,000"), ("1,2 Mio. €", "EUR 1,200,000")])
def test_an_abbreviated_scale_with_its_dot_keeps_the_currency_after_it(written, plain):
    value = _one(f"Der Umsatz lag bei {written} im Jahr.")
    assert value.span == written and same_value(value, _one(plain))


def test_a_foreign_month_abbreviation_that_english_writes_before_numbers_is_a_date_only_with_a_year():
    assert [v.key for v in extract_values("It has a USB 3.2 Gen 2 port.")] == ["number:3.2", "number:2"]
    assert _one("Scadenza: 15 Set 2024.").key == "date:2024-09-15"
    assert _one("The deadline is May 5.").key == "date:--05-05"


@pytest.mark.parametrize("text, key", [
    ("It had 12,345 people at the 2010 census.", "date:2010"),
    ("She won the 2019 election.", "date:2019"),
    ("The 1500 employees went on strike.", "number:1500"),  # before 1800: a count
])
def test_a_year_that_names_an_event_after_the_is_a_year(text, key):
    assert extract_values(text)[-1].key == key


def test_hours_and_minutes_written_with_min_are_a_span_not_a_time_of_day():
    assert same_value(_one("Comptez 2 h 30 min de trajet."), _one("150 minutes"))
    assert _one("Rendez-vous à 15h30.").dimension == "[time_of_day]"


def test_a_digit_after_a_unit_and_its_exponent_is_no_exponent():
    assert [v.key for v in extract_values("Their 2014 U23 squad won.")] == ["number:2014"]


@pytest.mark.parametrize("text, key", [
    ("a zero-gravity flight", "number:0"),  # not an acceleration of no gravities
    ("Block 647 Unit 3", "number:647"),  # a capitalised count word is no unit either
    ("planted 15 Elm trees", "number:15"),  # no exa-lumens
    ("Scores: 6.5\nMS in Biology", "number:6.5"),  # a unit is on its number's line
])
def test_words_that_pint_reads_as_odd_units_are_no_units(text, key):
    assert extract_values(text)[0].key == key
    assert _one("The plant makes 2 PWh a year.").dimension == _one("5 kWh").dimension


@pytest.mark.parametrize(("text", "key"), [
    ("Le projet a coûté 3 millions d'euros.", "money:EUR:3000000"),
    ("Una multa de 1,5 millones de dólares.", "money:USD:1500000"),
    ("Ein Auftrag über 2 Millionen Euro.", "money:EUR:2000000"),
    ("Die Anlage kostet 1,2 Milliarden Dollar.", "money:USD:1200000000"),
    ("Una inversión de 3 mil millones de dólares.", "money:USD:3000000000"),
    ("Un contratto da 2 milioni di euro.", "money:EUR:2000000"),
    ("Een subsidie van 4 miljard euro.", "money:EUR:4000000000"),
    ("A região tem 2 milhões de habitantes.", "number:2000000"),
    ("La ville compte 3 millions de personnes.", "number:3000000"),
])
def test_scale_words_of_other_languages_scale_a_number_and_keep_the_currency_after_de(text, key):
    assert _one(text).key == key


@pytest.mark.parametrize(("text", "key"), [
    ("The app has 2.3m users.", "number:2300000"),
    ("About 2m people live there.", "number:2000000"),
    ("The harbour handled 5m tonnes of grain.", "quantity:kilogram:5000000000"),
    ("A 10m wall surrounds it.", "quantity:meter:10"),
    ("She won the 400m hurdles.", "quantity:meter:400"),
    ("The crater is 30m across.", "quantity:meter:30"),
])
def test_a_glued_m_before_what_it_counts_is_millions_and_before_anything_else_metres(text, key):
    assert _one(text).key == key


@pytest.mark.parametrize(("text", "same_as"), [
    ("The pool opens at 9.30am.", "09:30"),
    ("Last entry 7.45 p.m.", "19:45"),
    ("The café closes at noon on Sundays.", "12:00"),
    ("Quiet hours start at midnight.", "00:00"),
    ("Visits run from 10 am to noon.", "10:00-12:00"),
])
def test_a_time_of_day_written_with_a_dot_or_as_noon_is_a_time_of_day(text, same_as):
    assert same_value(_one(text), _one(same_as))


def test_noon_in_a_name_or_in_afternoon_is_no_time():
    assert extract_values("We watched High Noon in the afternoon.") == []


def test_a_price_per_unit_and_per_span_of_time_is_one_rate_in_any_writing():
    monthly = _one("Seats cost $12 per user per month.")
    assert monthly.key == "money:USD/user/year:144"
    for same in ("$144 per user per year", "$12/user/month", "USD 12 per user and per month", "$12 a month"):
        assert same_value(monthly, _one(same)), same
    assert same_value(monthly, _one("$12 per user"))  # the same price, its span left unsaid
    assert comparable(monthly, _one("$15/user/month")) and not same_value(monthly, _one("$15/user/month"))
    assert not comparable(monthly, _one("a $12 fee"))  # a bare amount: no rate to compare with


def test_french_may_in_lower_case_is_a_month_beside_a_day_or_a_year_and_italian_never_is_none():
    assert same_value(_one("Le bureau ferme le 3 mai 2026."), _one("2026-05-03"))
    assert same_value(_one("Ouverture en mai 2026."), _one("May 2026"))
    assert [v.kind for v in extract_values("Non ho mai pagato 5 euro.")] == ["money"]
