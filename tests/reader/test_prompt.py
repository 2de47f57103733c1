from diagnose.reader.prompt import messages, parse_reply, states_nothing


def test_a_reply_is_read_line_by_line():
    fields = parse_reply("3,000 mg\nAbout: Fevrex, a pain reliever\n")
    assert fields.answer == "3,000 mg" and fields.about == "Fevrex, a pain reliever"
    assert fields.date is None and not fields.superseded


def test_labels_and_missing_lines_are_tolerated():
    assert parse_reply("Answer: 12 days.").answer == "12 days"
    assert parse_reply("Answer: 12 days\nAbout: none").about is None
    assert parse_reply("not stated\nStatus: superseded").superseded
    assert parse_reply("").answer == ""


def test_not_stated_is_no_answer():
    assert states_nothing("Not stated.") and states_nothing("none") and not states_nothing("4 g")


def test_the_question_comes_before_the_document():
    user = messages("How heavy is it?", "It weighs 2 kg.")[1]["content"]
    assert user.index("How heavy is it?") < user.index("It weighs 2 kg.")
