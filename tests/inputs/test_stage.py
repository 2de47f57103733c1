"""The input stage end to end, on hand-made cases of each claim type (English and Chinese)."""

import math

import numpy as np
import pytest

from diagnose.case import Case, Document
from diagnose.analysis import InputAnalysis
from diagnose.inputs import analyze_inputs
from diagnose.inputs.settings import InputSettings

S = InputSettings()
TOWER = "The Harbor Tower in Porto Lindo, finished in 1988, rises {} metres above the quay and has 31 floors."
TOWER_OTHER = "Completed in 1988, Porto Lindo's Harbor Tower is {} m tall; its 31 floors hold offices and a hotel."
OFF_TOPIC = ("Preheat the oven and whisk the eggs with sugar until pale, then fold in the flour "
             "gently and bake the sponge cake for twenty minutes.")


def _case(question, *texts, **kw):
    return Case(id="t", question=question,
                documents=[Document(id=f"d{i}", text=t) for i, t in enumerate(texts)], **kw)


def _check_contract(analysis: InputAnalysis, case: Case):
    rep = analysis.report
    in_centers = [d for c in rep.gravity_centers for d in c.documents]
    assert len(in_centers) == len(set(in_centers))
    assert set(in_centers).isdisjoint(rep.noise_documents)
    assert sorted(in_centers + rep.noise_documents) == sorted(d.id for d in case.documents)
    if rep.gravity_centers:
        assert abs(sum(c.mass for c in rep.gravity_centers) - 1.0) < 1e-4
    assert 0.0 <= rep.conflict.score <= 1.0
    assert rep.conflict.detected == (rep.conflict.state == "conflict")
    assert rep.conflict.probability == rep.conflict.score
    assert [v.id for v in rep.documents] == [d.id for d in case.documents]
    n = len(case.documents)
    assert analysis.doc_embeddings.shape[0] == n and analysis.doc_embeddings.dtype == np.float32
    assert set(analysis.center_answers) == {c.id for c in rep.gravity_centers}
    assert rep.tier == "static"


def _centers(rep):
    return sorted(sorted(c.documents) for c in rep.gravity_centers)


def test_stage_with_a_fake_embedder_is_consistent_and_deterministic(hash_embedder):
    case = _case("How tall is the Harbor Tower?", TOWER.format(142), TOWER.format(97), TOWER_OTHER.format(142))
    first = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()))
    second = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()))
    _check_contract(first, case)
    assert first.report == second.report
    assert first.report.documents[0].tokens == len(TOWER.format(142).split())


def test_empty_case(hash_embedder):
    analysis = analyze_inputs(_case("How tall is the Harbor Tower?"), hash_embedder, S)
    assert analysis.report.gravity_centers == [] and not analysis.report.conflict.detected


def test_instruction_conflicts_and_prompt_facts(hash_embedder):
    text = TOWER.format(142)
    case = _case("How tall is the Harbor Tower?", text, system="Be brief.",
                 template="Explain in detail. {documents} {question}")
    prompt = f"Explain in detail. {text} How tall is the Harbor Tower?"
    rep = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()),
                         prompt=prompt, context_window=4096).report
    assert rep.instruction_conflicts == [["Be brief", "Explain in detail"]]
    assert rep.prompt_tokens == len(prompt.split()) and rep.context_window == 4096
    assert 0.0 < rep.strongest_center_position < 1.0


@pytest.mark.models
def test_a_near_copy_with_another_value_is_its_own_center(real_embedder):
    case = _case("How tall is the Harbor Tower?", TOWER.format(142), TOWER.format(97), TOWER_OTHER.format(142))
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    rep = analysis.report
    assert _centers(rep) == [["d0", "d2"], ["d1"]]
    assert rep.conflict.detected
    pair = rep.conflict.pairs[0]
    assert pair.kind == "value_mismatch"
    assert "142" in pair.evidence and "97" in pair.evidence


def test_a_near_copy_that_changed_a_name_is_a_center_of_its_own(real_embedder):
    film = "The Glass Orchard is a 2021 drama film directed by {} and starring Ida Marsh. It premiered in Locarno."
    case = _case("Who directed the film The Glass Orchard?", film.format("Pavel Novak"), film.format("Sara Lindqvist"))
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    assert _centers(analysis.report) == [["d0"], ["d1"]] and analysis.report.noise_documents == []


CENTERED = {
    "equal values in other units agree": (
        "How much memory does the Pro plan include?",
        ("Each Pro plan instance includes 1.5 GB of memory and 2 vCPUs.",
         "Memory: Pro plan instances get 1536 MB; the Hobby plan gets 512 MB.",
         "The Pro plan comes with 1.5 GB memory per instance, billed monthly."),
        [["d0", "d1", "d2"]], False),
    "dates are compared by day": (
        "When does the spring registration window close?",
        ("The spring registration window closes on July 1, 2024 at midnight.",
         "Registration for spring closes July 15, 2024; late requests are not accepted."),
        [["d0"], ["d1"]], True),
    "a table's price, read by its row and the column the question names, against a sentence's": (
        "How much does the Pro plan cost per month?",
        ("Plans and pricing\n| | Basic | Pro | Enterprise |\n|---|---|---|---|\n"
         "| Price per month | $9 | $19 | $49 |\n| Seats | 1 | 5 seats | 50 seats |\n",
         "The Pro plan costs $29 per month and includes 5 seats and 100 GB of storage."),
        [["d0"], ["d1"]], True),
    "a plain table's row, read with its header row, is relevant enough to answer": (
        "Combien coûte le forfait Pro par mois ?",
        ("Tarifs\nForfait | Basic | Pro | Enterprise\nPrix par mois | 9 € | 19 € | 49 €\nPostes | 1 | 5 | 50\n",
         "Le forfait Pro coûte 29 € par mois et comprend 5 postes."),
        [["d0"], ["d1"]], True),
    "a table's column named by a word written in lower case": (
        "How much does the pro plan cost per month?",
        ("Plans and pricing\n| | Basic | Pro | Enterprise |\n|---|---|---|---|\n"
         "| Price per month | $9 | $19 | $49 |\n| Seats | 1 | 5 seats | 50 seats |\n",
         "The pro plan costs $49 per month and includes 5 seats and 100 GB of storage."),
        [["d0"], ["d1"]], True),
    "a table's column named in Chinese": (
        "专业版每月多少钱？",
        ("价格表\n| 项目 | 基础版 | 专业版 | 企业版 |\n|---|---|---|---|\n| 每月价格 | 59元 | 129元 | 399元 |\n",
         "专业版的价格是每月399元，包含五个席位。"),
        [["d0"], ["d1"]], True),
    "two uptime guarantees at different precision": (
        "What uptime does the Atlas service guarantee?",
        ("The Atlas service guarantees 99.95% uptime each month.",
         "Atlas comes with a 99.9% uptime guarantee in its SLA."),
        [["d0"], ["d1"]], True),
    "chinese paraphrases agree and are not noise": (
        "新员工每年有多少天年假？",
        ("根据员工手册，新员工每年享有5天带薪年假。",
         "新入职员工的年假为五天，法定节假日不计入。",
         "公司规定：入职第一年的员工，年假共5个工作日。"),
        [["d0", "d1", "d2"]], False),
    "a threshold is a condition, not the price": (
        "How much does standard shipping cost?",
        ("Standard shipping costs $5.99 per order. Orders over $50 ship free of charge.",
         "Our shipping page: standard delivery is $5.99. Express delivery is available.",
         "For purchases above $75 we waive the fee; otherwise standard shipping is $7.99."),
        [["d0", "d1"], ["d2"]], True),
    "an age is a condition, and a price per ticket is a price": (
        "How much is a child ticket?",
        ("Children under 12 travel for EUR 10. Adults pay EUR 25.",
         "A child ticket (ages 4 to 11) costs EUR 10.",
         "Kids aged under 12 pay EUR 12 per ticket since March."),
        [["d0", "d1"], ["d2"]], True),
    "a price a night is the price per night": (
        "What is the hotel limit per night for business travel?",
        ("Employees may book hotels up to EUR 180 per night. Trips longer than 14 days need approval.",
         "The travel policy caps hotel costs at EUR 180 a night, including taxes.",
         "Hotel stays are reimbursed up to EUR 150 per night; meals up to EUR 40 per day."),
        [["d0", "d1"], ["d2"]], True),
}


@pytest.mark.models
@pytest.mark.parametrize("question, texts, centers, detected", CENTERED.values(), ids=CENTERED.keys())
def test_documents_group_by_the_value_they_state(real_embedder, question, texts, centers, detected):
    rep = analyze_inputs(_case(question, *texts), real_embedder, S).report
    assert _centers(rep) == centers  # every document in a center: none is noise
    assert rep.conflict.detected == detected


STIPEND = _case(
    "Can contractors get the home-office stipend?",
    "Contractors are eligible for the home-office stipend from their first month.",
    "The home-office stipend is not available to contractors; only employees can get it.",
)


class _PairReader:
    """A reader whose pairwise answer is fixed: ``margin`` for every pair (negative: different)."""

    decides = False  # it adjusts the text's answers, as the sampled model's reader does

    def __init__(self, margin: float) -> None:
        self.margin, self.pairs = margin, 0

    def read(self, question, documents, yes_no):
        from diagnose.inputs.reading import DocumentReading

        return [DocumentReading("", 0.0, 0) for _ in documents]

    def compare(self, question, pairs):
        self.pairs += len(pairs)
        return [self.margin for _ in pairs]


@pytest.mark.models
def test_yes_no_stances_without_a_model_are_not_assessed(real_embedder):
    from diagnose.inputs.conflict import STANCE_FEATURES

    rep = analyze_inputs(STIPEND, real_embedder, S).report
    assert _centers(rep) == [["d0"], ["d1"]]  # the camps still make the centers
    assert rep.conflict.pairs[0].kind == "stance"
    assert rep.stance == "not_assessed"
    assert all(rep.conflict.features[f] == 0.0 for f in STANCE_FEATURES)  # the verdict does not rest on stance


@pytest.mark.models
def test_a_reader_that_compares_the_sides_assesses_the_stance(real_embedder):
    reader = _PairReader(-6.0)
    rep = analyze_inputs(STIPEND, real_embedder, S, reader=reader).report
    assert reader.pairs == 1 and rep.stance == "assessed"
    assert rep.conflict.features["pair_split"] > 0.99
    same = analyze_inputs(STIPEND, real_embedder, S, reader=_PairReader(6.0)).report
    assert same.conflict.features["pair_split"] < 0.01
    assert analyze_inputs(_case("How tall is it?", "It is 3 m tall.", "It is 4 m tall."), real_embedder, S).report.stance is None


@pytest.mark.models
def test_the_lean_is_read_in_the_same_batch_as_the_documents(real_embedder):
    from diagnose.inputs.reading import NO_INFORMATION

    reader, calls = _PairReader(6.0), []
    read = reader.read
    reader.read = lambda question, documents, yes_no: (calls.append(list(documents)), read(question, documents, yes_no))[1]
    analyze_inputs(STIPEND, real_embedder, S, reader=reader)
    assert calls == [[d.text for d in STIPEND.documents] + [NO_INFORMATION]]


class _AnsweringReader:
    """A reader that decides, answering each document with a fixed reply."""

    decides = True

    def __init__(self, *answers: str) -> None:
        self.answers = answers

    def read(self, question, documents, yes_no):
        from diagnose.inputs.reading import DocumentReading

        return [DocumentReading(a, None, 0) for a in self.answers]


@pytest.mark.models
def test_a_deciding_readers_verdict_weighs_the_static_tiers_verdict(real_embedder):
    case = _case("How tall is the Harbor Tower?", TOWER.format(142), TOWER_OTHER.format(157))
    static = analyze_inputs(case, real_embedder, S).report
    read = analyze_inputs(case, real_embedder, S, reader=_AnsweringReader("142 m", "157 m")).report
    assert static.conflict.features["static_conflict"] == 0.0  # the static tier has no second opinion
    assert read.conflict.features["static_conflict"] == pytest.approx(static.conflict.probability, abs=1e-4)
    assert _centers(read) == [["d0"], ["d1"]]


@pytest.mark.models
def test_a_lone_reading_of_a_page_that_states_the_answer_joins_the_answers_center(real_embedder):
    question, read = "How tall is the Harbor Tower?", _AnsweringReader("142 m", "142 m", "157 m")
    both = "Porto Lindo's Harbor Tower is 142 m tall to its roof; with the antenna mast on top it reaches 157 m."
    other = "Porto Lindo's Harbor Tower reaches 157 m with the antenna mast on top; its 31 floors hold offices."
    joined = analyze_inputs(_case(question, TOWER.format(142), TOWER_OTHER.format(142), both), real_embedder, S, reader=read)
    assert _centers(joined.report) == [["d0", "d1", "d2"]]  # the reader read the mast's height of a page that gives 142 m
    apart = analyze_inputs(_case(question, TOWER.format(142), TOWER_OTHER.format(142), other), real_embedder, S, reader=read)
    assert _centers(apart.report) == [["d0", "d1"], ["d2"]]
    # the joined page's other reading is no second answer to the verdict either
    assert joined.report.conflict.features["read_split"] == 0.0 and apart.report.conflict.features["read_split"] == 1.0
    changed = "Porto Lindo's Harbor Tower was 142 m tall until 2019, when a new spire raised it to 157 m."
    new = analyze_inputs(_case(question, TOWER.format(142), TOWER_OTHER.format(142), changed), real_embedder, S, reader=read)
    assert _centers(new.report) == [["d0", "d1"], ["d2"]]  # an old and a new height: the new one is its answer


@pytest.mark.models
def test_a_page_the_reader_invents_an_answer_for_is_noise(real_embedder):
    question = "What is the Harbor Tower built of?"
    steel = "Porto Lindo's Harbor Tower is a steel frame clad in glass, finished in 1998."
    plans = "Porto Lindo's Harbor Tower: plans for the harbour front, opened to the public in 1998."
    case = _case(question, steel, steel.replace("1998", "1999"), plans)
    report = analyze_inputs(case, real_embedder, S, reader=_AnsweringReader("Steel", "Steel", "Concrete")).report
    assert _centers(report) == [["d0", "d1"]] and report.noise_documents == ["d2"]


class _MarginReader:
    """A reader that decides a yes/no question, with a fixed yes-minus-no margin per document."""

    decides = True

    def __init__(self, *margins: float) -> None:
        self.margins = margins

    def read(self, question, documents, yes_no):
        from diagnose.inputs.reading import DocumentReading

        return [DocumentReading("yes" if m >= 0 else "no", m, 0) for m in self.margins]


@pytest.mark.models
def test_yes_gap_is_the_widest_gap_between_two_documents_probabilities_of_yes(real_embedder):
    p_yes = lambda margin: 1.0 / (1.0 + math.exp(-margin))  # noqa: E731
    firm = analyze_inputs(STIPEND, real_embedder, S, reader=_MarginReader(3.0, 5.0)).report.conflict.features
    weak = analyze_inputs(STIPEND, real_embedder, S, reader=_MarginReader(0.5, -0.5)).report.conflict.features
    assert firm["yes_gap"] == pytest.approx(p_yes(5.0) - p_yes(3.0), abs=1e-4)
    assert weak["yes_gap"] == pytest.approx(p_yes(0.5) - p_yes(-0.5), abs=1e-4)
    # two firm yeses agree, a weak yes and a weak no do not; the margins' range says the opposite
    assert weak["yes_gap"] > firm["yes_gap"] and weak["read_split"] < firm["read_split"]


@pytest.mark.models
def test_a_yes_no_verdict_is_cut_at_its_forms_cut_point_and_an_open_one_at_the_default(real_embedder):
    from dataclasses import replace

    from diagnose.inputs.calibration import ConflictCalibration

    flat = ConflictCalibration(weights=(("bias", 0.0),), conflict_at=0.9, unsure_at=0.8,
                               by_form=(("yes_no", 0.4, 0.3),))  # every probability is 0.5
    settings = replace(S, reader_calibration=flat)
    stance = analyze_inputs(STIPEND, real_embedder, settings, reader=_MarginReader(3.0, -3.0)).report.conflict
    assert (stance.probability, stance.threshold, stance.state) == (0.5, 0.4, "conflict")
    case = _case("How tall is the Harbor Tower?", TOWER.format(142), TOWER_OTHER.format(157))
    value = analyze_inputs(case, real_embedder, settings, reader=_AnsweringReader("142 m", "157 m")).report.conflict
    assert (value.probability, value.threshold, value.state) == (0.5, 0.9, "none")


@pytest.mark.models
def test_off_topic_document_is_noise(real_embedder):
    case = _case("How tall is the Harbor Tower?", TOWER.format(142), OFF_TOPIC)
    rep = analyze_inputs(case, real_embedder, S).report
    assert rep.noise_documents == ["d1"]
    assert _centers(rep) == [["d0"]]


@pytest.mark.models
def test_a_yes_no_case_keeps_an_off_topic_page_of_the_same_brand_out_of_the_camps(real_embedder):
    # Every document says "yes" when it says nothing against the question; that bare word
    # corroborates nobody: the release notes are noise, not a "no" camp of their own.
    case = _case(
        "Does the Orbly Basic plan include phone support?",
        "Orbly Basic includes phone support on weekdays from 9 to 5, as every Orbly plan does.",
        "Phone support is part of every Orbly plan, Basic included: call the number in your dashboard.",
        "Support options: all plans, including Basic, can reach our team by phone and by email.",
        "Orbly for Android, version 4.2.1. New: widgets for your home screen. Fixed: a crash when "
        "rotating the screen on tablets. Thanks for using Orbly!",
    )
    rep = analyze_inputs(case, real_embedder, S).report
    assert rep.noise_documents == ["d3"]
    assert _centers(rep) == [["d0", "d1", "d2"]]
    assert not rep.conflict.detected


@pytest.mark.models
def test_many_agreeing_documents_without_a_typed_answer_are_no_conflict(real_embedder):
    phrasing = [
        "To reset the router, hold the reset button for ten seconds until the light blinks.",
        "Hold the reset button for ten seconds; the router restarts when the light blinks.",
        "Router reset: press and hold the reset button about ten seconds, until the light blinks.",
        "You can reset the router by holding its reset button for ten seconds.",
        "Resetting the router: hold reset for ten seconds and wait for the blinking light.",
        "The router resets when you hold the reset button for ten seconds.",
    ]
    rep = analyze_inputs(_case("How do I reset the router?", *phrasing), real_embedder, S).report
    assert not rep.conflict.detected
    assert rep.noise_documents == []


@pytest.mark.models
def test_chinese_value_conflict_is_found(real_embedder):
    case = _case(
        "这款耳机的续航时间是多少？",
        "这款耳机充满电后续航时间为8小时，开启降噪后为6小时。",
        "官方参数：耳机续航时间8小时（降噪关闭）。",
        "零售页面：耳机续航时间为7小时，支持快充。",
    )
    rep = analyze_inputs(case, real_embedder, S).report
    assert _centers(rep) == [["d0", "d1"], ["d2"]]
    # found: at least an unsure verdict (an info finding); one lone retail page against two
    # close copies does not reach the operating point of at most 5% false alarms
    assert rep.conflict.state in ("conflict", "unsure") and rep.conflict.pairs[0].kind == "value_mismatch"



@pytest.mark.models
def test_a_lone_reading_the_text_rules_contradict_joins_the_center_whose_answer_they_read(real_embedder):
    question = "When was the Harrow Vale Rowing Club founded?"
    early = ["The Harrow Vale Rowing Club was founded in 1921 by dock workers.",
             "Founded in 1921, the Harrow Vale Rowing Club races on the river every spring.",
             "Harrow Vale Rowing Club history: the club was founded in 1921."]
    later = ["The Harrow Vale Rowing Club was founded in 1948, after the war.",
             "Harrow Vale Rowing Club (founded 1948) trains juniors on weekday evenings."]
    misread = "The Harrow Vale Rowing Club was founded in 1948; its boathouse opened in 1955."
    stated = "The Harrow Vale Rowing Club was founded in 1955 by former members of a school crew."
    read = _AnsweringReader("1921", "1921", "1921", "1948", "1948", "1955")
    joined = analyze_inputs(_case(question, *early, *later, misread), real_embedder, S, reader=read).report
    assert _centers(joined) == [["d0", "d1", "d2"], ["d3", "d4", "d5"]]  # the page's text rules read 1948
    apart = analyze_inputs(_case(question, *early, *later, stated), real_embedder, S, reader=read).report
    assert _centers(apart) == [["d0", "d1", "d2"], ["d3", "d4"], ["d5"]]
