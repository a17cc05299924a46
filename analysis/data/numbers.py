"""Numeric columns: numbers as people export them, and the cells that are not numbers.

A file's numbers follow one convention, decided from every cell of the file (never from its first rows):

- decimal point, optional thousands commas ('1,234.5', US/UK);
- decimal comma, optional thousands points ('1.234,5', most of Europe);
- either mark with spaces or apostrophes as thousands separators ('1 234,5', "1'234.5").

A cell proves a convention when only one reading fits it: '3,14', '0,584' (a thousands group never follows a
leading 0 or -0), '1234,5' (a group has 1–3 digits before it) or '1.234.567' prove a decimal comma; '12.5', '0.584',
'1,234,567' or '1,234.5' a decimal point. '1,234' and '1.234' prove nothing. A file whose cells prove both
conventions is refused, naming a cell of each; a file where nothing proves either and some cell reads both ways
('1,234' could be 1.234 or 1234, '1.000' one or one thousand) is refused too, naming the column and the option that
settles it (`--decimal`): the reader never guesses a factor of 1000.

Columns pandas already read as plain floats are re-read as text when the text cells decided nothing (one column at
a time, until one decides), and all of them when the file's numbers may have a decimal comma (a '1.000' there is
one thousand, not one). Spreadsheet and Parquet cells that are numbers stay numbers.

Cells that are not numbers in a numeric column, infinite values and values too large to compute with (beyond
±MAX_MAGNITUDE, where the mean and variance overflow) are errors naming the column, the count and the first rows,
unless the read repairs them (they are then treated as missing, filled and listed in the repair report). A column
with no number at all (text, true/false, empty) is left out, and a note says which and why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .messages import REPAIR_HINT, cell, names_phrase, plural, rows_phrase
from .table import is_text, text_cells

MAX_MAGNITUDE = 1e150  # |value| above this overflows squares and sums of a column's statistics (1e300 · 1e7 rows)
_GROUP = "[ '\u2019\u00a0\u202f]"  # space-like and apostrophe thousands separators
INTEGER = re.compile(r"^[+-]?\d+([eE][+-]?\d+)?$")
POINT_PLAIN = re.compile(r"^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$")  # '12.5', '.5', '1.234' (ambiguous)
COMMA_PLAIN = re.compile(r"^[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?$")  # '3,14', '0,584', '1,234' (ambiguous)
US_GROUPED = re.compile(r"^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$")  # '1,234' '1,234,567.8' (never '0,584')
EU_GROUPED = re.compile(r"^[+-]?[1-9]\d{0,2}(\.\d{3})+(,\d*)?$")  # '1.234' '1.234.567,8'
SPACE_GROUPED = re.compile(rf"^[+-]?[1-9]\d{{0,2}}({_GROUP}\d{{3}})+([.,]\d*)?$")  # '1 234,5' "1'234.5"
INFINITY = re.compile(r"^[+-]?(inf|infinity)$", re.IGNORECASE)
KINDS = ("comma", "point", "ambiguous comma", "ambiguous point")


@dataclass
class Evidence:
    """What a file's cells say about its decimal mark: for each kind of cell, the first (column, cell) seen."""

    seen: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add(self, kind: str, column: str, values: pd.Series, mask: pd.Series) -> None:
        if kind not in self.seen and mask.any():
            self.seen[kind] = (column, str(values[mask].iloc[0]))

    def first(self, kind: str) -> tuple[str, str] | None:
        return self.seen.get(kind)


def classify(column: str, text: pd.Series, evidence: Evidence) -> None:
    """Add what the stripped cells `text` (no missing cells) prove about the decimal mark to `evidence`."""
    if text.empty:
        return
    point_plain, comma_plain = text.str.match(POINT_PLAIN), text.str.match(COMMA_PLAIN)
    us, eu, space = text.str.match(US_GROUPED), text.str.match(EU_GROUPED), text.str.match(SPACE_GROUPED)
    single_comma = us & (text.str.count(",") == 1) & ~text.str.contains(".", regex=False)
    single_point = eu & (text.str.count(r"\.") == 1) & ~text.str.contains(",", regex=False)
    evidence.add("comma", column, text, (comma_plain & ~single_comma) | (eu & ~single_point)
                 | (space & text.str.contains(",", regex=False)))
    evidence.add("point", column, text, (point_plain & ~single_point) | (us & ~single_comma)
                 | (space & text.str.contains(".", regex=False)))
    evidence.add("ambiguous comma", column, text, single_comma)
    evidence.add("ambiguous point", column, text, single_point)


def decide(evidence: Evidence, option: str | None) -> tuple[str, str | None]:
    """(the decimal mark, a note or None). DataError when the cells prove both marks, or when some cell reads
    both ways and none decides."""
    if option is not None:
        if option not in (".", ","):
            raise DataError(f"decimal must be '.' or ',', got {cell(option)}")
        return option, None
    comma, point = evidence.first("comma"), evidence.first("point")
    if comma and point:
        raise DataError(f"the file mixes number formats: {cell(point[1])} (column {cell(point[0], 30)}) has a "
                        f"decimal point and {cell(comma[1])} (column {cell(comma[0], 30)}) a decimal comma; choose "
                        "one with --decimal . or --decimal ,", column=comma[0], value=comma[1])
    if comma:
        return ",", f"numbers read with a decimal comma (e.g. {cell(comma[1])} in column {cell(comma[0], 30)})"
    if point:
        ambiguous = evidence.first("ambiguous comma")
        return ".", (f"numbers read with thousands commas (e.g. {cell(ambiguous[1])})" if ambiguous else None)
    ambiguous = evidence.first("ambiguous comma")
    if ambiguous:
        column, text = ambiguous
        as_comma = text.replace(".", "").replace(",", ".")
        raise DataError(f"column {cell(column)}: {cell(text)} reads as {as_comma} with a decimal comma or as "
                        f"{text.replace(',', '')} with a thousands comma, and no cell of the file decides; choose "
                        "with --decimal , or --decimal . (in the app: Decimal mark)", column=column, value=text)
    ambiguous = evidence.first("ambiguous point")
    if ambiguous:  # every number is an integer or like '1.000' (one, or one thousand with a decimal comma)
        column, text = ambiguous
        raise DataError(f"column {cell(column)}: {cell(text)} reads as {text} with a decimal point or as "
                        f"{text.replace('.', '')} with a thousands point, and no cell of the file decides; choose "
                        "with --decimal . or --decimal , (in the app: Decimal mark)", column=column, value=text)
    return ".", None


def _point_proof(values: np.ndarray) -> str | None:
    """A value of a float column whose text must have proved a decimal point, or None (then the text is read).

    pandas parses only point-decimal floats, so a value's text is '12.3456', '1234.5', '1.000', '1', '1e-05' or the
    like. A value with 1 ≤ |v| < 1000 that is not a whole number of thousandths had more than three decimals
    ('1.2345': not a thousands group); a fractional value with |v| ≥ 1000 had four or more digits before its point.
    Exponent forms ('1e-05', '5e+20': one-digit mantissas, as exporters write them) give neither. Smaller values are
    not used: '0.5' proves a point but '123e-5' would not."""
    v = values[np.isfinite(values)]
    size = np.abs(v)
    mid = v[(size >= 1) & (size < 1000)] * 1000  # |error| < 1e-9 for a text with at most three decimals
    big = v[size >= 1000]
    hit = np.concatenate([mid[np.abs(mid - np.rint(mid)) > 1e-6] / 1000, big[big != np.rint(big)]])
    return None if hit.size == 0 else repr(float(hit[0]))


def _decided(evidence: Evidence) -> bool:
    return bool(evidence.first("comma") or evidence.first("point"))


def to_numbers(values: pd.Series, decimal: str) -> pd.Series:
    """float64 of stripped text cells (None: missing → NaN); NaN where a cell is not a number written with the
    decimal mark `decimal` (and its thousands separators)."""
    text = values.dropna()
    out = pd.Series(np.nan, index=values.index, dtype="float64")
    if text.empty:
        return out
    space = text.str.match(SPACE_GROUPED)
    if decimal == ",":
        ok = text.str.match(INTEGER) | text.str.match(COMMA_PLAIN) | text.str.match(EU_GROUPED) | \
            (space & ~text.str.contains(".", regex=False))
        clean = text[ok].str.replace(rf"{_GROUP}|\.", "", regex=True).str.replace(",", ".", regex=False)
    else:
        ok = text.str.match(INTEGER) | text.str.match(POINT_PLAIN) | text.str.match(US_GROUPED) | \
            (space & ~text.str.contains(",", regex=False))
        clean = text[ok].str.replace(rf"{_GROUP}|,", "", regex=True)
    with np.errstate(over="ignore"):
        out[clean.index] = pd.to_numeric(clean, errors="coerce").astype("float64")
    return out


@dataclass
class NumericColumns:
    """The value columns of a file. bad: column → (rows, raw cells) of its cells that are not finite numbers of a
    usable size (blanked in `values`); dropped: columns left out; why: column → the reason it was left out."""

    values: pd.DataFrame
    dropped: list[str]
    notes: list[str]
    bad: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)


def _typed_split(column: pd.Series) -> tuple[pd.Series, pd.Series]:
    """An object column of a spreadsheet: (its number cells as float64 with NaN elsewhere, its other cells as
    stripped text with None elsewhere)."""
    is_number = column.map(lambda v: isinstance(v, (int, float, np.integer, np.floating))
                           and not isinstance(v, (bool, np.bool_)) and not pd.isna(v)).astype(bool)
    numbers = pd.to_numeric(column.where(is_number), errors="coerce").astype("float64")
    return numbers, text_cells(column.where(~is_number))


def dropped_note(why: dict[str, str]) -> str | None:
    """'left out of the model: 'summary' (text, e.g. 'sunny'), 'ok' (true/false), 'spare' (empty)'."""
    if not why:
        return None
    parts = [f"{cell(c, 30)} ({reason})" for c, reason in why.items()]
    return "left out of the model (no numbers): " + names_phrase(parts, quoted=False)


def read_numbers(cells: pd.DataFrame, *, decimal: str | None, lines: np.ndarray, name: str, repair: bool,
                 reread: Callable[[list[str]], pd.DataFrame] | None = None, typed: bool = False) -> NumericColumns:
    """[N, C] float64 of the numeric columns in file order (missing cells NaN). Columns without any number are
    left out (see `NumericColumns.why`); unless `repair`, a cell that is not a finite number of a usable size in a
    numeric column is a DataError naming its column, the count, the first rows and the repair option.

    reread(columns): the cells of those columns as the file's text (None: missing), for float columns of a file
    whose numbers may have a decimal comma. typed: a spreadsheet or Parquet file (numbers are numbers)."""
    text: dict[str, pd.Series] = {}
    typed_numbers: dict[str, pd.Series] = {}
    for c in cells.columns:
        if is_text(cells[c]):
            if typed:
                typed_numbers[c], text[c] = _typed_split(cells[c])
            else:
                text[c] = text_cells(cells[c])
    evidence = Evidence()
    for c, values in text.items():
        classify(c, values.dropna(), evidence)
    floats = [c for c in cells.columns if c not in text and not typed and cells[c].dtype.kind == "f"]
    if floats and reread is not None and decimal is None and not _decided(evidence):
        for c in floats:  # pandas read '1.000' as 1.0: the text decides (the first column that proves a mark ends it)
            proof = _point_proof(cells[c].to_numpy())
            if proof is not None:
                evidence.seen["point"] = (c, proof)
                break
            classify(c, text_cells(reread([c])[c]).dropna(), evidence)
            if _decided(evidence):
                break
    commas = decimal == "," or (decimal is None and (evidence.first("comma") or evidence.first("ambiguous comma")))
    if commas and floats and reread is not None:  # '1.000' is one thousand in a decimal-comma file
        again = reread(floats)
        for c in floats:
            text[c] = text_cells(again[c])
            classify(c, text[c].dropna(), evidence)
    mark, note = decide(evidence, decimal)
    columns: dict[str, pd.Series] = {}
    dropped, bad, why = [], {}, {}
    for c in cells.columns:
        column = cells[c]
        if column.dtype == bool or pd.api.types.is_bool_dtype(column):
            why[c] = "true/false"
            continue
        if c in text:
            raw = text[c]
            numbers = to_numbers(raw, mark)
            if c in typed_numbers:
                numbers = numbers.fillna(typed_numbers[c])
                raw = raw.where(raw.notna(), typed_numbers[c].map(lambda v: None if pd.isna(v) else repr(v)))
            infinite = raw.notna() & raw.fillna("").str.match(INFINITY)
            not_number = (raw.notna() & numbers.isna() & ~infinite).to_numpy()
            if raw.isna().all():
                why[c] = "empty"
                continue
            if not_number[raw.notna().to_numpy()].all():
                sample = raw.dropna()
                lowered = set(sample.str.lower().unique()[:3])
                why[c] = "true/false" if lowered <= {"true", "false"} else f"text, e.g. {cell(sample.iloc[0], 20)}"
                continue
            problem = not_number | infinite.to_numpy()
        elif pd.api.types.is_numeric_dtype(column):
            numbers = column.astype("float64")
            if numbers.isna().all():  # an empty column (a trailing separator on every line)
                why[c] = "empty"
                continue
            raw = column
            problem = np.isinf(numbers.to_numpy())
        else:
            why[c] = "dates" if pd.api.types.is_datetime64_any_dtype(column) else "not numbers"
            continue
        values = numbers.to_numpy()
        with np.errstate(invalid="ignore"):
            problem = problem | (np.abs(values) > MAX_MAGNITUDE) & np.isfinite(values)
        if problem.any():
            rows = np.flatnonzero(problem)
            bad[c] = (rows, [str(raw.iloc[r]) for r in rows])
            numbers = numbers.where(~problem)
        columns[c] = numbers
    dropped = list(why)
    if not columns:
        detail = f" (columns without numbers: {names_phrase(dropped)})" if dropped else ""
        raise DataError(f"no numeric column to forecast in {cell(name, 60)}{detail}")
    if bad and not repair:
        raise _bad_cells_error(bad, lines)
    notes = [n for n in (note, dropped_note(why)) if n]
    return NumericColumns(pd.DataFrame(columns), dropped, notes, bad, why)


def _bad_cells_error(bad: dict[str, tuple[np.ndarray, list[str]]], lines: np.ndarray) -> DataError:
    c, (rows, shown) = next(iter(bad.items()))
    where = f"({cell(shown[0])} at {rows_phrase(rows, lines)})"
    if all(INFINITY.match(s.strip()) for s in shown):
        problem = f"{plural(len(rows), 'cell')} infinite {where}"
    elif all(_too_large(s) for s in shown):
        problem = (f"{plural(len(rows), 'cell')} too large to compute with {where}: beyond ±{MAX_MAGNITUDE:.0e} the "
                   "mean and variance overflow; rescale the column (or it is a placeholder)")
    else:
        problem = f"{plural(len(rows), 'cell')} not a number {where}"
    return DataError(f"column {cell(c)}: {problem}; fix the cells, or treat them as missing with {REPAIR_HINT}",
                     column=c, row=int(rows[0]), value=shown[0], repairable=True)


def _too_large(text: str) -> bool:
    try:
        value = float(str(text).replace(",", "."))
    except ValueError:
        return False
    return np.isfinite(value) and abs(value) > MAX_MAGNITUDE


__all__ = ["MAX_MAGNITUDE", "NumericColumns", "classify", "decide", "read_numbers", "to_numbers"]
