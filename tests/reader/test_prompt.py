from diagnose.reader.prompt import messages, parse_reply, states_nothing


def test_a_reply_is_read_line_by_line():
    fields = parse_reply("3,000 mg\nAbout: Fevrex, a pain reliever\n")
    assert fields.answer == "3,000 mg" and fields.about == "Fevrex, a pain reliever"
    assert fields.date is None and not fields.superseded


def test_labels_and_missing_lines_are_tolerated():
    assert parse_reply("Answer: 12 days.").answer == "12 days"
    assert parse_reply("The answer: the Ring line\nAbout: Parkway, a metro station").answer == "the Ring line"
    assert parse_reply("The answer is: 12 days").answer == "12 days"
    assert parse_reply("The answering machine is off").answer == "The answering machine is off"
    assert parse_reply("The answer is the Second Boer War").answer == "the Second Boer War"
    inline = parse_reply("The sport is football. About: Vestri, a football club")
    assert (inline.answer, inline.about) == ("The sport is football", "Vestri, a football club")
    assert parse_reply("Football\nAbout: Vestri, a club").about == "Vestri, a club"  # the own line first
    assert parse_reply(parse_reply("The answer is 12 days.").answer).answer == "12 days"  # read again: itself
    assert parse_reply("Answer: 12 days\nAbout: none").about is None
    assert parse_reply("not stated\nStatus: superseded").superseded
    assert parse_reply("").answer == ""


def test_not_stated_is_no_answer():
    assert states_nothing("Not stated.") and states_nothing("none") and not states_nothing("4 g")


def test_a_sentence_that_says_the_document_does_not_answer_is_no_answer():
    assert states_nothing("The maker of the kettle is not mentioned in the document")
    assert states_nothing("The document does not state the price.")
    assert states_nothing("No information about the launch date")
    assert not states_nothing("The kettle is made by Verano")
    assert not states_nothing("The treaty was never signed")


def test_the_line_number_of_the_reply_layout_is_not_part_of_the_answer():
    assert parse_reply("Line 1: 12 days\nAbout: Verano K2, a kettle").answer == "12 days"
    assert parse_reply("line 1. No").answer == "No"
    assert parse_reply("Linear 1 m").answer == "Linear 1 m"


def test_the_question_comes_before_the_document():
    user = messages("How heavy is it?", "It weighs 2 kg.")[1]["content"]
    assert user.index("How heavy is it?") < user.index("It weighs 2 kg.")
    assert user.index("How heavy is it?") < user.index("It weighs 2 kg.") < user.rindex("How heavy is it?")
    assert user.rstrip().endswith("About: the thing the answer is about.")  # asked again with the reply's layout


def test_a_yes_no_question_is_asked_again_after_the_document_below_the_shared_head():
    open_ = messages("Is it heavy?", "It weighs 2 kg.")[1]["content"]
    again = messages("Is it heavy?", "It weighs 2 kg.", yes_no=True)[1]["content"]
    head = open_[:open_.index("It weighs 2 kg.")]
    assert again.startswith(head)  # the head every document shares is the same
    assert again.rindex("Is it heavy?") > again.index("It weighs 2 kg.")
    assert "yes or no" in again[again.index("It weighs 2 kg."):] and "yes or no" not in open_[len(head):]
