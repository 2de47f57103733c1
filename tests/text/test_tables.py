import pytest

from diagnose.text.sentences import content_tokens
from diagnose.text.tables import cell_context, named_cell, names_cell, table_cell, table_row

SUPPLIES = ("Power supplies: quick selection\n"
            "Model | Output | Input (AC) | Size (mm)\n"
            "PSU-100-12 | 12 V / 8.5 A | 100 ~ 240 Vac | 129 x 98 x 38\n"
            "PSU-300-12 | 12 V / 25 A | 90 ~ 264 Vac | 215 x 115 x 50\n"
            "All models carry a two-year warranty.")


def _at(text: str, part: str) -> str | None:
    return cell_context(text, text.index(part))


def test_a_cell_is_read_by_its_column_header_and_row_label():
    assert _at(SUPPLIES, "90 ~ 264") == "Input (AC) PSU-300-12 90 ~ 264 Vac"
    assert _at(SUPPLIES, "12 V / 25 A") == "Output PSU-300-12 12 V / 25 A"
    assert _at(SUPPLIES, "PSU-100-12") == "Model PSU-100-12"


def test_markdown_pipes_and_rule_lines_are_the_same_table():
    text = "| Limit | Free | Team |\n|---|---|---|\n| Storage | 2 GB | 50 GB |\n| Seats | 1 | 20 |\n"
    assert _at(text, "50 GB") == "Team Storage 50 GB"
    assert _at(text, "20 |") == "Team Seats 20"


def test_a_first_row_holding_numbers_is_data_not_a_header():
    text = "Specifications\nCapacity | 2 person\nPacked weight | 1,820 g\n"
    assert _at(text, "1,820") == "Packed weight 1,820 g"


def test_outside_a_table_there_is_no_cell():
    assert _at(SUPPLIES, "two-year") is None
    assert _at(SUPPLIES, "Input (AC)") is None  # a header names a column, it is no value
    assert _at("Home | Products | Support | 2024 reports", "2024") is None  # one line of pipes is no table


def test_a_row_is_the_line_of_a_cell():
    row = "PSU-300-12 | 12 V / 25 A | 90 ~ 264 Vac | 215 x 115 x 50"
    start = SUPPLIES.index(row)
    assert table_row(SUPPLIES, SUPPLIES.index("90 ~")) == (start, start + len(row))
    assert table_row(SUPPLIES, SUPPLIES.index("two-year")) is None


PLANS = ("| | Basic | Pro | Enterprise |\n|---|---|---|---|\n"
         "| Price per month | $9 | $19 | $49 |\n| Seats | 1 | 5 | 50 |\n")


def test_a_cell_knows_its_labels_and_the_tables_other_labels():
    cell = table_cell(PLANS, PLANS.index("$19"))
    assert (cell.column, cell.text, cell.header, cell.row_label) == (2, "$19", "Pro", "Price per month")
    assert cell.headers == ("", "Basic", "Pro", "Enterprise") and cell.row_labels == ("Price per month", "Seats")
    assert cell.labels == "Pro Price per month"
    assert table_cell(PLANS, PLANS.index("Basic")) is None


@pytest.mark.parametrize("text", [PLANS, "Basic | Pro | Enterprise\nPrice per month | $9 | $19 | $49\nSeats | 1 | 5 | 50\n"])
def test_the_column_a_subject_names_is_the_one_that_answers(text):
    pro = content_tokens("Pro")
    answering = [part for part in ("$9", "$19", "$49", "5 ") if names_cell(pro, table_cell(text, text.index(part)))]
    assert answering == ["$19", "5 "]
    assert all(names_cell(content_tokens("Atlas"), table_cell(text, text.index(p))) for p in ("$9", "$49"))


def test_the_row_a_subject_names_is_the_one_that_answers():
    pick = content_tokens("PSU-300-12")
    assert names_cell(pick, table_cell(SUPPLIES, SUPPLIES.index("12 V / 25 A")))
    assert not names_cell(pick, table_cell(SUPPLIES, SUPPLIES.index("12 V / 8.5 A")))
    text = "Model | Output\nNomad | 12 V\nRanger | 24 V\n"
    assert not names_cell(content_tokens("Ranger"), table_cell(text, text.index("12 V")))
    assert names_cell(content_tokens("Ranger"), table_cell(text, text.index("24 V")))


def test_a_cell_the_subject_leaves_out_stands_for_the_named_cell_of_its_row_or_column():
    pro = content_tokens("Pro")
    assert [named_cell(pro, table_cell(PLANS, PLANS.index(p))) for p in ("$9", "$49", "50 |")] == ["$19", "$19", "5"]
    assert named_cell(pro, table_cell(PLANS, PLANS.index("$19"))) is None  # it answers itself
    assert named_cell(content_tokens("PSU-300-12"), table_cell(SUPPLIES, SUPPLIES.index("100 ~"))) == "90 ~ 264 Vac"
    both = content_tokens("Basic Pro")  # two columns named: no single cell stands in
    assert named_cell(both, table_cell(PLANS, PLANS.index("$49"))) is None
