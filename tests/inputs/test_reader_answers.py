"""The reader's answers make the centers' keys: typed equality, and one name for two things kept apart."""

from __future__ import annotations

import pytest

from diagnose.inputs.answers import NO, YES, DocAnswer
from diagnose.inputs.reader_answers import _name_and_kind, found_nothing, misread_by_text, reader_answers
from diagnose.inputs.settings import InputSettings
from diagnose.reader.readings import DocumentReading
from diagnose.text.values import extract_values
from tests.fakes import WordEmbedder


def _keys(*readings: tuple[str, str | None], texts: list[str] | None = None, question: str = "") -> list[str | None]:
    """Keys of the readings; each document states its answer unless ``texts`` says otherwise."""
    texts = texts or [f"The document says {a}." for a, _ in readings]
    found = reader_answers([DocumentReading(a, None, 10, about=about) for a, about in readings],
                           [[] for _ in readings], WordEmbedder(), False, InputSettings(), texts, question)
    return [f.key if f else None for f in found]


@pytest.mark.parametrize("a, b", [("3 g", "3,000 mg"), ("EUR 180", "180 euros"), ("two weeks", "14 days")])
def test_equal_values_in_other_units_are_one_answer(a, b):
    keys = _keys((a, None), (b, None), ("4 g" if "g" in a else "EUR 150" if "EUR" in a else "9 days", None))
    assert keys[0] == keys[1] != keys[2]


def test_a_document_that_does_not_answer_has_no_key():
    assert _keys(("not stated", None), ("1993", None))[0] is None


def test_an_answer_in_words_its_document_does_not_hold_is_no_answer():
    texts = ["Marla Quint won the regional singles title at the Eastport tennis open.",
             "Marla Quint coached the college golf squad for a decade.",
             "As a professional tennis player, Marla Quint reached the final twice."]
    answers = [("Basketball", None), ("Golf", None), ("Professional tennis", None)]
    keys = _keys(*answers, texts=texts, question="What sport is Marla Quint known for?")
    assert keys[0] is None and None not in keys[1:] and keys[1] != keys[2]  # one word of its own read suffices


def test_the_reader_found_nothing_in_a_page_it_says_states_nothing_or_invents_an_answer_for():
    texts = ["Marla Quint won the regional singles title at the Eastport tennis open."] * 4
    replies = ["Basketball", "not stated", "Tennis", "Yes"]  # a bare yes or no holds no word of a page
    readings = [DocumentReading(a, None, 10) for a in replies]
    question = "What sport is Marla Quint known for?"
    assert found_nothing(readings, texts, question, yes_no=False) == [True, True, False, False]
    assert found_nothing(readings, texts, "Is Marla Quint a tennis player?", yes_no=True) == [False] * 4
    translated = [DocumentReading("Harbour Road, Lanzhou", None, 10), DocumentReading("港口路", None, 10)]
    shop = ["本店位于兰州市港口路十八号,营业时间为每天九点至二十一点。", "The shop is on Harbour Road in Lanzhou."]
    assert found_nothing(translated, shop, "本店在哪里?", yes_no=False) == [False, False]  # another script may translate


def test_a_value_its_document_does_not_state_is_no_answer():
    texts = ["The Kestrel 30 weighs 1.2 kg with its frame.", "Our stores open at nine every morning.",
             "Kestrel 30: 1200 g, frame included."]
    assert _keys(("1.2 kg", None), ("4.5 kg", None), ("1.2 kg", None), texts=texts) == ["reader:0", None, "reader:0"]


def test_a_value_stated_in_another_unit_or_writing_is_stated():
    texts = ["The limit is 3,000 mg a day.", "Refunds are accepted for fourteen days."]
    keys = _keys(("3 g", None), ("14 days", None), texts=texts)
    assert None not in keys


def test_answers_with_a_stated_value_in_common_are_one_answer():
    texts = ["At most 6 caplets (3,000 mg) in 24 hours.", "Do not exceed 3 g a day.", "Up to 8 caplets (4,000 mg) a day."]
    keys = _keys(("6 caplets (3,000 mg)", None), ("3 g", None), ("8 caplets (4,000 mg)", None), texts=texts)
    assert keys[0] == keys[1] != keys[2]


def test_a_bare_yes_or_no_answers_no_open_question():
    assert _keys(("No", None), ("No.", None), ("Ice hockey", None)) == [None, None, "reader:0"]


def test_a_value_the_question_states_joins_nothing():
    texts = ["At most 6 caplets (3,000 mg) in 24 hours.", "Up to 8 caplets (4,000 mg) in 24 hours."]
    keys = _keys(("6 caplets (3,000 mg) in 24 hours", None), ("8 caplets (4,000 mg) in 24 hours", None),
                 texts=texts, question="How much may an adult take in 24 hours?")
    assert keys[0] != keys[1] and None not in keys


def test_a_number_in_a_name_the_question_gives_can_be_an_answer():
    keys = _keys(("500 laps", None), ("520 laps", None), question="How many laps is the Harrow 500 race?")
    assert keys[0] is not None and keys[1] is not None and keys[0] != keys[1]


def test_a_value_its_document_states_only_as_a_condition_is_no_answer_unless_a_bound_is_asked():
    texts = ["Standard shipping costs $5.99. Orders over $50 ship free.", "Standard delivery is $5.99."]
    readings = (("$50", None), ("$5.99", None))
    assert _keys(*readings, texts=texts, question="How much does standard shipping cost?") == [None, "reader:0"]
    assert None not in _keys(*readings, texts=texts, question="What is the minimum order for free shipping?")
    limit = ["Liability shall not exceed $2,000,000 per occurrence.", "The cap is $1M per occurrence."]
    assert None not in _keys(("$2,000,000", None), ("$1M", None), texts=limit, question="What is the liability?")


def test_a_figure_hedged_by_a_bound_is_an_answer():
    texts = ["At least 212 people died in the floods.", "The floods killed 180 people, officials said."]
    keys = _keys(("212", None), ("180", None), texts=texts, question="How many people died in the floods?")
    assert None not in keys and keys[0] != keys[1]


def test_a_sentence_answer_is_labelled_by_what_it_adds_to_the_question():
    question = "Who designed the Harrow Vale footbridge?"
    answers = ["Ilse Marten designed the Harrow Vale footbridge.", "The footbridge was designed by Tomas Brandt"]
    texts = ["Ilse Marten designed the footbridge in 1931.", "The footbridge was designed by Tomas Brandt."]
    found = reader_answers([DocumentReading(a, None, 10) for a in answers], [[], []], WordEmbedder(), False,
                           InputSettings(), texts, question)
    assert [f.span for f in found] == ["Ilse Marten", "Tomas Brandt"]


def test_a_word_of_the_question_the_answer_gives_again_is_part_of_the_answer():
    question = "What is the founding ideology of the Harrow Vale League?"
    answers = ["The founding ideology of the Harrow Vale League is Harrow Vale regionalism",
               "Harrow Vale League: founded on Harrow Vale regionalism, the League"]
    texts = ["The Harrow Vale League was founded on Harrow Vale regionalism."] * 2
    found = reader_answers([DocumentReading(a, None, 10) for a in answers], [[], []], WordEmbedder(), False,
                           InputSettings(), texts, question)
    assert [f.span for f in found] == ["Harrow Vale regionalism"] * 2


def test_a_whole_lifespan_read_for_a_birth_is_the_birth_year():
    texts = ["Ilse Varga (1712–1779) was a painter of the Harrow Vale school.",
             "The painter Ilse Varga was born in 1712 in Dunmore.", "Ilse Varga was born in 1715."]
    keys = _keys(("1712-1779", None), ("1712", None), ("1715", None), texts=texts,
                 question="When was Ilse Varga born?")
    assert keys[0] == keys[1] != keys[2]


def test_a_bare_number_is_not_a_quantity_in_other_units():
    texts = ["Sessions end after 1800 idle clicks.", "Sessions end after 30 minutes."]
    keys = _keys(("1800", None), ("30 minutes", None), texts=texts)  # 30 minutes is 1800 s
    assert keys[0] != keys[1]


def test_an_end_of_a_range_is_half_an_answer():
    texts = ["Input: 85 V to 264 V AC.", "Input range 85-264 VAC."]
    assert _keys(("264 V", None), ("85-264 VAC", None), texts=texts)[0] is None


def test_an_end_of_a_range_answers_a_question_that_asks_for_that_bound():
    texts = ["Rated for -20 °C to 60 °C.", "Maximum operating temperature: 60 °C.", "Runs from 0 °C to 45 °C."]
    keys = _keys(("60 °C", None), ("60 °C", None), ("45 °C", None), texts=texts,
                 question="What is the maximum operating temperature of the Kellin K2 logger?")
    assert keys[0] == keys[1] is not None and keys[2] not in (None, keys[0])


def test_two_things_of_one_name_never_share_a_key_because_a_value_matches():
    keys = _keys(("1993", "Quokka, an American football team"), ("1993", "Quokka, a video game console"),
                 ("1993", "Quokka, an American football team"))
    assert keys[0] == keys[2] != keys[1]


def test_two_things_of_one_name_that_answer_in_the_same_words_give_one_answer():
    keys = _keys(("Basketball", "Quokka, a club in Perth"), ("Basketball", "Quokka, a video game console"))
    assert keys[0] == keys[1] is not None


def test_detail_after_the_kind_is_not_part_of_the_kind():
    assert _name_and_kind("Quokka, a video game console, sold by Vell Corp of Osaka") == ("Quokka", "video game console")
    assert _name_and_kind("Quokka, a video game console") == ("Quokka", "video game console")
    assert _name_and_kind("Quokka") is None


def test_descriptions_of_one_thing_at_two_granularities_are_not_two_things():
    keys = _keys(("60 minutes", "FAQ"), ("1 hour", "Boreal Air international check-in"))
    assert keys[0] == keys[1]


def test_yes_no_stances_are_the_margins_sign_and_size():
    found = reader_answers([DocumentReading("yes", 1.5, 10), DocumentReading("no", -0.3, 10)], [[], []],
                           WordEmbedder(), True, InputSettings(), ["", ""])
    assert [f.key for f in found] == [YES, NO]
    assert found[0].strength == pytest.approx(1.5) and found[1].strength == pytest.approx(0.3)


def test_a_bare_number_equals_a_measured_value_of_its_magnitude():
    keys = _keys(("24 USD per user per month", None), ("24 per user/month", None), ("29 USD", None))
    assert keys[0] == keys[1] != keys[2]


def test_a_bare_number_equals_a_monthly_price_written_with_it():
    keys = _keys(("$24 a month", None), ("24", None), ("$29 a month", None))
    assert keys[0] == keys[1] != keys[2]


def test_one_name_that_says_its_own_kind_is_one_thing_whatever_kind_another_reading_gives():
    keys = _keys(("$24 a month", "Orbit Pro plan, a pro plan for small teams"),
                 ("$24 a month", "Orbit Pro plan, a subscription service"))
    assert keys[0] == keys[1]
    apart = _keys(("1993", "Kestrel, a football team"), ("1993", "Kestrel, a game console"))
    assert apart[0] != apart[1]  # the name says no kind: two things of one name


def test_names_without_kinds_are_never_split_even_when_they_share_a_word():
    keys = _keys(("90 days", "Master Services Agreement"), ("90 days", "Brightline Data Services LLC"))
    assert keys[0] == keys[1]


def test_free_answers_are_compared_without_the_questions_words():
    question = "In which town is the Kelso Tram Museum located?"
    answers = (("The Kelso Tram Museum is located in Brampton", None), ("The Kelso Tram Museum is located in Dunmore", None),
               ("Brampton", None))
    texts = [a for a, _ in answers]
    keys = _keys(*answers, texts=texts, question=question)
    assert keys[0] == keys[2] != keys[1]
    question = "What sport does Ilse Marten specialize in?"  # a sentence answer, the verb inflected
    answers = (("The sport Ilse Marten specializes in is handball", None), ("Handball", None), ("Rowing", None))
    keys = _keys(*answers, texts=[a for a, _ in answers], question=question)
    assert keys[0] == keys[1] != keys[2]


def test_an_answer_written_as_the_others_initials_is_the_same_answer():
    keys = _keys(("Democratic", None), ("D", None), ("Green", None))
    assert keys[0] == keys[1] != keys[2]


def test_an_amount_a_rate_is_written_with_is_stated_and_is_that_rates_answer():
    texts = ["The Team plan costs 1,200円 a month, billed monthly.", "Team plan: 1,200円/月.",
             "The Team plan is 1,500円 per month."]
    keys = _keys(("1,200円", None), ("1,200円/月", None), ("1,500円 per month", None), texts=texts)
    assert keys[0] is not None and keys[0] == keys[1] != keys[2]
    monthly, yearly = _keys(("$9 a month", None), ("$9 a year", None))
    assert monthly != yearly


def test_one_reading_of_what_a_page_is_about_that_went_astray_does_not_split_a_center():
    about = ["Ridgeline 2, a hiking tent", "Ridgeline 2, a hiking backpack", "Ridgeline 2, a hiking tent",
             "Ridgeline 2, a tent"]  # the backpack is like a hiking tent, unlike a tent
    keys = _keys(*[("1.5 kg", a) for a in about])
    assert len(set(keys)) == 1
    assert len(set(_keys(("1993", "Jaguar, a sports team"), ("1993", "Jaguar, a video game console")))) == 2


def test_a_bare_figure_of_a_kind_the_question_does_not_ask_for_is_no_answer():
    texts = ["Enrolment guide. Contents, 23. Appendix, 41.", "Enrolment closes on March 3, 2031.",
             "Enrolment for 2031 closes on 10 March 2031."]
    keys = _keys(("Contents, 23", None), ("March 3, 2031", None), ("10 March 2031", None), texts=texts,
                 question="When does enrolment for 2031 close?")
    assert keys[0] is None and None not in keys[1:] and keys[1] != keys[2]
    texts = ["Edmund Varn, d. 1619, knight of Arn.", "Varn, knight, d. 1661."]  # years the parser reads as numbers
    keys = _keys(("1619", None), ("1661", None), texts=texts, question="When did Edmund Varn die?")
    assert None not in keys and keys[0] != keys[1]


def test_a_number_inside_the_name_a_question_asks_for_tells_two_names_apart():
    texts = ["The first landing was made by the crew of Apollo 11.", "The first landing was made by Apollo 12's crew."]
    keys = _keys(("Apollo 11", None), ("Apollo 12", None), texts=texts, question="Who made the first landing?")
    assert None not in keys and keys[0] != keys[1]


def test_a_value_with_a_unit_or_form_of_its_own_answers_a_question_that_asks_for_another_kind():
    texts = ["Office hours: 14:00-16:00 on Tuesdays.", "Call the hotline on 400-555-0199."]
    assert _keys(("14:00-16:00", None), texts=texts[:1], question="When are the office hours?") == ["reader:0"]
    assert _keys(("400-555-0199", None), texts=texts[1:], question="How much is the hotline's number?") == ["reader:0"]


def test_a_short_answer_within_another_short_answer_is_the_same_answer():
    texts = ["Orla Brenn is a handball player from Cork.", "Brenn played handball.", "Brenn rowed for Cork."]
    keys = _keys(("Handball player", None), ("Handball", None), ("Rowing", None), texts=texts,
                 question="What sport is Orla Brenn associated with?")
    assert keys[0] == keys[1] != keys[2]


def test_a_short_answer_within_a_sentence_that_names_its_subject_is_not_the_same_answer():
    texts = ["The Kellin Institute stands in Harrow Vale.", "The Kellin Institute of Harrow Vale is in Dunmore."]
    keys = _keys(("Harrow Vale", None), ("The Kellin Institute of Harrow Vale is located in Dunmore", None),
                 texts=texts, question="Where is the KI located?")
    assert None not in keys and keys[0] != keys[1]


def test_a_sentence_that_closes_on_a_short_answer_gives_that_answer():
    texts = ["Dalby sat for the Harrow Union from 1921.", "Harrow Union member.", "Dalby, a Green."]
    keys = _keys(("A Tory by background, Dalby became a member of the Harrow Union", None), ("Harrow Union", None),
                 ("Greens", None), texts=texts, question="Which party did Dalby belong to?")
    assert None not in keys and keys[0] == keys[1] != keys[2]


def test_a_sentence_answer_that_goes_on_with_more_detail_is_the_same_answer():
    question = "How is the Dunmore Ledger printed?"
    short = "The Dunmore Ledger is printed weekly by the Harrow Vale Press"
    keys = _keys((short, None), (short + ", which bought it from its founders in 1990", None),
                 ("The Dunmore Ledger is printed daily by the Kellin Print Works", None), question=question)
    assert keys[0] == keys[1] != keys[2]


def test_a_sentence_that_names_a_short_answer_before_its_own_is_not_that_answer():
    texts = ["Harrow Union, then the Tories.", "Harrow Union member."]
    keys = _keys(("Dalby left the Harrow Union to join the Tory party", None), ("Harrow Union", None), texts=texts,
                 question="Which party did Dalby belong to?")
    assert None not in keys and keys[0] != keys[1]


def test_a_value_written_in_a_sentence_that_answers_with_words_is_a_detail_not_the_answer():
    texts = ["Glass Harbour is a 1981 Danish crime thriller.", "The genre of Glass Harbour: a crime thriller."]
    keys = _keys(("Glass Harbour is a 1981 Danish crime thriller", None), ("a crime thriller", None), texts=texts,
                 question='What is the genre of the film "Glass Harbour"?')
    assert keys[0] == keys[1] is not None


@pytest.mark.parametrize("a, b", [
    ("The First Carrow Valley Border Feud of Arn", "the Second Carrow Valley Border Feud of Arn"),
    ("King Edmund Aldric Varn of Arn III", "King Edmund Aldric Varn of Arn II"),
])
def test_free_answers_told_apart_by_their_numbers_are_two_answers(a, b):
    texts = [f"It ended {a}.", f"It ended {b}."]  # all but one of their words in common: near-equal text
    keys = _keys((a, None), (b, None), texts=texts, question="Which war did the treaty end?")
    assert None not in keys and keys[0] != keys[1]


def test_an_answer_that_only_repeats_what_the_question_asks_is_no_answer():
    question = "What type of vessel served on Route 9?"
    keys = _keys(("Vessel", None), ("Ferry", None), ("Type: ferry", None), question=question)
    assert keys[0] is None and keys[1] is not None


@pytest.mark.parametrize("question, answer", [
    ("Who is the hero of Tom Thumb?", "Tom Thumb"),  # a name the question gives may be the answer
    ("What was the profession of Ada Brill?", "Professor"),  # a stem in common is not the same word
    ("Is the Pro plan's seat sold monthly or yearly?", "yearly"),  # the question offers its own words
])
def test_an_answer_in_the_questions_names_or_choices_is_an_answer(question, answer):
    assert _keys((answer, None), question=question)[0] is not None


def test_a_value_in_a_sentence_that_answers_where_is_a_detail():
    texts = ["The Harrow Courier is printed weekly by Ann Lee, who bought it in 1990.",
             "The Harrow Courier is printed weekly by Ann Lee."]
    keys = _keys(("The Harrow Courier is printed weekly by Ann Lee, who bought it in 1990", None),
                 ("The Harrow Courier is printed weekly by Ann Lee", None), texts=texts,
                 question="Where is the Harrow Courier printed?")
    assert None not in keys and keys[0] == keys[1]


def test_a_year_is_stated_by_a_date_in_that_year():
    texts = ["Alder Crane (1530–1556) was a Kentish weaver.", "Alder Crane, born 4 May 1612, a weaver.",
             "Alder Crane was a weaver."]
    keys = _keys(("1530", None), ("1612", None), ("1530", None), texts=texts, question="When was Alder Crane born?")
    assert keys[0] is not None and keys[1] is not None and keys[0] != keys[1]
    assert keys[2] is None  # not stated by its own document


def test_a_year_the_question_names_is_no_answer_in_any_writing():
    texts = ["The 1912 is a rowing club founded on 3 June 1912.", "The 1912 is a rowing club."]
    keys = _keys(("The 1912 club", None), ("A rowing club", None), texts=texts, question='What is "The 1912"?')
    assert keys[0] is None and keys[1] is not None


@pytest.mark.parametrize("year", ["1555", "2031"])  # one the parser reads as a number, one as a date
def test_a_year_and_a_date_in_it_are_one_answer(year):
    texts = [f"Born in {year}.", f"Born on 6 July {year}.", "Born on 2 May 1577."]
    keys = _keys((year, None), (f"6 July {year}", None), ("2 May 1577", None), texts=texts,
                 question="When was Odo Brand born?")
    assert None not in keys and keys[0] == keys[1] != keys[2]


def test_a_value_read_from_a_column_the_question_leaves_out_stands_for_the_named_columns_value():
    table = "| Limit | Free | Team | Business |\n|---|---|---|---|\n| Storage per user | 2 GB | 20 GB | 100 GB |\n"
    texts = [table, "Team workspaces get 20 GB of storage for each user.", "On Team, storage is 20,480 MB a user."]
    keys = _keys(("100 GB", None), ("20 GB", None), ("20480 MB", None), texts=texts,
                 question="How much storage does each user get on the Team plan?")
    assert keys[0] == keys[1] == keys[2] is not None
    # without a plan named, the Business column answers as well as any other
    assert len(set(_keys(("100 GB", None), ("20 GB", None), texts=texts[:2],
                         question="How much storage does each user get?"))) == 2


def test_an_amount_measured_otherwise_than_the_question_names_is_no_answer():
    texts = ["Mount the Arlo unit on a wall rated for 40 °C; it runs on 12 V.", "The Arlo unit runs on 12 V DC."]
    question = "What supply voltage does the Arlo unit need?"
    assert _keys(("40 °C", None), ("12 V", None), texts=texts, question=question)[0] is None
    assert _keys(("12 V", None), ("12 V", None), texts=texts, question=question)[0] is not None


def test_a_figure_without_a_measure_answers_no_question_that_names_only_a_measure():
    texts = ["Wire the Kestrel PS-90 with 16-12 AWG cable; it accepts 100-240 VAC at 50/60 Hz.",
             "Kestrel PS-90 input: 100-240 VAC.", "Kestrel PS-90 input range 100-240 VAC, fused at 2 A."]
    question = "What is the input voltage range of the Kestrel PS-90?"
    keys = _keys(("16-12 AWG cable", None), ("100-240 VAC", None), ("100-240 VAC", None), texts=texts,
                 question=question)
    assert keys[0] is None and keys[1] == keys[2] is not None
    # a value with a form of its own still answers where a question's unit word is only a verb of it
    mails = ["Write to privacy@kestrel.example to request erasure.", "Erasure: privacy@kestrel.example."]
    assert None not in _keys(("privacy@kestrel.example", None), ("privacy@kestrel.example", None), texts=mails,
                             question="Which address should customers use to request erasure of their data?")


def test_an_amount_answers_no_question_that_asks_a_count():
    texts = ["Harrow Vale covers 421 km² and had 16,337 inhabitants in 2017.", "Harrow Vale: 16,337 people."]
    question = "What is the population of Harrow Vale?"
    assert _keys(("421 km²", None), ("16,337", None), texts=texts, question=question)[0] is None
    assert _keys(("16,337", None), ("16,337", None), texts=texts, question=question)[0] is not None


def test_a_span_of_years_its_page_states_answers_when_and_equal_spans_are_one_answer():
    question = "When did Marla Quint serve in the Harrow council?"
    texts = ["Marla Quint served in the Harrow council from 1900 to 1904.",
             "Quint sat in the Harrow council between 1900 and 1904, then retired.",
             "Marla Quint was elected to the Harrow council in 1954."]
    keys = _keys(("1900 to 1904", None), ("1900 to 1904", None), ("1954", None), texts=texts, question=question)
    assert keys[0] is not None and keys[0] == keys[1] != keys[2]
    # a span whose years the page does not both state is no answer
    assert _keys(("1900 to 1906", None), ("1954", None), texts=texts[::2], question=question)[0] is None


def _quotes(answers: list[str], texts: list[str], question: str) -> list[str | None]:
    found = reader_answers([DocumentReading(a, None, 10) for a in answers], [[] for _ in answers], WordEmbedder(),
                           False, InputSettings(), texts, question)
    return [f.claim.sentence.text if f and f.claim else None for f in found]


def test_an_answer_is_quoted_by_the_sentence_that_states_it_not_by_the_pages_title():
    texts = ["Kestrel 30 Tent: Specifications. Packed weight: the Kestrel 30 weighs 1.2 kg with its frame.",
             "Kestrel 30 Tent: Specifications. Our tests put the Kestrel 30 at 1,450 g in its bag."]
    quotes = _quotes(["1.2 kg", "1.45 kg"], texts, "How much does the Kestrel 30 weigh?")
    assert quotes == ["Packed weight: the Kestrel 30 weighs 1.2 kg with its frame.",
                      "Our tests put the Kestrel 30 at 1,450 g in its bag."]


def test_a_date_is_quoted_where_it_is_written_in_full_not_where_only_its_year_is():
    texts = ["Questions for spring 2026. When do entries close? Entries close on 2026-04-30, at noon.",
             "Notice for spring 2026. The entry deadline is moved to 15 April 2026."]
    question = "On which day do 2026 entries to the Harrow Vale prize close?"
    quotes = _quotes(["30 April 2026", "15 April 2026"], texts, question)
    assert quotes == ["Entries close on 2026-04-30, at noon.", "The entry deadline is moved to 15 April 2026."]


def test_an_answer_in_words_is_quoted_by_the_sentence_that_shares_its_words():
    texts = ["Harrow Vale Gazette. Founded by local printers. It is printed weekly by the Dunmore Press."]
    quotes = _quotes(["the Dunmore Press"], texts, "Who prints the Harrow Vale Gazette?")
    assert quotes == ["It is printed weekly by the Dunmore Press."]


def test_a_sentence_that_answers_a_measure_with_its_amounts_is_typed_by_them():
    texts = ["Velorin for adults: up to 8 tablets of 500 mg (4 g) in 24 hours, with at least 4 hours between doses.",
             "Adults should not exceed 4,000 mg of Velorin a day.", "Do not take more than 3,000 mg of Velorin a day."]
    answers = ("8 tablets of 500 mg (4 g) in 24 hours, with at least 4 hours between doses", None), \
        ("4,000 mg", None), ("3,000 mg", None)
    keys = _keys(*answers, texts=texts, question="What is the maximum daily dose of Velorin for an adult?")
    assert keys[0] == keys[1] != keys[2]


def test_an_answer_with_several_values_gives_the_one_its_center_shares():
    texts = ["Velorin for adults: up to 8 tablets of 500 mg (4 g) in 24 hours.", "Adults may take 4,000 mg of Velorin a day."]
    found = reader_answers([DocumentReading("8 tablets of 500 mg (4 g) in 24 hours", None, 10),
                            DocumentReading("4,000 mg", None, 10)], [[], []], WordEmbedder(), False, InputSettings(),
                           texts, "What is the maximum daily dose of Velorin for an adult?")
    assert found[0].key == found[1].key and found[0].span == "4 g"


def test_an_answer_with_a_count_and_an_amount_gives_the_amount_unless_the_question_asks_how_many():
    def span(question: str) -> str:
        found = reader_answers([DocumentReading("6 sachets (3 g)", None, 10)], [[]], WordEmbedder(), False,
                               InputSettings(), ["One dose of Brevol for adults is 6 sachets (3 g)."], question)
        return found[0].span

    assert span("What is one dose of Brevol for adults?") == "3 g"
    assert span("How many sachets make one dose of Brevol for adults?") == "6"


def test_a_time_read_without_its_part_of_the_day_is_the_one_its_document_writes():
    texts = ["Help desk: Tuesdays 2:00-4:00 pm in room 12.", "Help desk hours: Tuesday 14:00–16:00.",
             "Help desk: Tuesdays 2:00–4:00 am, for the night shift.", "Help desk: Thursdays 10:00–12:00."]
    question = "When are the help desk hours?"
    keys = _keys(("2:00–4:00", None), ("14:00–16:00", None), ("2:00–4:00", None), ("10:00–12:00", None),
                 texts=texts, question=question)
    assert keys[0] == keys[1] and len({keys[1], keys[2], keys[3]}) == 3  # the page's own "am" stays the night's


def test_an_amount_read_from_the_clause_the_question_does_not_ask_is_the_one_it_asks():
    texts = ["Cabin bags may weigh up to 7 kg in Economy and 14 kg in Business.", "Economy cabin bags: 7 kg."]
    question = "How much may a cabin bag weigh in Economy?"
    assert len(set(_keys(("14 kg", None), ("7 kg", None), texts=texts, question=question))) == 1


def test_an_amount_keeps_its_condition_written_before_it_and_the_question_states():
    texts = ["With a member card, 20% off; without a card, 5% off.", "Members with a card save 20%."]
    keys = _keys(("20%", None), ("20%", None), texts=texts, question="What discount do members with a card get?")
    assert keys[0] == keys[1] is not None
    tiers = ["After 1 year of service, 5 days of leave; after 10 years, 10 days.", "One year of service earns 5 days."]
    keys = _keys(("5 days", None), ("5 days", None), texts=tiers, question="How many days of leave after 1 year of service?")
    assert keys[0] == keys[1] is not None


@pytest.mark.parametrize("a, b", [
    ("the Democratic Party", "the Republican Party"),
    ("North Carolina", "South Carolina"),
    ("Kim Jong-un", "Kim Jong-il"),
    ("Manchester United", "Manchester City"),
])
def test_two_names_told_apart_by_one_word_are_two_answers(a, b):
    texts = [f"The prize went to {a}.", f"The prize went to {b}."]  # embeddings put such names close
    keys = _keys((a, None), (b, None), texts=texts, question="Who won the Harrow prize in 2031?")
    assert None not in keys and keys[0] != keys[1]


def test_a_misread_page_takes_the_value_its_text_states_and_a_reading_in_another_role_does_not():

    def typed(key, text):
        v = extract_values(text)[0]
        return DocAnswer(key, v.span, None, v, 1.0)

    texts = ["The depot opens at 9:00 and closes at 18:00 on weekdays.",
             "Depot hours: 9:00 to 17:30 on weekdays.",
             "Weekday hours end at 18:00; the yard closes at 16:00."]
    readings = [DocumentReading(a, None, 10) for a in ("21:00", "17:30", "16:00")]
    found = [None, typed("reader:0", "17:30"), None]  # the first misread, the third read the yard's hours
    static = [typed("time:18:00", "18:00"), typed("time:17:30", "17:30"), typed("time:18:00", "18:00")]
    out = misread_by_text(found, static, readings, texts, [False, False, False])
    assert out[0].span == "18:00" and out[0].key not in ("reader:0", None)
    assert out[1] is found[1] and out[2] is None  # "16:00" is stated, in another role: no answer


def test_a_misread_page_joins_the_center_that_gives_its_texts_value():

    v = extract_values("EUR 180")[0]
    found = [DocAnswer("reader:0", "EUR 180", None, v, 1.0), None]
    static = [None, DocAnswer("money:EUR:180", "180 euros", None, extract_values("180 euros")[0], 1.0)]
    readings = [DocumentReading("EUR 180", None, 10), DocumentReading("EUR 150", None, 10)]
    out = misread_by_text(found, static, readings, ["EUR 180 a night.", "Up to 180 euros a night."], [False, False])
    assert out[1].key == "reader:0"


def test_a_reading_that_miscopies_one_digit_of_its_pages_value_takes_that_value():
    texts = ["Ilse Varga was born on 25 April 1885 in Dunmore, where her father had settled in 1848.",
             "The painter Ilse Varga (born 1885) trained in Harrow Vale.",
             "Ilse Varga's teachers were born in 1575, 1605 and 1615."]
    read_1885 = DocAnswer("reader:0", "1885", None, extract_values("1885")[0], 1.0)
    static = [DocAnswer("date:1848", "1848", None, extract_values("in 1848")[0], 1.0), None,
              DocAnswer("date:1575", "1575", None, extract_values("in 1575")[0], 1.0)]
    readings = [DocumentReading(a, None, 10) for a in ("1985", "1885", "1675")]
    out = misread_by_text([None, read_1885, None], static, readings, texts, [False, False, False])
    # "1985" is 1885 with one digit miscopied: the page's 1885, the other page's key
    assert out[0].key == "reader:0" and out[0].value.key.startswith("date:1885") and "25 April 1885" in out[0].claim.sentence.text
    # "1675" is one digit from three of its page's years: no one of them, the text rules' value
    assert out[2].value.key == "date:1575" and out[2].key == "reader:text:2"
