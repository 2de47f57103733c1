"""The numbers that tell two short answers apart (:func:`diagnose.text.numerals.number_marks`)."""

from __future__ import annotations

import pytest

from diagnose.text.numerals import number_marks


@pytest.mark.parametrize("text, marks", [
    ("The First Carrow War", {1}), ("the 2nd Carrow War", {2}), ("World War II", {2}), ("Louis XIV", {14}),
    ("la deuxième guerre", {2}), ("World War I", {1}), ("Edmund III of Arn", {3}),
])
def test_numbers_ordinals_and_roman_numerals_are_read_as_integers(text, marks):
    assert number_marks(text) == frozenset(marks)


@pytest.mark.parametrize("text", ["CD Projekt", "I think it is Carrow", "MIX Records", "Basketball", "Did I go"])
def test_capitals_that_are_no_numeral_where_they_stand_give_none(text):
    assert number_marks(text) == frozenset()
