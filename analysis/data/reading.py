"""Stage 1 of the data pipeline: read a data file (path, bytes or upload) into a regular SeriesFrame, or say why not.

    read_source / open_table               bytes → cells: CSV, .gz/.zip, .xlsx, Parquet  (table.py, sources.py)
    find_times                             which column holds the timestamps      (timestamps.py, calendar_columns.py)
    find_id_column                         a long table's series id                (long_tables.py)
    read_numbers                           the numeric columns                     (numbers.py)
    regularise / read_long                 order, duplicates, gaps, missing cells  (repair.py, long_align.py)

`ReadOptions` carries what a user can settle: the datetime column (or two: `year,quarter`), the repair (`"none"`
refuses an irregular file and names the option that repairs it), the frequency, day-first dates, the decimal mark,
a spreadsheet's sheet, a long table's id column and the series to read. Every change a repair makes is in
`SeriesFrame.repairs`; every assumption the reading made is in `SeriesFrame.notes`.
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, replace

import pandas as pd

from informer_lab.analysis.errors import DataError, short

from .long_tables import LongTable, find_id_column, read_long
from .messages import cell
from .numbers import read_numbers
from .repair import FILLS, Fill, RepairReport, empty_report, regularise
from .sources import open_table
from .table import Progress, Source, is_text, read_source, text_cells
from .timestamps import TIME_NAMES, find_times, row_index_columns

logger = logging.getLogger(__name__)

DATETIME_NAMES = TIME_NAMES  # kept for callers of the old name


@dataclass(frozen=True)
class ReadOptions:
    """How to read a file. datetime_column: a column, or 'year,quarter' (also year,month / year,week); repair:
    "none" (refuse what is irregular), "interpolate" or "ffill" (see repair.py); freq: the grid to regularise to
    (None: inferred); dayfirst: None decides from the column; decimal: "." or "," (None: decided from the file);
    sheet: a spreadsheet's sheet (None: the first); id_column: a long table's series id (None: found by content);
    series: the series of a long table to read (None: all; each item an id or ids separated by commas)."""

    datetime_column: str | None = None
    repair: Fill = "none"
    freq: str | None = None
    dayfirst: bool | None = None
    decimal: str | None = None
    sheet: str | None = None
    id_column: str | None = None
    series: tuple[str, ...] | None = None

    def __post_init__(self):
        if self.repair not in FILLS:
            raise DataError(f"repair must be one of {', '.join(FILLS)}, got {cell(self.repair)}")
        if self.decimal not in (None, ".", ","):
            raise DataError(f"decimal must be '.' or ',', got {cell(self.decimal)}")
        if isinstance(self.series, str):
            object.__setattr__(self, "series", (self.series,))
        elif self.series is not None:
            object.__setattr__(self, "series", tuple(str(s) for s in self.series) or None)
        for name in ("datetime_column", "freq", "sheet", "id_column"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise DataError(f"{name.replace('_', ' ')} must be a non-empty name, got {cell(value)}")

    @property
    def key(self) -> str:
        """Every option, unambiguously (for cache keys)."""
        return json.dumps(asdict(self), sort_keys=True, default=list)

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
    dropped_columns: columns with no numeric value at all (text, true/false, empty), left out of `values`
    repairs:         every change a repair made (empty when the file needed none)
    notes:           assumptions the reading made (decimal mark, date order, UTC offsets, renamed columns, the
                     columns left out and why, a long table's id column and the span its series share)
    long:            a long table's id column and series (None for a wide table)
    dropped_why:     column → why it was left out ('text, e.g. …', 'true/false', 'empty')
    """

    timestamps: pd.DatetimeIndex
    values: pd.DataFrame
    datetime_column: str
    freq: str
    name: str
    dropped_columns: tuple[str, ...] = ()
    repairs: RepairReport = field(default_factory=empty_report)
    notes: tuple[str, ...] = ()
    long: LongTable | None = None
    dropped_why: tuple[tuple[str, str], ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.values.columns)

    @property
    def n_rows(self) -> int:
        return len(self.timestamps)


def load_csv(source: Source, options: ReadOptions | None = None, *, progress: Progress | None = None,
             **settings) -> SeriesFrame:
    """Read, validate and (when `options.repair` says so) repair a data file: CSV (any separator, .gz/.bz2/.xz, a
    .zip holding one), a spreadsheet (.xlsx) or Parquet, wide (a time column, one column per variable) or long
    (an id column, a time column, values).

    `source` is a path (str / Path), the file's bytes, or a binary file-like object (Streamlit's UploadedFile).
    `settings` are ReadOptions fields (`load_csv(path, datetime_column="ds", repair="interpolate")`).
    `progress(fraction, what)` is called while a big file is read.

    Raises DataError naming the problem, column, row and value, with `repairable` set (and the option named)
    where a repair would fix it: an empty file or no data rows, bytes that are not UTF-8, no datetime column,
    unreadable or missing timestamps, cells that are not numbers, infinite or overflowing values, no numeric
    column, duplicated or unsorted timestamps, irregular spacing, missing values, a step the time features cannot
    encode; for a long table (SeriesError, with its series) an unknown series, series sharing no span or stepping
    differently, and the same checks per series, naming it.
    """
    options = replace(options or ReadOptions(), **settings) if settings else (options or ReadOptions())
    data, name = read_source(source)
    table = open_table(data, name, sheet=options.sheet, repair=options.repairs, progress=progress)
    notes = [f"column {position + 1} {'had no name' if not old else f'repeats {old!r}'}: named {new!r}"
             for position, old, new in table.renamed]
    times = find_times(table, options.datetime_column, options.dayfirst)
    notes += [times.note] if times.note else []
    id_column, id_note = find_id_column(table, times, options.id_column)
    if id_column is None and options.series:
        raise DataError("--series picks series of a long table, but no column says which series a row belongs to; "
                        "name it with --id-column (in the app: Series id column)")
    if progress is not None:
        progress(1.0, "reading the numbers")
    index = row_index_columns(table, (*times.sources, *([id_column] if id_column else [])))
    notes += [f"column {c!r} (no name in the file, {_span(table.cells[c])}) is a row index, as pandas writes one, "
              "not a variable: left out" for c in index]
    rest = table.cells.drop(columns=[*times.sources, *([id_column] if id_column else []), *index])
    numbers = read_numbers(rest, decimal=options.decimal, lines=table.lines, name=name, repair=options.repairs,
                           reread=table.reread, typed=table.typed)
    raw_times = _raw_times(table, times)
    long = None
    if id_column is not None:
        try:
            timestamps, values, freq, report, long_notes, long = read_long(
                table, times, id_column, numbers, raw_times=raw_times, options=options, note=id_note)
        except DataError as err:
            if id_note is None:  # the user named the id column: the message stands as it is
                raise
            err.args = (short(f"{err} (the series id {id_column!r} was found by content; --id-column names "
                              "another)"),)
            raise
        notes = long_notes[:1] + notes + numbers.notes + long_notes[1:]
    else:
        notes += numbers.notes
        timestamps, values, freq, report = regularise(
            times.values, numbers.values, raw_times=raw_times, column=times.column, lines=table.lines,
            fill=options.repair, freq=options.freq, bad_cells=numbers.bad)
    timestamps = pd.DatetimeIndex(timestamps, name=times.column)
    values.index = timestamps
    logger.info("loaded %s: %d rows, %d numeric columns, freq %s, %d repairs", name, len(timestamps),
                values.shape[1], freq, len(report.changes))
    return SeriesFrame(timestamps, values, times.column, freq, name, tuple(numbers.dropped), report, tuple(notes),
                       long, tuple(numbers.why.items()))


def _span(column: pd.Series) -> str:
    values = pd.to_numeric(column, errors="coerce")
    return f"{int(values.iloc[0])} … {int(values.iloc[-1])}"


def _raw_times(table, times) -> pd.Series:
    """The timestamp cells as written, for messages."""
    if times.raw is not None:
        return times.raw.reset_index(drop=True)
    column = table.cells[times.column]
    return text_cells(column) if is_text(column) else column.astype(object)


__all__ = ["DATETIME_NAMES", "LongTable", "ReadOptions", "SeriesFrame", "Source", "load_csv"]
