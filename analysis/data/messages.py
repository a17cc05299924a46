"""The phrases every data message is built from: where a row sits in the file, a cell shown short, a few rows listed.

Messages name the file, column, row and value, and stay short: a cell is cut to `CELL_CHARS` characters (and
every error message to 300, by `analysis.errors`), so a 10-MB cell never becomes a 10-MB error line.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

CELL_CHARS = 40
SHOWN_ROWS = 3
REPAIR_HINT = "--repair interpolate or --repair ffill (in the app: Repair)"


def cell(value: object, limit: int = CELL_CHARS) -> str:
    """repr() of a cell, cut to `limit` characters with an ellipsis: "'2021-13-01'", "'aaaa…' (10,000,000 chars)"."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def where_in_file(row: int, lines: np.ndarray | None) -> str:
    """'row 5 (line 6 of the file)' for 0-based data row 4; 'row 5' when the file lines are unknown."""
    if lines is None:
        return f"row {row + 1}"
    return f"row {row + 1} (line {int(lines[row])} of the file)"


def rows_phrase(rows: Sequence[int], lines: np.ndarray | None, shown: int = SHOWN_ROWS) -> str:
    """'row 4 (line 5 of the file)', or 'rows 4, 9 and 12 (lines 5, 10, 13)', or 'rows 4, 9, 12, … (lines …)'."""
    rows = [int(r) for r in rows]
    if len(rows) == 1:
        return where_in_file(rows[0], lines)
    first = rows[:shown]
    more = len(rows) > shown
    numbers = ", ".join(str(r + 1) for r in first) + (", …" if more else "")
    if lines is None:
        return f"rows {numbers}"
    return f"rows {numbers} (lines {', '.join(str(int(lines[r])) for r in first)}{', …' if more else ''})"


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 gap', '3 gaps', '1,204 cells'."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def names_phrase(names: Sequence[str], budget: int = 120, *, quoted: bool = True) -> str:
    """Names listed within about `budget` characters, each cut short: "'a', 'b', 'c', … (40 in all)". The echoed
    content of a message stays bounded, so cutting a message to its 300 characters never cuts its cause."""
    names = list(names)
    shown, used = [], 0
    for name in names:
        text = cell(name, 30) if quoted else str(name)
        if shown and used + len(text) > budget:
            break
        shown.append(text)
        used += len(text) + 2
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f", … ({len(names):,} in all)" if rest else "")


def short_name(name: str, limit: int = 60) -> str:
    """A file name cut in its middle when long ('very-long-na…e.csv'), so its extension stays visible."""
    text = str(name)
    if len(text) <= limit:
        return text
    keep = limit - 1
    return f"{text[: keep - keep // 3]}…{text[-(keep // 3):]}"
