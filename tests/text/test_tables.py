from diagnose.text.tables import cell_context, table_row

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
