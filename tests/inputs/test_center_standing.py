"""diagnose.inputs.standing: which center is current, from documents' dates and authority.

Every document here is made up for these tests."""

from __future__ import annotations

import datetime

import pytest

from diagnose.document import Document
from diagnose.inputs.standing import center_standings, document_standing, outdated_documents
from diagnose.text.standing import read_standing

D = datetime.date
ALL = lambda a, b: True  # noqa: E731  every center disagrees with every other


def test_an_archived_center_is_superseded_and_its_rival_current():
    assert center_standings([[0], [1, 2]], [None, None, None], ["archived", None, None], ALL) \
        == ["superseded", "current"]


def test_a_center_all_older_than_a_disagreeing_one_is_superseded():
    dates = [D(2023, 5, 1), D(2022, 1, 1), D(2026, 2, 1)]
    assert center_standings([[0, 1], [2]], dates, [None] * 3, {(0, 1)}) == ["superseded", "current"]


def test_one_newer_or_undated_document_keeps_a_center_from_being_superseded():
    dates = [D(2023, 5, 1), D(2027, 1, 1), D(2026, 2, 1)]
    assert center_standings([[0, 1], [2]], dates, [None] * 3, ALL) == ["current", "superseded"]
    undated = [D(2023, 5, 1), None, D(2026, 2, 1)]
    assert center_standings([[0, 1], [2]], undated, [None] * 3, ALL) == [None, "current"]


def test_a_document_that_says_it_replaces_another_outdates_undated_unmarked_rivals():
    replacing = [True, False, False]
    assert center_standings([[0], [1, 2]], [None] * 3, [None] * 3, ALL, replacing) == ["current", "superseded"]
    assert outdated_documents([0], [1, 2], [None] * 3, [None] * 3, replacing) == [1, 2]
    # a newer dated rival is weighed by its date, not by the other's wording
    dated = [D(2023, 1, 1), D(2025, 1, 1), None]
    assert center_standings([[0], [1, 2]], dated, [None] * 3, ALL, replacing) == ["superseded", "current"]
    assert center_standings([[0], [1, 2]], [None] * 3, [None] * 3, ALL) == [None, None]  # without the wording


def test_centers_that_do_not_disagree_are_not_ranked_against_each_other():
    dates = [D(2020, 1, 1), D(2026, 1, 1)]
    assert center_standings([[0], [1]], dates, [None, None], set()) == [None, None]
    assert center_standings([[0], [1]], dates, [None, None], lambda a, b: False) == [None, None]


def test_without_marks_or_with_equal_marks_every_standing_is_none():
    assert center_standings([[0], [1]], [None, None], [None, None], ALL) == [None, None]
    same = [D(2025, 1, 1), D(2025, 1, 1)]
    assert center_standings([[0], [1]], same, ["authoritative"] * 2, ALL) == [None, None]


def test_an_authoritative_document_is_not_superseded_by_a_newer_standard_one():
    dates = [D(2023, 1, 1), D(2026, 1, 1)]
    assert center_standings([[0], [1]], dates, ["authoritative", "standard"], ALL) == ["current", None]
    assert center_standings([[0], [1]], dates, ["standard", "standard"], ALL) == ["superseded", "current"]


def test_only_the_center_above_every_rival_is_current():
    # c0 archived; c1 authoritative 2025; c2 undated: c1 stands above both.
    dates = [D(2019, 1, 1), D(2025, 3, 1), None]
    assert center_standings([[0], [1], [2]], dates, ["archived", "authoritative", None], ALL) \
        == ["superseded", "current", None]


def test_outdated_documents_names_the_superseded_centers_documents_to_drop():
    dates = [D(2026, 2, 1), D(2023, 1, 1), None, D(2022, 6, 1)]
    authorities = [None, None, "archived", "authoritative"]
    assert outdated_documents([0], [1, 2, 3], dates, authorities) == [1, 2]  # 3 outranks the newer one
    assert outdated_documents([0, 1], [1], dates, authorities) == []  # shared documents stay
    assert outdated_documents([], [1], dates, authorities) == []


@pytest.mark.parametrize(("archived_text", "current_text"), [
    ("ARCHIVED - superseded by version 4 on 1 February 2026.\nVisitors sign in at reception.",
     "Visitor policy, version 4. Effective 1 February 2026. Visitors sign in online."),
    ("【已废止】本办法已被新版取代。\n访客须在前台登记。", "本办法自2026年2月1日起施行。访客在线登记。"),
    ("Statut : archivé\nLes visiteurs s'inscrivent à l'accueil.",
     "En vigueur le 1er février 2026.\nLes visiteurs s'inscrivent en ligne."),
    ("【廃止】本規程は廃止されました。\n来訪者は受付で記帳する。", "2026年2月1日施行\n来訪者はオンラインで登録する。"),
])
def test_text_marks_alone_decide_the_standing(archived_text, current_text):
    docs = [Document(id="old", text=archived_text), Document(id="new", text=current_text)]
    standings = [document_standing(d) for d in docs]
    found = center_standings([[0], [1]], [s.date for s in standings], [s.authority for s in standings], ALL)
    assert found == ["superseded", "current"]
    assert standings[0].authority == "archived" and standings[1].authority is None


def test_a_documents_own_fields_win_over_its_text():
    doc = Document(id="a", text="ARCHIVED.\nEffective date: 1 March 2023.", date=D(2025, 1, 1),
                   authority="authoritative")
    found = document_standing(doc)
    assert (found.date, found.authority, found.date_source) == (D(2025, 1, 1), "authoritative", "field")
    assert found.text.authority == "archived"
    from_text = document_standing(Document(id="b", text=doc.text))
    assert (from_text.date, from_text.authority, from_text.date_source) == (D(2023, 3, 1), "archived", "text")
    nothing = document_standing(Document(id="c", text="Lunch is at noon."))
    assert (nothing.date, nothing.authority, nothing.date_source) == (None, None, None)


def test_a_given_reading_is_used_instead_of_reading_the_text_again():
    reading = read_standing("Effective 2 April 2024.\nx")
    assert document_standing(Document(id="a", text="no marks"), reading).date == D(2024, 4, 2)
