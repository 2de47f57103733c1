import pytest

from diagnose.text.lifespans import asked_end, asked_life_event, lifespan_end
from diagnose.text.values import extract_values


@pytest.mark.parametrize("question, event", [
    ("When did the painter Ilse Varga die?", "death"),
    ("In what year did he pass away?", "death"),
    ("Quand Jules Ferrand est-il mort ?", "death"),
    ("Wann starb Otto Brenner?", "death"),
    ("画家什么时候去世？", "death"),
    ("When was Ilse Varga born?", "birth"),
    ("Où est née Lucie Arnaud ?", "birth"),
    ("いつ生まれましたか？", "birth"),
    ("When did Ilse Varga begin her career?", None),
    ("When was the deadline moved?", None),
    ("Was she born before her brother's death?", None),
])
def test_the_end_of_a_life_a_question_asks_for(question, event):
    assert asked_life_event(question) == event


def _ends(text):
    return [(v.span, lifespan_end(text, v)) for v in extract_values(text) if v.kind == "date"]


def test_the_two_dates_of_a_bracketed_span_are_a_birth_and_a_death():
    assert _ends("Ilse Varga (2 March 1890 – 14 June 1951) was a painter.") == [
        ("2 March 1890", "birth"), ("14 June 1951", "death")]
    assert _ends("Otto Brenner (1807-1857) sailed.") == [("1807", "birth"), ("1857", "death")]


def test_a_date_outside_a_span_of_two_dates_is_no_end_of_a_life():
    assert _ends("The bridge opened (after delays) in 1932 and closed in 1990.") == [("1932", None), ("1990", None)]
    assert _ends("She lived in Graz (from 1921) and later in Linz.") == [("1921", None)]
    long_bracket = "(the works, begun under the old mayor in 1901 – and finished when funds allowed in 1910)"
    assert [e for _, e in _ends(long_bracket)] == [None, None]


@pytest.mark.parametrize("event, end", [("birth", "date:1712"), ("death", "date:1779"), (None, "range:number:1712:1779")])
def test_an_answer_that_gives_a_whole_lifespan_its_page_brackets_gives_the_end_asked_for(event, end):
    text = "Ilse Varga (1712–1779) was a painter of the Harrow Vale school."
    span = extract_values("1712-1779")[0]
    assert asked_end(span, text, extract_values(text), event).key == end


def test_a_span_of_years_no_bracket_of_its_page_holds_stays_a_span():
    text = "The Harrow Vale school flourished from 1712 to 1779."
    span = extract_values("1712-1779")[0]
    assert asked_end(span, text, extract_values(text), "birth") == span
