"""Numeric columns: numbers as people export them, and the cells that are not numbers.

A file's numbers follow one convention, decided from all its text columns at once:

- decimal point, optional thousands commas ('1,234.5', US/UK);
- decimal comma, optional thousands points ('1.234,5', most of Europe);
- either mark with spaces or apostrophes as thousands separators ('1 234,5', "1'234.5").

Strong evidence decides ('3,14' has a decimal comma; '1,234,567' or '1,234.5' has thousands commas). A file
whose only evidence is ambiguous ('1,234' alone) is read by its separator's convention (';' files: decimal
comma) and the reading names the assumption and the option that settles it (`--decimal`). A file with both
conventions is refused, naming a cell of each.

Cells that are not numbers in a numeric column, and infinite values, are errors naming the column, the count and
the first rows, unless the read repairs them (they are then treated as missing, filled and listed in the repair
report). A column with no number at all is text and is left out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.errors import DataError

from .messages import REPAIR_HINT, cell, plural, rows_phrase
from .table import is_text, text_cells

_GROUP = "[ '\u2019\u00a0\u202f]"  # space-like and apostrophe thousands separators
PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
COMMA_DECIMAL = re.compile(r"^[+-]?\d*,\d+$")  # '3,14' (or '1,234': ambiguous when 3 digits follow)
US_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")  # '1,234' '1,234,567.8'
EU_GROUPED = re.compile(r"^[+-]?\d{1,3}(\.\d{3})+(,\d*)?$")  # '1.234' '1.234.567,8'
SPACE_GROUPED = re.compile(rf"^[+-]?\d{{1,3}}({_GROUP}\d{{3}})+([.,]\d*)?$")  # '1 234,5' "1'234.5"
INFINITY = re.compile(r"^[+-]?(inf|infinity)$", re.IGNORECASE)


@dataclass
class Evidence:
    """What a file's text cells say about its decimal mark: a cell that proves each convention."""

    comma: str | None = None  # a cell that needs a decimal comma
    point: str | None = None  # a cell that needs a decimal point with thousands commas
    ambiguous: str | None = None  # a cell readable both ways ('1,234')


def _evidence_of(values: pd.Series, evidence: Evidence) -> None:
    for text in values:
        if COMMA_DECIMAL.match(text):
            if len(text.split(",")[1]) != 3:
                evidence.comma = evidence.comma or text
            else:
                evidence.ambiguous = evidence.ambiguous or text
        elif US_GROUPED.match(text):
            if text.count(",") > 1 or "." in text:
                evidence.point = evidence.point or text
            else:
                evidence.ambiguous = evidence.ambiguous or text
        elif EU_GROUPED.match(text) and (text.count(".") > 1 or "," in text):
            evidence.comma = evidence.comma or text
        elif SPACE_GROUPED.match(text):
            if "," in text:
                evidence.comma = evidence.comma or text
            elif "." in text:
                evidence.point = evidence.point or text
        if evidence.comma and evidence.point:
            return


def decide_decimal(text_columns: dict[str, pd.Series], separator: str, option: str | None
                   ) -> tuple[str, str | None]:
    """(the decimal mark, a note naming an assumption or None). DataError when the file mixes conventions."""
    if option is not None:
        if option not in (".", ","):
            raise DataError(f"decimal must be '.' or ',', got {cell(option)}")
        return option, None
    evidence = Evidence()
    for values in text_columns.values():
        _evidence_of(values.dropna(), evidence)
        if evidence.comma and evidence.point:
            raise DataError(f"the file mixes number formats: {cell(evidence.point)} has a decimal point and "
                            f"{cell(evidence.comma)} a decimal comma; choose one with --decimal . or --decimal ,")
    if evidence.comma:
        return ",", f"numbers read with a decimal comma (e.g. {cell(evidence.comma)}); --decimal . reads them otherwise"
    if evidence.point:
        return ".", f"numbers read with thousands commas (e.g. {cell(evidence.point)})"
    if evidence.ambiguous:
        mark = "," if separator == ";" else "."
        meaning = "a decimal comma" if mark == "," else "a thousands comma"
        other = "." if mark == "," else ","
        return mark, (f"{cell(evidence.ambiguous)} read with {meaning} (the file is {separator!r}-separated); "
                      f"--decimal {other} reads it the other way")
    return ".", None


def to_numbers(values: pd.Series, decimal: str) -> pd.Series:
    """float64 of stripped text cells (None: missing → NaN); NaN where a cell is not a number."""
    text = values.dropna()
    if decimal == ",":
        text = text.str.replace(rf"({_GROUP}|\.)(?=\d{{3}}(\D|$))", "", regex=True).str.replace(",", ".", regex=False)
    else:
        text = text.str.replace(rf"({_GROUP}|,)(?=\d{{3}}(\D|$))", "", regex=True)
    out = pd.Series(np.nan, index=values.index, dtype="float64")
    out[text.index] = pd.to_numeric(text, errors="coerce")
    return out


@dataclass
class NumericColumns:
    """The value columns of a file. bad: column → (rows, raw cells) of its cells that are not finite numbers
    (blanked in `values`)."""

    values: pd.DataFrame
    dropped: list[str]
    notes: list[str]
    bad: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict)


def read_numbers(cells: pd.DataFrame, *, separator: str, decimal: str | None, lines: np.ndarray, name: str,
                 repair: bool) -> NumericColumns:
    """[N, C] float64 of the numeric columns in file order (missing cells NaN). Text columns (no number at all)
    are left out; unless `repair`, a cell that is not a finite number in a numeric column is a DataError naming
    its column, the count, the first rows and the repair option."""
    text = {c: text_cells(cells[c]) for c in cells.columns if is_text(cells[c])}
    mark, note = decide_decimal(text, separator, decimal)
    columns: dict[str, pd.Series] = {}
    dropped, bad = [], {}
    for c in cells.columns:
        column = cells[c]
        if column.dtype == bool or (c not in text and not pd.api.types.is_numeric_dtype(column)):
            dropped.append(c)
            continue
        if c in text:
            raw = text[c]
            numbers = to_numbers(raw, mark)
            infinite = raw.notna() & raw.fillna("").str.match(INFINITY)
            not_number = (raw.notna() & numbers.isna() & ~infinite).to_numpy()
            if raw.isna().all() or not_number[raw.notna().to_numpy()].all():
                dropped.append(c)
                continue
            problem = not_number | infinite.to_numpy()
        else:
            numbers = column.astype("float64")
            if numbers.isna().all():  # an empty column (a trailing separator on every line)
                dropped.append(c)
                continue
            raw = column
            problem = np.isinf(numbers.to_numpy())
        if problem.any():
            rows = np.flatnonzero(problem)
            bad[c] = (rows, [str(raw.iloc[r]) for r in rows])
            numbers = numbers.where(~problem)
        columns[c] = numbers
    if not columns:
        detail = f" (columns without numbers: {', '.join(dropped[:8])})" if dropped else ""
        raise DataError(f"{name} has no numeric column to forecast{detail}")
    if bad and not repair:
        c, (rows, shown) = next(iter(bad.items()))
        what = "infinite" if all(INFINITY.match(s.strip()) for s in shown) else "not a number"
        raise DataError(f"column {cell(c)}: {plural(len(rows), 'cell')} {what} ({cell(shown[0])} at "
                        f"{rows_phrase(rows, lines)}); fix the cells, or treat them as missing with {REPAIR_HINT}",
                        column=c, row=int(rows[0]), value=shown[0], repairable=True)
    return NumericColumns(pd.DataFrame(columns), dropped, [note] if note else [], bad)


__all__ = ["NumericColumns", "decide_decimal", "read_numbers", "to_numbers"]
