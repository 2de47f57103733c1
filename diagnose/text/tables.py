"""Plain-text tables: a value in a cell is read by its row and its column, not by its neighbours.

A table here is a block of two or more consecutive lines with at least two
``|``-separated cells each (Markdown tables, flattened spreadsheet rows). Its first line is the
header when none of its cells holds a digit (a row of data is no header); a
``|---|---|`` rule line is skipped. Next to a value in a cell, the words that
tell what it is are the row's first cell ("PSU-250-24", "Pro plan") and the
column's header ("Input (AC)", "Maximum"), not the cell to its left, which
belongs to another column.
"""

from __future__ import annotations

import re

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
    return _line(text, position) if cell_context(text, position) is not None else None


def cell_context(text: str, position: int) -> str | None:
    """The words that say what the value at ``position`` of ``text`` is, when it stands in a
    table cell: the column's header, the row's first cell and the cell itself. None when the
    position is in no table row, or in the header row itself."""
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
    parts = []
    if header is not None:
        header_cells = _cells(header)
        if column < len(header_cells):
            a, b = header_cells[column]
            parts.append(header[a:b].strip())
    if column > 0:
        a, b = cells[0]
        parts.append(line[a:b].strip())
    a, b = cells[column]
    parts.append(line[a:b].strip())
    return " ".join(parts)
