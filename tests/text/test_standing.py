"""diagnose.text.standing: a document's own date, archived status and successor, in en / zh / fr / ja.

Every text here is made up for these tests."""

from __future__ import annotations

import datetime

import pytest

from diagnose.text.standing import read_standing

D = datetime.date

ARCHIVED = [
    # (text, successor, own date)
    ("ARCHIVED - superseded by version 4 on 1 February 2026.\nGuests may stay 3 nights. Effective date: 1 March 2023.",
     "version 4", D(2023, 3, 1)),
    ("Parking rules\nThis notice has been replaced by the Campus Parking Standard and is kept for reference.",
     "the Campus Parking Standard", None),
    ("【已废止】本办法已被《会议室管理办法（2026年版）》取代。\n生效日期：2019年3月1日。每次预约不超过两小时。",
     "《会议室管理办法（2026年版）》", D(2019, 3, 1)),
    ("状态：已作废\n每位员工每月可领取两张餐券。", None, None),
    ("【廃止】本規程は2026年2月1日をもって廃止され、第5版に置き換えられました。\n施行日：2021年4月1日",
     "第5版", D(2021, 4, 1)),
    ("Cette consigne a été remplacée par la version 6 le 1er février 2026.\nEn vigueur le 1er mars 2022.",
     "la version 6", D(2022, 3, 1)),
    ("Statut : archivé\nMis à jour le 3 juin 2021. Le badge se renouvelle chaque année.", None, D(2021, 6, 3)),
]


@pytest.mark.parametrize(("text", "successor", "own_date"), ARCHIVED)
def test_a_document_that_says_it_is_archived_reads_archived_with_its_successor_and_own_date(text, successor, own_date):
    found = read_standing(text)
    assert found.authority == "archived"
    assert found.superseded_by == successor
    assert found.date == own_date
    assert found.evidence and found.evidence in text


CURRENT = [
    # (text, own date, predecessor)
    ("Badge policy, version 4. Effective 1 February 2026. This version replaces version 3, which is no longer in effect.",
     D(2026, 2, 1), "version 3"),
    ("本办法自2026年2月1日起施行，原《门禁管理办法》同时废止。", D(2026, 2, 1), None),
    ("本規程は2026年2月1日から施行する。旧規程は廃止する。", D(2026, 2, 1), None),
    ("Politique de prêt (version 4)\nEn vigueur depuis le 1er février 2026. Elle remplace la version 3, "
     "qui n'est plus en vigueur.", D(2026, 2, 1), "la version 3"),
    ("Amendment No. 1 to the supply contract. Clause 4 (Delivery) is hereby deleted and replaced with: "
     "goods ship within 10 business days.", None, "is hereby deleted"),
]


@pytest.mark.parametrize(("text", "own_date", "predecessor"), CURRENT)
def test_a_document_that_retires_another_is_not_archived_itself(text, own_date, predecessor):
    """What it says about the version it replaces is not about itself."""
    found = read_standing(text)
    assert found.authority is None and found.superseded_by is None
    assert found.date == own_date
    assert found.replaces == predecessor


NOT_ITSELF = [
    "Returns for withdrawn products are refunded in 14 days.",
    "Archived emails are deleted after 90 days.",
    "Version 3 was effective from 1 March 2023. Lunch costs 6 EUR.",
    "The old footbridge opened on 5 May 1887.",
    "已归档的邮件保留九十天。",
    "Les dossiers archivés sont conservés dix ans.",
]


@pytest.mark.parametrize("text", NOT_ITSELF)
def test_status_words_and_dates_about_something_else_say_nothing(text):
    assert read_standing(text) == read_standing("")


def test_the_newest_of_the_documents_own_dates_wins_and_event_dates_do_not_count():
    text = ("Loan rules\nBooks borrowed before 1 March 2024 are due in 3 weeks. "
            "Effective 1 January 2024. Last updated: June 5, 2024.")
    assert read_standing(text).date == D(2024, 6, 5)
    assert read_standing(text).evidence == "Last updated: June 5, 2024"


@pytest.mark.parametrize(("text", "own_date"), [
    ("Desk booking — 1 March 2023\nDesks are booked a day ahead.", D(2023, 3, 1)),
    ("2024年3月3日更新\n每层设有两台打印机。", D(2024, 3, 3)),
    ("最終更新日：2025年7月10日\n会議室は30分単位で予約できます。", D(2025, 7, 10)),
])
def test_a_title_date_or_a_dating_word_after_the_date_dates_the_document(text, own_date):
    assert read_standing(text).date == own_date


@pytest.mark.parametrize(("text", "own_date"), [
    ("Shuttle timetable (updated in March 2024)\nBuses leave every 20 minutes.", D(2024, 3, 1)),
    ("Horaires des navettes (mis à jour en mars 2024)\nUn bus part toutes les 20 minutes.", D(2024, 3, 1)),
])
def test_a_dating_word_before_a_month_dates_the_document_in_that_month(text, own_date):
    assert read_standing(text).date == own_date


@pytest.mark.parametrize("text", [
    "Notice: the shuttle registration deadline has been extended to Friday, 30 April.",
    "Le délai d'inscription est prolongé jusqu'au vendredi 30 avril.",
    "班车报名截止日期调整为4月30日。",
    "シャトルの申込締切を4月30日に延長しました。",
])
def test_a_notice_that_changes_a_value_replaces_what_was_stated_before(text):
    assert read_standing(text).replaces is not None


@pytest.mark.parametrize("text", [
    "The shuttle depot moved to its current site in 1962.",  # a history, not a notice
    "Its driver moved to Harrow in 2002.",
    "The shuttle changed to a new route.",
    "The booking window may be extended to 6 weeks.",  # a rule, not a notice
    "预订期可延长至6周。",
    "予約期間は最大6週間に延長できます。",
])
def test_a_change_told_without_a_new_figure_replaces_nothing(text):
    assert read_standing(text).replaces is None


def test_a_date_of_no_longer_applying_is_not_an_effective_date():
    found = read_standing("本规定自2026年1月1日起不再适用。")
    assert found.authority == "archived" and found.date is None


@pytest.mark.parametrize(("text", "own_date", "authority"), [
    ("Parking rules v4 (effective 1 February 2026): a permit costs EUR 30 a month.", D(2026, 2, 1), None),
    ("Parking rules v3 (archived): a permit costs EUR 25 a month.", None, "archived"),
    ("Règlement du parking version 4 (en vigueur le 1er février 2026) : 30 EUR par mois.", D(2026, 2, 1), None),
])
def test_a_version_in_the_name_that_opens_the_text_is_its_own(text, own_date, authority):
    found = read_standing(text)
    assert (found.date, found.authority) == (own_date, authority)


def test_a_date_in_an_eras_years_dates_the_document():
    assert read_standing("出張旅費規程（令和6年4月1日施行）\n宿泊費の上限は1泊12,000円です。").date == D(2024, 4, 1)


@pytest.mark.parametrize("text", [
    "This page is outdated. Refunds are accepted within 14 days.",
    "Historical version — kept for reference. The desk fee is $25.",
    "This handbook is no longer maintained. Leave is 20 days.",
    "Cette version n'est plus à jour. Le délai est de 14 jours.",
    "Ancienne version (2022) : le délai est de 30 jours.",
    "本规定自2025年1月1日起不再执行。",
    "旧规定（2022年版）：退货期限30天。",
    "本資料は2023年度版です（最新版ではありません）。",
])
def test_a_document_that_says_it_is_out_of_date_in_other_words_reads_archived(text):
    assert read_standing(text).authority == "archived"


@pytest.mark.parametrize("text", [
    "Unlike the previous version, this one allows 30 days.",  # names another document
    "Outdated devices are replaced free of charge.",  # about devices, not this text
])
def test_out_of_date_words_about_something_else_say_nothing(text):
    assert read_standing(text).authority is None


@pytest.mark.parametrize("text", [
    "Notice: the desk fee has been increased to $30.",
    "The rate limit was reduced to 300 requests per minute.",
    "Le tarif est porté à 30 € au 1er mars.",
    "服务费已上调至30元。",
    "手数料は4月より500円に値上げされました。",
])
def test_a_notice_that_raises_or_lowers_a_value_replaces_what_was_stated_before(text):
    assert read_standing(text).replaces is not None


def test_a_rule_that_a_value_may_be_raised_replaces_nothing():
    assert read_standing("The limit may be increased to 500 on request.").replaces is None


@pytest.mark.parametrize("text", [
    "Members may bring two guests a month (2021 rules, superseded on 1 May 2025).",
    "Le parking est gratuit le samedi (règlement 2020, remplacé le 1er mars 2025).",
    "This checklist was replaced on 3 March 2025. Lock both doors before leaving.",
    "Ce formulaire a été remplacé en janvier 2025. Joignez deux justificatifs.",
    "本通知已无效。报销须在30天内提交。",
    "この手順書は現在は無効です。申請は5営業日以内に行ってください。",
    "Locker rules (2019, superseded): lockers are cleared every Friday.",
    "Règlement des casiers (2019, remplacé) : les casiers sont vidés le vendredi.",
    "Locker rules (2019 edition, replaced): lockers are cleared every Friday.",
])
def test_a_note_or_a_sentence_that_says_the_document_was_replaced_reads_archived(text):
    assert read_standing(text).authority == "archived"


@pytest.mark.parametrize("text", [
    "The pump (replaced on 3 March) must be checked weekly.",
    "Our lobby doors were replaced in 2024 and open at 7 am.",
    "本优惠券逾期无效。",
    "Members may bring two guests a month (ask the desk, which keeps the old list).",
    "The pump (replaced) must be checked weekly.",
    "Le filtre (remplacé) doit être vérifié chaque semaine.",
])
def test_a_replaced_part_or_a_conditional_void_says_nothing_of_the_document(text):
    assert read_standing(text).authority is None


@pytest.mark.parametrize(("text", "own_date"), [
    ("Applies from 2026-03-01. Lockers are cleared every Friday.", D(2026, 3, 1)),
    ("With effect from 1 May 2026, lockers are cleared every Friday.", D(2026, 5, 1)),
    ("À compter du 1er mai 2026, les casiers sont vidés le vendredi.", D(2026, 5, 1)),
    ("Version du 1er mai 2026 (annule et remplace la version de 2023).", D(2026, 5, 1)),
])
def test_words_that_say_when_a_rule_applies_date_the_document(text, own_date):
    assert read_standing(text).date == own_date


@pytest.mark.parametrize("text", [
    "As of 31 December 2025, the firm employed 4,100 people.",  # the date of a figure, not of the page
    "Born in Graz, she moved to Linz. From 1 May 1907 she taught there.",
])
def test_the_date_of_a_figure_or_of_an_event_does_not_date_the_document(text):
    standing = read_standing(text)
    assert standing.date is None and standing.replaces is None
