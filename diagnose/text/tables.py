"""Plain-text tables: a value in a cell is read by its row and its column, not by its neighbours.

A table here is a block of two or more consecutive lines with at least two
``|``-separated cells each (Markdown tables, flattened spreadsheet rows). Its first line is the
header when none of its cells holds a digit (a row of data is no header); a
``|---|---|`` rule line is skipped. Next to a value in a cell, the words that
tell what it is are the row's first cell ("PSU-250-24", "Pro plan") and the
column's header ("Input (AC)", "Maximum"), not the cell to its left, which
belongs to another column (:func:`table_cell`). When a question's subject names some columns
("Basic | *Pro* | Enterprise") or rows, only their cells answer it (:func:`names_cell`), and a
value read from another cell stands for the named cell of its row or column (:func:`named_cell`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diagnose.text.sentences import overlap

_RULE = re.compile(r"^[\s|:+-]*$")


def _cells(line: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each cell of ``line`` (outer pipes dropped), offsets within the line."""
    bounds = [-1] + [m.start() for m in re.finditer(r"\|", line)] + [len(line)]
    spans = [(a + 1, b) for a, b in zip(bounds, bounds[1:])]
    if spans and not line[spans[0][0]:spans[0][1]].strip():
        spans = spans[1:]  # "| a | b |": nothing before the first pipe
    if spans and not line[spans[-1][0]:spans[-1][1]].strip():
        spans = spans[:-1]
    return spans


def _is_row(line: str) -> bool:
    return len(_cells(line)) >= 2 and not _RULE.match(line)


def _line(text: str, position: int) -> tuple[int, int]:
    """The ``(start, end)`` of the line of ``text`` that holds ``position``."""
    end = text.find("\n", position)
    return text.rfind("\n", 0, position) + 1, len(text) if end < 0 else end


def table_row(text: str, position: int) -> tuple[int, int] | None:
    """The ``(start, end)`` of the table row whose cell holds ``position`` (None outside a table's cells)."""
    return _line(text, position) if table_cell(text, position) is not None else None


@dataclass(frozen=True)
class Cell:
    """A data cell of a table and the labels that say what its value is."""

    column: int
    """The cell's column (0: the row labels' column)."""
    text: str
    """The cell as written, stripped."""
    header: str
    """Its column's header ("" when the table has no header row)."""
    row_label: str
    """Its row's first cell ("" for a cell of the first column)."""
    headers: tuple[str, ...]
    """Every column's header (empty without a header row)."""
    rows: tuple[tuple[str, ...], ...]
    """Every data row's cells, as written and stripped."""

    @property
    def row_labels(self) -> tuple[str, ...]:
        """Every data row's first cell."""
        return tuple(row[0] for row in self.rows)

    @property
    def labels(self) -> str:
        """Its column's header and its row's label: what they say of every value in the cell."""
        return " ".join(p for p in (self.header, self.row_label) if p)


def table_cell(text: str, position: int) -> Cell | None:
    """The table cell of ``text`` that holds ``position``: None when the position is in no table
    row, or in the header row itself."""
    line_start, line_end = _line(text, position)
    line = text[line_start:line_end]
    if not _is_row(line):
        return None
    cells = _cells(line)
    column = next((k for k, (a, b) in enumerate(cells) if a <= position - line_start <= b), None)
    if column is None:
        return None
    block_start = line_start
    while block_start > 0:
        previous_start, previous_end = _line(text, block_start - 1)
        previous = text[previous_start:previous_end]
        if not (_is_row(previous) or (_RULE.match(previous) and "|" in previous)):
            break
        block_start = previous_start
    following = text[slice(*_line(text, line_end + 1))] if line_end < len(text) else ""
    if block_start == line_start and not _is_row(following):
        return None  # one line with pipes (a breadcrumb, a flattened page) is no table
    first = text[slice(*_line(text, block_start))]
    header = None if any(ch.isdigit() for ch in first) else first
    if header is not None and block_start == line_start:
        return None  # the header row: its cells name columns, they are no values
    headers = tuple(_texts(header)) if header is not None else ()
    if len(headers) == len(cells) - 1:
        headers = ("",) + headers  # "Basic | Pro" over "Price | $9 | $19": no header over the row labels
    rows = tuple(tuple(_texts(row)) for row in _block_rows(text, block_start)[1 if header is not None else 0:])
    own = _texts(line)
    return Cell(
        column=column,
        text=own[column],
        header=headers[column] if column < len(headers) else "",
        row_label=own[0] if column > 0 else "",
        headers=headers,
        rows=rows,
    )


def names_cell(tokens: list[str], cell: Cell) -> bool:
    """Whether ``tokens`` (a question's subject, :func:`diagnose.text.questions.subject_text`) leave
    ``cell`` among the cells that answer: when they name some column's header (past the row labels'
    column: "Basic | *Pro* | Enterprise"), only the cells of the named columns do; when they name
    some row's label, only those of the named rows."""
    columns, rows = _named_columns(tokens, cell), [row[0] for row in _named_rows(tokens, cell)]
    return (not columns or cell.column in columns) and (not rows or cell.row_label in rows or
                                                        cell.column == 0 and cell.text in rows)


def _named_columns(tokens: list[str], cell: Cell) -> list[int]:
    """The columns of ``cell``'s table whose header ``tokens`` name (past the row labels' column)."""
    return [k for k, h in enumerate(cell.headers) if k > 0 and overlap(tokens, h) > 0]


def _named_rows(tokens: list[str], cell: Cell) -> list[tuple[str, ...]]:
    """The data rows of ``cell``'s table whose label ``tokens`` name."""
    return [row for row in cell.rows if overlap(tokens, row[0]) > 0]


def named_cell(tokens: list[str], cell: Cell) -> str | None:
    """The text of the cell that ``tokens`` (a question's subject) name in place of ``cell``, one
    they leave out (:func:`names_cell`): in its row, the one column they name ("Hobby | Pro |
    Enterprise": a value read from the Enterprise column, the Pro one's); in its column, the one
    row they name. None when ``cell`` answers, or they name no single such cell."""
    if names_cell(tokens, cell):
        return None
    columns = _named_columns(tokens, cell) or [cell.column]
    rows = _named_rows(tokens, cell) or [row for row in cell.rows if cell.column > 0 and row[0] == cell.row_label]
    if len(columns) != 1 or len(rows) != 1 or columns[0] >= len(rows[0]):
        return None
    return rows[0][columns[0]]


def cell_context(text: str, position: int) -> str | None:
    """The words that say what the value at ``position`` of ``text`` is, when it stands in a
    table cell (:func:`table_cell`): the column's header, the row's first cell and the cell itself."""
    cell = table_cell(text, position)
    return None if cell is None else " ".join(p for p in (cell.labels, cell.text) if p)


def _texts(line: str) -> list[str]:
    return [line[a:b].strip() for a, b in _cells(line)]


def _block_rows(text: str, block_start: int) -> list[str]:
    """The rows of the table that starts at ``block_start`` (rule lines left out)."""
    rows, start = [], block_start
    while start < len(text):
        end = _line(text, start)[1]
        line = text[start:end]
        if _is_row(line):
            rows.append(line)
        elif not (_RULE.match(line) and "|" in line):
            break
        start = end + 1
    return rows
