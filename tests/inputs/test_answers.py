"""Answers from claims, on hand-made claims (no embedder)."""

from dataclasses import replace

from diagnose.inputs.answers import (
    NO, YES, DocAnswer, agree, backed_answers, disagree, edited_answers, name_answers, shared_keys, stance_answers,
    unopposed_answers, value_answers,
)
from diagnose.inputs.claims import Claim
from diagnose.inputs.conflict import PairEvidence
from diagnose.text.lifespans import asked_life_event
from diagnose.text.questions import asked_dimensions, asked_value_kinds
from diagnose.text.sentences import Sentence, content_tokens
from diagnose.text.values import extract_values


def _claim(doc, text, score=1.0, polarity=1):
    return Claim(doc, Sentence(0, text), score, tuple(extract_values(text)), polarity)


def test_the_answer_class_is_the_one_the_documents_share_and_decoys_lose_to_measured_values():
    claims = [
        [_claim(0, "Primary caregivers get 16 weeks of paid leave; the policy started in 2019.")],
        [_claim(1, "Paid leave: sixteen weeks for primary caregivers, 6 weeks for others.")],
        [_claim(2, "You get 12 weeks of paid leave.")],
    ]
    found = value_answers(claims, None, ["paid", "leave"], 0.2, 0.05, dimensions=frozenset({"[time]"}))
    assert [a.span for a in found] == ["16 weeks", "sixteen weeks", "12 weeks"]
    assert agree(found[0], found[1]) and disagree(found[0], found[2])


def test_a_value_the_question_itself_states_answers_nothing():
    question = "How much does the Larkspur 30 kettle weigh?"
    claims = [  # the name stands in the best claim, the weight in the next one
        [_claim(0, "The Larkspur 30 kettle weighs little."), _claim(0, "It is 1.2 kg.", 0.6)],
        [_claim(1, "Larkspur 30 kettle: weighs little."), _claim(1, "Its mass: 1.4 kg.", 0.6)],
    ]
    amounts = frozenset({"number", "quantity"})
    plain = value_answers(claims, amounts, ["weigh"], 0.2, 0.05)
    assert [a.span for a in plain] == ["30", "30"]  # the name's number is the shared class
    found = value_answers(claims, amounts, ["weigh"], 0.2, 0.05, given=tuple(extract_values(question)))
    assert [a.span for a in found] == ["1.2 kg", "1.4 kg"] and disagree(found[0], found[1])


def test_a_question_that_asks_for_no_value_gets_none():
    claims = [[_claim(0, "Founded in 1990 by Ada Park.")]]
    assert value_answers(claims, frozenset(), ["found"], 0.2, 0.05) == [None]


def test_without_a_question_word_a_value_must_stand_near_the_question_words():
    claims = [[_claim(0, "The museum opened in 1990 and its roof is 40 m high.")]]
    found = value_answers(claims, None, ["roof", "high"], 0.2, 0.05, window=12)
    assert found[0].span == "40 m"


def test_the_number_of_a_list_item_or_table_row_does_not_answer():
    predicate = content_tokens("What are the stages of onboarding a supplier?")
    claims = [
        [_claim(0, "3 | Sign the supplier onboarding agreement | pending")],
        [_claim(1, "2. Check the supplier's onboarding documents.")],
        [_claim(2, "- 4) Supplier onboarding stages close.")],
    ]
    assert value_answers(claims, None, predicate, 0.2, 0.05) == [None] * 3


def test_a_number_beside_the_question_words_that_counts_nothing_still_answers():
    claims = [[_claim(0, "For supplier onboarding the minimum rating is 4.")],
              [_claim(1, "2024 | supplier onboarding rating | 3")]]
    found = value_answers(claims, None, ["minim", "ratin", "suppl"], 0.2, 0.05)
    assert [a.span if a else None for a in found] == ["4", "3"]


def test_stances_vote_by_polarity_and_relevance():
    claims = [[_claim(0, "Interns are eligible.", 0.9, 1)], [_claim(1, "Interns are not eligible.", 0.8, -1)],
              [_claim(2, "Unrelated.", 0.1, 1)]]
    found = stance_answers(claims, 0.2)
    assert [a.key if a else None for a in found] == [YES, NO, None]


def test_equal_values_share_the_more_precise_key():
    y = extract_values("in 1993")[0]
    d = extract_values("on 24 January 1993")[0]
    found = shared_keys([DocAnswer(y.key, y.span, None, y, 1.0), DocAnswer(d.key, d.span, None, d, 1.0)])
    assert found[0].key == found[1].key == d.key


def test_an_edited_copy_answers_with_the_value_it_changed():
    a = extract_values("opens at 9:00 and costs $12")[1]
    pair = PairEvidence(0, 1, "value_mismatch", (("$12", "$15"),))
    found = edited_answers([pair], [DocAnswer(a.key, a.span, None, a, 1.0), None])
    assert found[0].span == "$12" and found[1].span == "$15"


def test_names_answer_name_questions_and_never_contradict():
    claims = [[_claim(0, "The album Blue Hour is by singer Mara Holt, produced by Tom Kessler and Mara Holt.")],
              [_claim(1, "Blue Hour is a record by the band Iron Lantern.")]]
    found = name_answers(claims, "Who recorded Blue Hour?", 0.2)
    assert [a.span for a in found] == ["Mara Holt", "Iron Lantern"]
    assert not disagree(found[0], found[1])


def test_a_name_that_opens_its_sentence_answers_before_the_names_after_it():
    question = "Who won the 2031 Coastal Rowing Cup?"
    claims = [[_claim(0, "Norvik won the 2031 Coastal Rowing Cup, beating Caldera by two lengths at Port Elm.")],
              [_claim(1, "Caldera won the 2031 Coastal Rowing Cup after Norvik capsized at Port Elm.")],
              [_claim(2, "The 2031 final ended with Norvik ahead of Caldera, the holders.")]]
    found = name_answers(claims, question, 0.2)
    assert [a.span for a in found] == ["Norvik", "Caldera", "Norvik"]


def test_the_subject_written_in_full_is_no_answer():
    question = "Where was Ilse Marten born?"
    claims = [[_claim(0, "Ilse Katharina Marten was born in 1901 in Graz.")],
              [_claim(1, "Marten, born in Linz, moved to Vienna in 1920.")]]
    predicate = content_tokens("Where was born?")
    assert [a.span for a in name_answers(claims, question, 0.2, predicate)] == ["Graz", "Linz"]


def test_the_name_beside_the_question_words_answers_over_one_more_documents_state():
    question = "Where was the composer Ilse Marten born?"
    claims = [[_claim(0, "Ilse Marten was born in Graz and studied composition in Leipzig.")],
              [_claim(1, "The composer Ilse Marten, born in Graz, taught in Leipzig.")],
              [_claim(2, "Ilse Marten was born in Linz, and she later moved to Graz.")]]
    predicate = content_tokens("Where was the composer born?")
    assert [a.span for a in name_answers(claims, question, 0.2)] == ["Graz", "Graz", "Graz"]
    found = name_answers(claims, question, 0.2, predicate)
    assert [a.span for a in found] == ["Graz", "Graz", "Linz"]


def test_a_value_restated_in_brackets_answers_as_the_value_it_restates():
    claims = [[_claim(0, "The notice period for leaving tenants is 4 weeks.")],
              [_claim(1, "Leaving tenants give a notice period of one month (four weeks).")],
              [_claim(2, "The notice period for leaving tenants is two weeks.")]]
    found = value_answers(claims, None, ["notic", "perio", "tenan"], 0.2, 0.05, window=200,
                          dimensions=frozenset({"[time]"}))
    assert [a.span for a in found] == ["4 weeks", "four weeks", "two weeks"]
    assert agree(found[0], found[1]) and disagree(found[1], found[2])


def test_a_value_labelled_by_a_word_of_the_question_answers_over_the_other_values_of_its_list():
    from diagnose.text.questions import predicate_text, subject_text
    question = "When does the Kestrel Lane depot open on Sundays?"
    subject = tuple(content_tokens(subject_text(question)))
    texts = ["The Kestrel Lane depot is open weekdays 7 am to 5 pm and Sundays 10 am to 2 pm.",
             "Kestrel Lane depot hours: Mon-Fri 7 am to 5 pm; Sunday: 10 am to 2 pm.",
             "The Kestrel Lane depot opens 8 am to 12 pm on Sundays."]
    claims = [[replace(_claim(i, t), subject=subject)] for i, t in enumerate(texts)]
    found = value_answers(claims, None, content_tokens(predicate_text(question)), 0.2, 0.05, window=200)
    assert [a.span.rstrip(".") for a in found] == ["10 am to 2 pm", "10 am to 2 pm", "8 am to 12 pm"]


def test_a_year_in_the_question_does_not_hide_the_days_it_covers():
    claims = [[_claim(0, "Fiscal 2024 ended on June 30, 2024.")], [_claim(1, "The 2024 fiscal year closed 2024-06-30.")]]
    given = tuple(extract_values("When did fiscal 2024 end?"))
    found = value_answers(claims, frozenset({"date"}), ["end"], 0.2, 0.05, given=given)
    assert [a.span for a in found] == ["June 30, 2024", "2024-06-30"]


def test_a_unit_of_a_condition_the_question_states_is_not_what_it_asks():
    question = "What is the most a guest may spend in 7 days at the Harbour cafe?"
    claims = [[_claim(0, "Guests staying 3 days or more may spend up to $120 in 7 days.")],
              [_claim(1, "Within 7 days a guest of 2 nights spends at most $90.")],
              [_claim(2, "Most guests spend 5 days here.")]]
    found = value_answers(claims, None, ["spend", "most"], 0.2, 0.05, given=tuple(extract_values(question)))
    assert [a.span if a else None for a in found] == ["$120", "$90", None] and disagree(found[0], found[1])


def test_a_year_answers_only_a_question_that_asks_when():
    claims = [[_claim(0, "In 1986 the club's first team played basketball and won 12 games.")]]
    assert value_answers(claims, None, ["club", "games"], 0.2, 0.05)[0].span == "12"
    assert value_answers(claims, frozenset({"date"}), ["club"], 0.2, 0.05)[0].span == "1986"


def test_a_name_other_documents_also_give_outweighs_a_page_heading():
    claims = [[_claim(0, "Archive Index: the song Low Tide, written by Ana Reyes in 1999.")],
              [_claim(1, "Low Tide is a song by Ana Reyes.")]]
    found = name_answers(claims, "Who wrote Low Tide?", 0.2)
    assert [a.span for a in found] == ["Ana Reyes", "Ana Reyes"]


def test_the_question_words_beside_a_value_tell_its_role():
    claims = [[_claim(0, "Boarding opens 40 minutes early; the gate then closes 15 minutes before departure.")]]
    found = value_answers(claims, None, content_tokens("When does boarding close before departure"), 0.2, 0.05)
    assert found[0].span == "15 minutes"


def test_a_rate_is_answered_by_an_amount_per_time_not_by_a_share_beside_it():
    question = "What is the rate limit of the Kellin API?"
    claims = [[_claim(0, "The Kellin API has 99.9% uptime and a rate limit of 600 requests per minute.")]]
    found = value_answers(claims, asked_value_kinds(question), content_tokens("rate limit"), 0.2, 0.05,
                          dimensions=asked_dimensions(question))
    assert found[0].span == "600 requests per minute"


def test_a_lone_value_yields_to_the_shared_one_its_document_also_states():
    texts = ["The desk closes 1 hour before departure.", "Check-in closes 60 minutes before departure.",
             "Check-in opens 24 hours before departure and closes one hour before it.",
             "The gate closes 20 minutes before departure."]
    found = [DocAnswer(v.key, v.span, None, v, 1.0) for v in
             (extract_values(texts[0])[0], extract_values(texts[1])[0], extract_values(texts[2])[0], extract_values(texts[3])[0])]
    out = backed_answers(shared_keys(found), texts, [True] * 4)
    assert out[2].span == "one hour" and agree(out[2], out[0])
    assert out[3].span == "20 minutes" and disagree(out[3], out[0])  # it states nothing else: it keeps its own


def test_a_value_its_sentence_only_refers_to_does_not_take_the_shared_one():
    texts = ["Revised figures: the plant's output in 2021 was 310 tonnes, against 290 tonnes in the first estimate.",
             "Output in 2021: 290 tonnes.", "The plant produced 290 tonnes in 2021."]
    predicate = content_tokens("plant output 2021")
    firsts = [next(v for v in extract_values(t) if v.kind == "quantity") for t in texts]
    found = [DocAnswer(v.key, v.span, _claim(i, t), v, 1.0) for i, (t, v) in enumerate(zip(texts, firsts))]
    assert [a.span for a in found] == ["310 tonnes", "290 tonnes", "290 tonnes"]
    out = backed_answers(found, texts, [True] * 3, predicate)
    assert out[0].span == "310 tonnes" and disagree(out[0], out[1])
    # without the question's words the reference cannot be told from a role error: it yields
    assert backed_answers(found, texts, [True] * 3)[0].span == "290 tonnes"


def test_a_lone_value_every_other_document_also_states_answers_nothing():
    texts = ["Take it every 8 hours for 7 days.", "Dose: one tablet every eight hours, for 7 days.",
             "Course: 7 days."]
    found = [DocAnswer(v.key, v.span, None, v, 1.0) for v in
             (extract_values(texts[0])[0], extract_values(texts[1])[0], extract_values(texts[2])[0])]
    assert [a.span for a in found] == ["8 hours", "eight hours", "7 days"]
    out = unopposed_answers(shared_keys(found), texts, [True] * 3)
    assert out[2] is None and agree(out[0], out[1])
    # a value that one of the others does not state is a contradiction: it stays
    texts[1] = "Dose: one tablet every eight hours."
    assert unopposed_answers(shared_keys(found), texts, [True] * 3)[2].span == "7 days"


def test_a_table_cell_is_read_by_its_column_not_its_neighbour():
    table = ("Model | Output | Input (AC)\n"
             "PSU-100-12 | 12 V / 8.5 A | 100 ~ 240 Vac\n"
             "PSU-300-12 | 12 V / 25 A | 90 ~ 264 Vac\n")
    row = "PSU-300-12 | 12 V / 25 A | 90 ~ 264 Vac"
    claim = Claim(0, Sentence(table.index(row), row), 1.0, tuple(extract_values(row)), 1)
    predicate = content_tokens("What input voltage does the PSU-300-12 accept")
    by_column = value_answers([[claim]], None, predicate, 0.2, 0.05, texts=[table])
    assert by_column[0].span == "90 ~ 264 Vac"
    # read by the words around it instead, the output cell beside the row label wins
    assert value_answers([[claim]], None, predicate, 0.2, 0.05)[0].span != "90 ~ 264 Vac"


def test_another_row_of_a_table_does_not_back_a_rows_value():
    table = "Carrier | Cabin bag\nLinea | 10 kg max.\nOrbis | 8 kg max.\n"
    row = "Linea | 10 kg max."
    claim = Claim(0, Sentence(table.index(row), row), 1.0, tuple(extract_values(row)), 1)
    texts = [table, "Linea cabin bags: 8 kg.", "Linea allows 8 kg in the cabin."]
    values = [extract_values(row)[0], extract_values(texts[1])[0], extract_values(texts[2])[0]]
    found = [DocAnswer(v.key, v.span, claim if i == 0 else None, v, 1.0) for i, v in enumerate(values)]
    out = backed_answers(found, texts, [True] * 3, content_tokens("Linea cabin bag weight"))
    assert out[0].span == "10 kg" and disagree(out[0], out[1])
    # the same 8 kg written in the row's own line would back it (a role error)
    texts[0] = table.replace("10 kg max.", "10 kg max. (8 kg from May)")
    row = "Linea | 10 kg max. (8 kg from May)"
    claim = Claim(0, Sentence(texts[0].index(row), row), 1.0, tuple(extract_values(row)), 1)
    found[0] = DocAnswer(values[0].key, values[0].span, claim, extract_values(row)[0], 1.0)
    assert backed_answers(found, texts, [True] * 3, content_tokens("Linea cabin bag weight"))[0].span == "8 kg"


def test_a_daily_amount_is_answered_by_rates_only_and_equal_rates_agree():
    question = "What is the maximum daily dose of Velorin for adults?"
    claims = [
        [_claim(0, "Take one 500 mg tablet every 4 to 6 hours; adults may take up to 4 g a day.")],
        [_claim(1, "Not for children under 16 years. The maximum is 4,000 mg per day; a single dose is 1 g.")],
    ]
    from diagnose.text.questions import asked_dimensions
    found = value_answers(claims, None, content_tokens(question), 0.2, 0.05, window=200,
                          dimensions=asked_dimensions(question))
    assert [a.span for a in found] == ["4 g a day", "4,000 mg per day"] and agree(found[0], found[1])


def test_a_count_of_the_things_asked_for_is_no_answer():
    from diagnose.text.roles import listed_things
    question = "What are the steps to renew a badge?"
    claims = [[_claim(0, "Renewing a badge is a five-step process: apply, wait, collect.")],
              [_claim(1, "Badge renewal: do not swap the last two steps.")]]
    predicate = content_tokens(question)
    listed = listed_things(question)
    assert value_answers(claims, None, predicate, 0.2, 0.05, window=200, listed=listed) == [None, None]
    counted = value_answers(claims, None, predicate, 0.2, 0.05, window=200)  # "how many steps": nothing listed
    assert [a.span for a in counted] == ["five", "two"]


def test_an_amount_beside_a_count_does_not_answer_a_question_that_asks_the_count():
    question = "What is the population of Harrow Vale?"
    claims = [[_claim(0, "Harrow Vale covers 421 km² and had 16,337 inhabitants in 2017.")]]
    predicate = content_tokens(question)
    found = value_answers(claims, None, predicate, 0.2, 0.05, window=200, dimensions=asked_dimensions(question))
    assert [a.span for a in found] == ["16,337"]


def test_a_number_that_counts_what_the_question_asks_to_count_beats_another_number_of_its_claim():
    from diagnose.text.roles import counted_things
    question = "How many people lost their homes in the Tarn valley flood?"
    claims = [[_claim(0, "The Tarn valley flood, a level 4 flood, left about 900 people without homes.")],
              [_claim(1, "A flood crest of 3.1 cost 1,400 people their homes in the Tarn valley.")]]
    predicate = content_tokens(question)
    plain = value_answers(claims, None, predicate, 0.2, 0.05, window=200, dimensions=asked_dimensions(question))
    assert plain[1].span == "3.1"  # first, and as near the question's words
    found = value_answers(claims, None, predicate, 0.2, 0.05, window=200, dimensions=asked_dimensions(question),
                          counted=counted_things(question))
    assert [a.span for a in found] == ["900", "1,400"] and disagree(found[0], found[1])


def test_a_part_counts_the_things_asked_for_and_its_whole_does_not():
    from diagnose.text.roles import counted_things
    question = "How many seats did the Green party win?"
    claims = [[_claim(0, "The Greens won 41 of the 120 seats in the assembly.")],
              [_claim(1, "The Green party took 38 out of 120 seats.")]]
    found = value_answers(claims, None, content_tokens(question), 0.2, 0.05, window=200,
                          dimensions=asked_dimensions(question), counted=counted_things(question))
    assert [a.span for a in found] == ["41", "38"] and disagree(found[0], found[1])


def test_a_measure_stated_by_its_adjective_answers_the_question_of_its_noun():
    question = "What is the height of the Marrow Hill mast?"
    claims = [[_claim(0, "Standing 212 m high, it was finished in 1971.")]]
    found = value_answers(claims, None, content_tokens(question), 0.2, 0.05, window=20,
                          dimensions=asked_dimensions(question))
    assert [a.span for a in found] == ["212 m"]


def test_a_count_of_people_answers_a_population_question_without_its_words_beside_it():
    from diagnose.text.questions import predicate_text
    from diagnose.text.roles import counted_things
    question = "What is the population of Harrow Vale?"
    claims = [[_claim(0, "In 2017 Harrow Vale, a parish of 12 farms, had 16,337 inhabitants.")]]
    predicate = content_tokens(predicate_text(question))
    assert value_answers(claims, None, predicate, 0.2, 0.05, window=20) == [None]  # "popul" stands nowhere
    found = value_answers(claims, None, predicate, 0.2, 0.05, window=20, counted=counted_things(question))
    assert [a.span for a in found] == ["16,337"]


def test_a_list_question_is_answered_by_no_count_and_no_name():
    from diagnose.inputs.settings import InputSettings
    from diagnose.inputs.stage import _static_answers
    question = "What are the steps to renew a badge?"
    texts = ["Badge renewal is a five-step process run by Keystone Security.",
             "Renew a badge in two steps at the Keystone Security desk."]
    claims = [[_claim(i, t)] for i, t in enumerate(texts)]
    found = _static_answers(question, content_tokens(question), claims, texts, False, InputSettings())
    assert found == [None, None]


PLANS = ("Plans\n| | Basic | Pro | Enterprise |\n|---|---|---|---|\n"
         "| Price per month | $9 | $19 | $49 |\n| Seats | 1 seat | 5 seats | 50 seats |\n")


def _row_claim(doc, table, row, subject):
    return Claim(doc, Sentence(table.index(row), row), 1.0, tuple(extract_values(row)), 1, subject)


def test_a_cell_answers_in_its_labels_role_from_the_column_its_subject_names():
    from diagnose.text.questions import asked_dimensions, asked_value_kinds, predicate_text, subject_text
    question = "How much does the Pro plan cost per month?"
    subject = tuple(content_tokens(subject_text(question)))
    sentence = "The Pro plan costs $29 per month and includes 5 seats."
    claims = [[_row_claim(0, PLANS, "| Price per month | $9 | $19 | $49 |", subject),
               _row_claim(0, PLANS, "| Seats | 1 seat | 5 seats | 50 seats |", subject)],
              [Claim(1, Sentence(0, sentence), 1.0, tuple(extract_values(sentence)), 1, subject)]]
    found = value_answers(claims, asked_value_kinds(question), content_tokens(predicate_text(question)), 0.2, 0.05,
                          dimensions=asked_dimensions(question), texts=[PLANS, sentence])
    assert [a.span for a in found] == ["$19", "$29 per month"] and disagree(found[0], found[1])
    # the Basic plan's $9 is the one column its subject names
    basic = [[replace(c, subject=("basic",)) for c in claims[0]]]
    assert value_answers(basic, asked_value_kinds(question), [], 0.2, 0.05, texts=[PLANS])[0].span == "$9"


def test_a_cell_under_a_price_per_user_per_month_is_that_rate():
    table = ("| Plan | Price per user per month |\n|---|---|\n| Solo | $4 |\n| Crew | $11 |\n")
    texts = [table, "The Crew plan costs $132 per user per year."]
    question = "How much does the Crew plan cost per user per month?"
    subject = ("crew",)
    claims = [[_row_claim(0, table, "| Crew | $11 |", subject)],
              [replace(_claim(1, texts[1]), subject=subject)]]
    found = value_answers(claims, None, ["cost", "user", "month"], 0.2, 0.05, window=200, texts=texts,
                          dimensions=asked_dimensions(question))
    assert [a.value.key for a in found] == ["money:USD/user/year:132"] * 2 and agree(found[0], found[1])


def test_a_chinese_question_names_its_column_by_its_latin_name():
    from diagnose.text.questions import asked_dimensions, subject_text
    question = "Pro套餐每月多少钱？"
    table = "套餐 | Basic | Pro\n每月价格 | 9美元 | 19美元\n"
    subject = tuple(content_tokens(subject_text(question)))
    claims = [[_row_claim(0, table, "每月价格 | 9美元 | 19美元", subject)]]
    found = value_answers(claims, None, content_tokens(question), 0.2, 0.05,
                          dimensions=asked_dimensions(question), texts=[table])
    assert found[0].span == "19美元" and found[0].value.dimension == "USD/year"


def test_a_japanese_monthly_fee_in_a_table_and_in_a_sentence_are_one_kind_of_amount():
    from diagnose.text.questions import asked_dimensions, subject_text
    question = "Proプランの月額料金はいくらですか？"
    table = "プラン | Basic | Pro\n月額料金 | 900円 | 1,900円\n"
    sentence = "Proプランの料金は月額2,900円です。"
    subject = tuple(content_tokens(subject_text(question)))
    claims = [[_row_claim(0, table, "月額料金 | 900円 | 1,900円", subject)],
              [Claim(1, Sentence(0, sentence), 1.0, tuple(extract_values(sentence)), 1, subject)]]
    found = value_answers(claims, None, content_tokens(question), 0.2, 0.05,
                          dimensions=asked_dimensions(question), texts=[table, sentence])
    assert [a.span for a in found] == ["1,900円", "2,900円"] and disagree(found[0], found[1])


def test_a_question_that_asks_how_long_in_french_is_answered_by_spans_of_time():
    question = "Combien de temps dure la garantie du Velo X ?"
    claims = [[_claim(0, "La garantie du Velo X dure 2 ans à compter de l'achat.")],
              [_claim(1, "Le Velo X est garanti 24 mois, pièces et main-d'œuvre.")],
              [_claim(2, "La garantie du Velo X dure désormais 3 ans.")]]
    found = value_answers(claims, asked_value_kinds(question), content_tokens(question), 0.2, 0.05, window=200,
                          dimensions=asked_dimensions(question))
    assert [a.span for a in found] == ["2 ans", "24 mois", "3 ans"]
    assert agree(found[0], found[1]) and not agree(found[0], found[2])


def test_asked_when_someone_died_the_birth_that_opens_their_lifespan_is_no_answer():
    question = "When did Ada Morrow die?"
    claims = [[_claim(0, "Ada Morrow (3 May 1761 – 9 October 1822) was a Welsh engraver.")],
              [_claim(1, "Ada Morrow (1761–1822) engraved maps for the Admiralty.")]]
    found = value_answers(claims, frozenset({"date"}), ["die"], 0.2, 0.05, life_event=asked_life_event(question))
    assert [a.span for a in found] == ["9 October 1822", "1822"] and agree(found[0], found[1])
    born = value_answers(claims, frozenset({"date"}), ["born"], 0.2, 0.05,
                         life_event=asked_life_event("When was Ada Morrow born?"))
    assert [a.span for a in born] == ["3 May 1761", "1761"]
