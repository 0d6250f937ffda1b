"""CSV bytes or text → a Table of cells: header, rows, missing cells; cells read as numbers or
weights, and each column's kind guessed from its cells."""

from __future__ import annotations

import csv
import io
import math
import os
from typing import Any, IO, NamedTuple, Sequence

import numpy as np

from ..decoding import decode
from ..errors import TextnbError


class TableError(TextnbError):
    """A table cannot be used: ragged rows, a missing column, a value of the wrong type."""


class Table(NamedTuple):
    """A CSV file's header and rows of cell strings (each row as long as the header)."""

    columns: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        """The cells of column ``name``; TableError naming the columns if there is none."""
        return [row[0] for row in self.select([name])]

    def index(self, names: Sequence[str]) -> list[int]:
        """Positions of ``names`` in the header; TableError naming the columns if one is missing."""
        missing = [name for name in names if name not in self.columns]
        if missing:
            raise TableError(f"no column {missing[0]!r}; the columns are "
                             f"{', '.join(self.columns)}")
        return [self.columns.index(name) for name in names]

    def select(self, names: Sequence[str]) -> list[list[str]]:
        """Rows restricted to ``names``, in that order; TableError for a missing column."""
        index = self.index(names)
        return [[row[i] for i in index] for row in self.rows]


def read_csv(source: str | os.PathLike | IO[bytes] | IO[str]) -> Table:
    """Read a CSV file (path or open file) with a header row into a :class:`Table`.

    Bytes are decoded like documents (UTF-8, else Windows-1252; a BOM is dropped); blank lines
    are skipped. TableError for an empty file, a blank or repeated column name, or a row
    whose number of cells differs from the header's.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            raw = f.read()
    else:
        raw = source.read()
    text = decode(raw) if isinstance(raw, bytes) else raw
    # newline="": rows end at CR, LF or CRLF, as the csv module asks (a file of CR-only lines,
    # or a stray CR, raised csv.Error: "new-line character seen in unquoted field").
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        records = [r for r in reader if r]
    except csv.Error as error:  # a cell over the csv module's 131,072 characters, say
        raise TableError(f"line {reader.line_num}: {error}") from None
    if not records:
        raise TableError("the table is empty: a header row is needed")
    header = [name.strip() for name in records[0]]
    for j, name in enumerate(header):
        if not name:
            raise TableError(f"column {j + 1} of the header has no name")
        if name in header[:j]:
            raise TableError(f"column {name!r} appears twice in the header")
    for i, row in enumerate(records[1:], 1):
        if len(row) != len(header):
            raise TableError(f"row {i} has {len(row)} cells but the header has {len(header)}")
    return Table(header, records[1:])


# A cell holding only this is missing, as an empty one is (the UCI tables' convention).
MISSING = "?"


def clean_cell(cell: Any) -> str | None:
    """A cell as a stripped string, or None when it is empty or ``?`` (missing)."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return None
    text = str(cell).strip()
    return text if text and text != MISSING else None


def parse_numbers(cells: Sequence[Any], column: str) -> np.ndarray:
    """Cells → float ndarray of shape (n,), NaN where empty; TableError naming row and column."""
    values = np.full(len(cells), np.nan)
    for i, cell in enumerate(cells):
        text = clean_cell(cell)
        if text is None:
            continue
        try:
            values[i] = float(text)
        except ValueError:
            raise TableError(f"row {i + 1}, column {column!r}: {text!r} is not a number") from None
        if np.isinf(values[i]):
            raise TableError(f"row {i + 1}, column {column!r}: {text!r} is not a finite number")
    return values


def parse_weights(cells: Sequence[Any], column: str) -> np.ndarray:
    """Cells → row weights (counts) of shape (n,); TableError for an empty or negative one."""
    weight = parse_numbers(cells, column)
    first_bad(~(weight >= 0), weight, column, "a weight ≥ 0")
    return weight


def infer_kind(cells: Sequence[Any]) -> str:
    """``gaussian`` when every non-empty cell reads as a number, else ``categorical``."""
    try:
        parse_numbers(cells, "")
    except TableError:
        return "categorical"
    return "gaussian"


def first_bad(mask: np.ndarray, values: np.ndarray, column: str, need: str) -> None:
    """TableError for the first row where ``mask`` holds: its value violates ``need``."""
    if mask.any():
        i = int(np.argmax(mask))
        shown = "an empty cell" if np.isnan(values[i]) else f"{values[i]:g}"
        raise TableError(f"row {i + 1}, column {column!r}: {shown} is not {need}")
