from diagnose.inputs.answers import candidates, parse_question
from diagnose.inputs.roles import is_abbreviation_question, is_character_question, spells


def test_abbreviation_questions_are_recognised():
    assert is_abbreviation_question(parse_question("What does the abbreviation SFJ refer to?"))
    assert is_abbreviation_question(parse_question("What does NATO stand for?"))
    assert not is_abbreviation_question(parse_question("Who founded IBM?"))


def test_initials_spell_hyphen_and_camel_case_parts():
    assert spells(["sapheno-femoral", "junction"], "SFJ")
    assert spells(["Bank", "of", "America"], "BOA") and spells(["Bank", "of", "America"], "BA")
    assert not spells(["saphenous", "vein"], "SFJ")


def test_expansion_in_parentheses_beats_a_free_run():
    q = parse_question("What does SFJ stand for?")
    text = "The sapheno-femoral junction (SFJ) lies in the groin. San Francisco Jail is unrelated."
    found = candidates(q, text)
    assert found[0].key == "sapheno femoral junction"
    assert any(a.key == "san francisco jail" for a in found)
    assert candidates(q, "SFJ (Star Flyer Japan) is an airline.")[0].key == "star flyer japan"


def test_main_character_is_the_repeated_cast_name():
    q = parse_question("Who is the main character in the film Jadoo?")
    assert is_character_question(q)
    text = ("Pritam ( Suresh ) is a constable . When the two meet , Sundari runs . Pritam lets her "
            "escape . Sundari asks Pritam to be forgiven . The Turkish police arrive .")
    found = candidates(q, text)
    assert found[0].key == "pritam"
    assert all(a.key not in ("jadoo", "turkish", "the") for a in found)


def test_character_inside_a_longer_title_wins():
    q = parse_question('Who is the main character in the video game "Who Framed Roger Rabbit"?')
    text = "In the game Roger Rabbit must find the will . Eddie Valiant helps him . Eddie drives ."
    assert candidates(q, text)[0].key == "roger"


def test_genre_and_format_lexicons():
    genre = parse_question('What is the genre of the film "The Squeeze"?')
    assert candidates(genre, "The Squeeze is a 1977 British gangster thriller film.")[0].key == "gangster"
    fmt = parse_question('What is the format of "Swan Princess"?')
    assert candidates(fmt, "It was followed by seven direct-to-video sequels.")[0].key == "direct to video"
