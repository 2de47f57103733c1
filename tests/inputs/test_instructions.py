from diagnose.inputs.instructions import instruction_conflicts


def test_brief_versus_detail_across_system_and_template():
    got = instruction_conflicts("Be brief.", "Explain in detail.\n{documents}\n{question}")
    assert got == [["Be brief", "Explain in detail"]]


def test_json_versus_prose_and_grounding():
    got = instruction_conflicts(
        "Answer in JSON. Only use the documents.", "Reply in plain text and use your own knowledge."
    )
    assert ["Answer in JSON", "in plain text"] in got
    assert ["Only use the documents", "use your own knowledge"] in got


def test_consistent_instructions_have_no_conflict():
    assert instruction_conflicts("Answer concisely from the documents.", None) == []
    assert instruction_conflicts(None, None) == []
