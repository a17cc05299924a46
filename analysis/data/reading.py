"""Stage 1 of the data pipeline: read a CSV (path, bytes or upload) into a regular SeriesFrame, or say why not.

    read_source / decode / read_table      bytes → text → cells                    (table.py)
    find_times                             which column holds the timestamps      (timestamps.py)
    read_numbers                           the numeric columns                     (numbers.py)
    regularise                             order, duplicates, gaps, missing cells  (repair.py)

`ReadOptions` carries what a user can settle: the datetime column, the repair (`"none"` refuses an irregular file
and names the option that repairs it), the frequency, day-first dates, the decimal mark. Every change a repair
makes is in `SeriesFrame.repairs`; every assumption the reading made is in `SeriesFrame.notes`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import pandas as pd

from analysis.errors import DataError

from .messages import cell
from .numbers import read_numbers
from .repair import FILLS, Fill, RepairReport, empty_report, regularise
from .table import Progress, Source, decode, is_text, read_source, read_table, text_cells
from .timestamps import TIME_NAMES, find_times

logger = logging.getLogger(__name__)

DATETIME_NAMES = TIME_NAMES  # kept for callers of the old name


@dataclass(frozen=True)
class ReadOptions:
    """How to read a CSV. repair: "none" (refuse what is irregular), "interpolate" or "ffill" (see repair.py);
    freq: the grid to regularise to (None: inferred); dayfirst: None decides from the column; decimal: "." or
    "," (None: decided from the file)."""

    datetime_column: str | None = None
    repair: Fill = "none"
    freq: str | None = None
    dayfirst: bool | None = None
    decimal: str | None = None

    def __post_init__(self):
        if self.repair not in FILLS:
            raise DataError(f"repair must be one of {', '.join(FILLS)}, got {cell(self.repair)}")
        if self.decimal not in (None, ".", ","):
            raise DataError(f"decimal must be '.' or ',', got {cell(self.decimal)}")

    @property
    def repairs(self) -> bool:
        return self.repair != "none"


@dataclass(frozen=True, eq=False)
class SeriesFrame:
    """A validated, regularly spaced multivariate series.

    timestamps:      [N] strictly increasing, evenly spaced by `freq`
    values:          [N, C] float64, the numeric columns in file order, indexed by `timestamps`
    datetime_column: the column the timestamps came from
    freq:            pandas offset alias ('h', '15min', 'D', 's', 'W-SUN', 'MS', ...)
    name:            the file name, or 'upload' for raw bytes
    dropped_columns: columns with no numeric value at all (text or empty), left out of `values`
    repairs:         every change a repair made (empty when the file needed none)
    notes:           assumptions the reading made (decimal mark, date order, UTC offsets, renamed columns)
    """

    timestamps: pd.DatetimeIndex
    values: pd.DataFrame
    datetime_column: str
    freq: str
    name: str
    dropped_columns: tuple[str, ...] = ()
    repairs: RepairReport = field(default_factory=empty_report)
    notes: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.values.columns)

    @property
    def n_rows(self) -> int:
        return len(self.timestamps)


def load_csv(source: Source, options: ReadOptions | None = None, *, progress: Progress | None = None,
             **settings) -> SeriesFrame:
    """Read, validate and (when `options.repair` says so) repair a CSV of timestamps and numeric columns.

    `source` is a path (str / Path), the file's bytes, or a binary file-like object (Streamlit's UploadedFile).
    `settings` are ReadOptions fields (`load_csv(path, datetime_column="ds", repair="interpolate")`).
    `progress(fraction, what)` is called while a big file is read.

    Raises DataError naming the problem, column, row and value, with `repairable` set (and the option named)
    where a repair would fix it: an empty file or no data rows, bytes that are not UTF-8, no datetime column,
    unreadable or missing timestamps, cells that are not numbers, infinite values, no numeric column, duplicated
    or unsorted timestamps, irregular spacing, missing values, and a step the time features cannot encode.
    """
    options = replace(options or ReadOptions(), **settings) if settings else (options or ReadOptions())
    data, name = read_source(source)
    table = read_table(decode(data), name, repair=options.repairs, progress=progress)
    notes = [f"column {position + 1} {'had no name' if not old else f'repeats {old!r}'}: named {new!r}"
             for position, old, new in table.renamed]
    times = find_times(table, options.datetime_column, options.dayfirst)
    notes += [times.note] if times.note else []
    if progress is not None:
        progress(1.0, "reading the numbers")
    rest = table.cells.drop(columns=[times.column])
    numbers = read_numbers(rest, separator=table.separator, decimal=options.decimal, lines=table.lines, name=name,
                           repair=options.repairs)
    notes += numbers.notes
    raw_times = text_cells(table.cells[times.column]) if is_text(table.cells[times.column]) \
        else table.cells[times.column].astype(object)
    timestamps, values, freq, report = regularise(
        times.values, numbers.values, raw_times=raw_times, column=times.column, lines=table.lines,
        fill=options.repair, freq=options.freq, bad_cells=numbers.bad)
    timestamps = pd.DatetimeIndex(timestamps, name=times.column)
    values.index = timestamps
    logger.info("loaded %s: %d rows, %d numeric columns, freq %s, %d repairs", name, len(timestamps),
                values.shape[1], freq, len(report.changes))
    return SeriesFrame(timestamps, values, times.column, freq, name, tuple(numbers.dropped), report, tuple(notes))


__all__ = ["DATETIME_NAMES", "ReadOptions", "SeriesFrame", "Source", "load_csv"]
