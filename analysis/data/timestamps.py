"""Which column holds the timestamps, found by its content whatever it is called, and how to read it.

Forms read (decided from the whole column, never from its first rows alone):

- ISO 8601 and its kin: '2021-01-17', '2021-01-17 13:00', '2021-01-17T13:00:00+01:00', '2021/01/17';
  offsets are converted to UTC (daylight-saving changes then leave no gap);
- day or month first: '17.01.2021 00:00', '01/17/2021', '17-01-21'. Day first when some first field exceeds
  12, month first when some second field does; when neither does, the reading whose timestamps sit best on a
  grid (`frequency.regularity`); when both fit equally well, day first for dots and dashes ('01.03.2021', the
  European forms) and, for slashes, the column is ambiguous and the message names `--dayfirst` / `--no-dayfirst`;
- integers: epoch seconds or milliseconds (1970-based, years 1973–2128), and YYYYMMDD; whole-number years in a
  column named like a year ('year', 'YEAR', 'Jahr', …) or asked for by name (calendar_columns.py);
- a year and its quarter, month or week in two columns (`--datetime-column year,quarter`; found by their names);
- quarters in one cell: '1970 Q1', '1970-Q1', '1970Q1', 'Q1 1970' (any year);
- a column without a name holding whole numbers from 1000 to 9999 that rise by a constant step (a year column whose
  header was left blank), read as years, and the note says so;
- spreadsheet and Parquet date cells (naive, or converted to UTC);
- anything else pandas reads with one format for the whole column ('Jan 2021', '17 January 2021').

A column mixing timestamps with and without a UTC offset is read in UTC, and the note says that the naive ones were
taken as UTC.

A text column is the datetime column when at least 90 % of its cells read as dates (50 % for the first column
and for columns named like one, 'date', 'ds', 'Datum', 'time', …, which are tried first); its other cells are
then reported as unreadable timestamps. A numeric column is one only when asked for by name, or
when it is the first column, named like one or holding whole numbers that read as epoch times or YYYYMMDD.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .calendar_columns import TIME_DTYPE, combine, month_starts, named_like_year, part_kind, plausible_years, \
    whole_numbers, years_to_times
from .frequency import regularity
from .messages import cell, names_phrase, plural
from .table import RawTable, is_text, text_cells

TIME_NAMES = ("date", "datetime", "time", "timestamp", "ds", "datum", "fecha", "data", "zeit", "dt", "day",
              "period", "month", "week", "date_time", "time_stamp", "utc", "local_time")
QUARTER = re.compile(r"^(?:(\d{1,4})\s*[-/ ]?\s*[Qq]([1-4])|[Qq]([1-4])\s*[-/ ]?\s*(\d{4}))$")  # 1970 Q1, 1970-Q1, Q1 1970
UNNAMED = re.compile(r"^(column_\d+|Unnamed: \d+)$")  # a header cell left blank (the reader's name for it, or pandas')
DAY_MONTH = re.compile(r"^(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})(?=$|[ T])(.*)$")
YEAR_FIRST = re.compile(r"^\d{4}([-/.])\d{1,2}\1\d{1,2}")
OFFSET = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)$", re.IGNORECASE)
EPOCH_SECONDS = (1e8, 5e9)  # 1973-03 … 2128
EPOCH_MILLISECONDS = (1e11, 5e12)
DETECT_SAMPLE = 400  # cells tried when looking for the datetime column
DETECT_SHARE = 0.9  # of a text column's cells that must read as dates for it to be the datetime column …
DETECT_SHARE_NAMED = 0.5  # … or of a column named like one ('date', 'Datum', …) or the first column


@dataclass(frozen=True)
class ParsedTimes:
    """A column read as timestamps: values [N] (NaT where a cell is missing or not a date), how they were read."""

    column: str
    values: pd.DatetimeIndex
    form: str  # "ISO 8601", "day first", "month first", "epoch seconds", "epoch milliseconds", "YYYYMMDD", ...
    note: str | None = None
    columns: tuple[str, ...] = ()  # the file's columns it was read from (two for year + quarter); () = (column,)
    raw: pd.Series | None = None  # the cells as written, for messages (None: the column's own cells)

    @property
    def sources(self) -> tuple[str, ...]:
        return self.columns or (self.column,)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not infer format" chatter
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, OverflowError):
            return None


def _to_naive(parsed) -> pd.DatetimeIndex | None:
    if parsed is None:
        return None
    index = pd.DatetimeIndex(parsed)
    return index.tz_convert("UTC").tz_localize(None) if index.tz is not None else index


def _iso(text: pd.Series) -> tuple[pd.DatetimeIndex | None, str | None]:
    normalised = text.str.replace(r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})", r"\1-\2-\3", regex=True)
    parsed = _quiet(pd.to_datetime, normalised, format="ISO8601", errors="coerce")
    note = None
    if parsed is None:  # several UTC offsets (daylight saving), or offsets and none: read in UTC
        parsed = _quiet(pd.to_datetime, normalised, format="ISO8601", errors="coerce", utc=True)
        note = "timestamps carry UTC offsets and were converted to UTC"
        offset = text.str.contains(OFFSET)
        if offset.any() and not offset.all():
            naive = text[~offset].iloc[0]
            note = (f"{plural(int((~offset).sum()), 'timestamp')} without a UTC offset (e.g. {cell(naive)}) taken as UTC; "
                    f"{plural(int(offset.sum()), 'timestamp')} with one converted to UTC")
    elif getattr(parsed.dt, "tz", None) is not None:
        note = "timestamps carry a UTC offset and were converted to UTC"
    return _to_naive(parsed), note


def _reorder(fields: pd.DataFrame, dayfirst: bool) -> pd.Series:
    """'17.01.2021 13:00' fields → '2021-01-17 13:00' (two-digit years: 00–69 → 20xx, 70–99 → 19xx)."""
    y = fields[2]
    two_digit = y.str.len() == 2
    century = pd.Series(np.where(y.where(two_digit, "0").astype(int) < 70, "20", "19"), index=y.index)
    year = y.where(~two_digit, century + y)
    day, month = (fields[0], fields[1]) if dayfirst else (fields[1], fields[0])
    return year + "-" + month.str.zfill(2) + "-" + day.str.zfill(2) + fields[3]


def _regularity(index: pd.DatetimeIndex | None) -> float:
    """How regular one reading of a column is; −1 when it does not read, 0 when no step can be found in it (the other
    order of day and month may well read as a regular series)."""
    if index is None:
        return -1.0
    try:
        return regularity(index)
    except DataError:
        return 0.0


def _day_month(text: pd.Series, column: str, dayfirst: bool | None) -> tuple[pd.DatetimeIndex | None, str]:
    fields = text.str.extract(DAY_MONTH)
    ok = fields[0].notna()
    first, second = fields.loc[ok, 0].astype(int), fields.loc[ok, 1].astype(int)
    if dayfirst is None:
        day_first, month_first = bool((first > 12).any()), bool((second > 12).any())
        if day_first and month_first:
            a, b = text[ok][first > 12].iloc[0], text[ok][second > 12].iloc[0]
            raise DataError(f"column {cell(column)} mixes day-first {cell(a)} and month-first {cell(b)} dates; "
                            "use one order throughout", column=column, value=b)
        if day_first or month_first:
            dayfirst = day_first
    readings = {}
    for order in ([dayfirst] if dayfirst is not None else [True, False]):
        iso, _ = _iso(_reorder(fields.where(ok), order).where(ok))
        readings[order] = iso
    if len(readings) == 2:
        scores = {order: _regularity(index) for order, index in readings.items()}
        if scores[True] == scores[False] and not text[ok].str.match(r"^\d{1,2}[.-]").all():
            sample = text[ok].iloc[0]
            raise DataError(f"column {cell(column)} reads as dates with the day first or the month first "
                            f"({cell(sample)}); choose with --dayfirst or --no-dayfirst", column=column, value=sample)
        dayfirst = scores[True] >= scores[False]  # a tie with dots or dashes ('01.03.2021'): the European order
    return readings[dayfirst], "day first" if dayfirst else "month first"


def parse_text_times(text: pd.Series, column: str, dayfirst: bool | None = None) -> ParsedTimes:
    """Read stripped text cells (None: missing) as timestamps; NaT where a cell is not a date."""
    present = text.dropna()
    if present.empty:
        return ParsedTimes(column, pd.DatetimeIndex([pd.NaT] * len(text)), "empty")
    codes, uniques = pd.factorize(present)
    if len(uniques) * 2 < len(present):  # a long table repeats every timestamp once per series: read each once
        once = parse_text_times(pd.Series(uniques), column, dayfirst)
        out = pd.Series(pd.NaT, index=text.index, dtype=TIME_DTYPE)
        out[present.index] = np.asarray(once.values, dtype=TIME_DTYPE)[codes]
        return ParsedTimes(column, pd.DatetimeIndex(out), once.form, once.note)
    out = pd.Series(pd.NaT, index=text.index, dtype=TIME_DTYPE)
    quarters = present.str.extract(QUARTER)
    if quarters.notna().any(axis=1).mean() >= DETECT_SHARE:
        ok = quarters.notna().any(axis=1)
        years = quarters[0].fillna(quarters[3])[ok].astype(int)
        number = quarters[1].fillna(quarters[2])[ok].astype(int)
        out[ok[ok].index] = month_starts((years).to_numpy(), (number * 3 - 2).to_numpy())
        return ParsedTimes(column, pd.DatetimeIndex(out), "quarters", None)
    if present.str.match(YEAR_FIRST).mean() >= DETECT_SHARE:
        parsed, note = _iso(present)
        form = "ISO 8601"
    elif present.str.match(DAY_MONTH).mean() >= DETECT_SHARE:
        parsed, form = _day_month(present, column, dayfirst)
        note = f"dates read {form}" if dayfirst is None else None
    else:
        parsed = _to_naive(_quiet(pd.to_datetime, present, errors="coerce", dayfirst=bool(dayfirst)))
        form, note = "inferred format", None
    if parsed is not None:
        out[present.index] = np.asarray(parsed, dtype=TIME_DTYPE)
    return ParsedTimes(column, pd.DatetimeIndex(out), form, note)


def parse_number_times(values: pd.Series, column: str, *, years: bool = False) -> ParsedTimes | None:
    """Whole numbers as epoch seconds, epoch milliseconds or YYYYMMDD, or (`years`: the column is named like a
    year or asked for) as years; None when they are none of these."""
    present = values.dropna()
    if present.empty or not np.all(np.mod(present.to_numpy(dtype="float64"), 1) == 0):
        return None
    as_int = present.astype("int64")
    low, high = int(as_int.min()), int(as_int.max())
    out = pd.Series(pd.NaT, index=values.index, dtype=TIME_DTYPE)
    if years and (1 <= low and high <= 9999 or 1000 <= low and high <= 99_999):  # past 9999: refused, and said so
        return ParsedTimes(column, years_to_times(values.astype("float64"), column), "years",
                           f"{column!r} read as years")
    if 18000101 <= low and high <= 22001231:
        parsed = _quiet(pd.to_datetime, as_int.astype(str), format="%Y%m%d", errors="coerce")
        form = "YYYYMMDD"
    elif EPOCH_SECONDS[0] <= low and high <= EPOCH_SECONDS[1]:
        parsed, form = _quiet(pd.to_datetime, as_int, unit="s", errors="coerce"), "epoch seconds"
    elif EPOCH_MILLISECONDS[0] <= low and high <= EPOCH_MILLISECONDS[1]:
        parsed, form = _quiet(pd.to_datetime, as_int, unit="ms", errors="coerce"), "epoch milliseconds"
    else:
        return None
    if parsed is None or parsed.isna().any():
        return None
    out[present.index] = np.asarray(parsed, dtype=TIME_DTYPE)
    return ParsedTimes(column, pd.DatetimeIndex(out), form, f"{column!r} read as {form}")


def _named_like_time(name: str) -> bool:
    lower = name.strip().lower()
    return lower in TIME_NAMES or any(word in lower for word in ("date", "time", "datum", "zeit", "fecha")) \
        or named_like_year(name)


def _datetimes(values: pd.Series, column: str) -> ParsedTimes:
    """A column of date cells (a spreadsheet's or Parquet's): naive as they are, aware ones in UTC."""
    index = pd.DatetimeIndex(values)
    note = None
    if index.tz is not None:
        index, note = index.tz_convert("UTC").tz_localize(None), "timestamps carry a time zone and were converted to UTC"
    return ParsedTimes(column, pd.DatetimeIndex(index.astype(TIME_DTYPE)), "dates", note,
                       raw=pd.Series(index.astype(str), index=values.index).where(values.notna().to_numpy(), None))


def _year_and_part(table: RawTable, column: str) -> ParsedTimes | None:
    """A column named like a year holding years, with a quarter / month / week column beside it when there is one."""
    if plausible_years(table.cells[column]) is None:
        return None
    for other in table.cells.columns:
        kind = part_kind(other) if other != column else None
        if kind:
            try:
                stamps, form, raw = combine(table.cells[column], table.cells[other], (column, other), kind)
            except DataError:
                continue
            name = f"{column},{other}"
            return ParsedTimes(name, stamps, form, f"{column!r} and {other!r} read as one date ({form}); "
                               f"--datetime-column {column} reads the years alone", (column, other), raw)
    return ParsedTimes(column, years_to_times(plausible_years(table.cells[column]), column), "years",
                       f"{column!r} read as years")


def unnamed(table: RawTable, column: str) -> bool:
    """A header cell the file left blank ('column_3' as the reader named it, or pandas' 'Unnamed: 2')."""
    blank = {new for _, old, new in table.renamed if not old}
    return column in blank or (bool(UNNAMED.match(column)) and column.startswith("Unnamed"))


def _blank_header_years(values: pd.Series, column: str) -> ParsedTimes | None:
    """Years in a column whose header was left blank: whole numbers 1000–9999 rising by one constant step."""
    numbers = plausible_years(values)
    if numbers is None or numbers.isna().any() or numbers.min() < 1000:
        return None
    steps = np.diff(numbers.to_numpy())
    if len(steps) < 2 or steps[0] <= 0 or not (steps == steps[0]).all():
        return None
    return ParsedTimes(column, years_to_times(numbers, column), "years",
                       f"column {column!r} (no name in the file) read as years; choose another with "
                       "--datetime-column (in the app: Datetime column)")


def row_index_columns(table: RawTable, exclude: tuple[str, ...] = ()) -> list[str]:
    """Columns without a name that hold 0 … n − 1 or 1 … n: a row index (pandas writes one with `to_csv()`), not a
    variable of the series."""
    out = []
    for column in table.cells.columns:
        if column in exclude or not unnamed(table, column):
            continue
        numbers = whole_numbers(table.cells[column])
        if numbers is None or numbers.isna().any() or len(numbers) < 2:
            continue
        values = numbers.to_numpy()
        if values[0] in (0, 1) and (np.diff(values) == 1).all():
            out.append(column)
    return out


def _candidate(table: RawTable, column: str, dayfirst: bool | None, first: bool) -> ParsedTimes | None:
    values = table.cells[column]
    if unnamed(table, column) and not is_text(values):
        found = _blank_header_years(values, column)
        if found is not None:
            return found
    share = DETECT_SHARE_NAMED if first or _named_like_time(column) else DETECT_SHARE
    if pd.api.types.is_datetime64_any_dtype(values):
        return _datetimes(values, column)
    if named_like_year(column):
        found = _year_and_part(table, column)
        if found is not None:
            return found
    if is_text(values):
        text = text_cells(values)
        sample = text.dropna().iloc[:DETECT_SAMPLE]
        if sample.empty:
            return None
        try:
            trial = parse_text_times(sample, column, dayfirst)
        except DataError:
            trial = None  # an ambiguous sample: the full column decides below
        if trial is not None and trial.values.notna().mean() < share:
            return None
        return parse_text_times(text, column, dayfirst)
    if pd.api.types.is_numeric_dtype(values) and values.dtype != bool and (first or _named_like_time(column)):
        return parse_number_times(values, column)
    return None


def _requested(table: RawTable, requested: str, dayfirst: bool | None) -> ParsedTimes:
    columns = list(table.cells.columns)
    if requested not in columns:
        parts = [p.strip() for p in requested.split(",")]
        if len(parts) == 2 and all(p in columns for p in parts):
            stamps, form, raw = combine(table.cells[parts[0]], table.cells[parts[1]], (parts[0], parts[1]))
            return ParsedTimes(",".join(parts), stamps, form, None, tuple(parts), raw)
        missing = [p for p in parts if p not in columns] if len(parts) == 2 else [requested]
        raise DataError(f"there is no column named {cell(missing[0])} in the file; its columns are "
                        f"{names_phrase(columns)}", column=requested)
    values = table.cells[requested]
    if pd.api.types.is_datetime64_any_dtype(values):
        return _datetimes(values, requested)
    found = parse_text_times(text_cells(values), requested, dayfirst) if is_text(values) \
        else parse_number_times(values, requested, years=True)
    if found is None or found.values.notna().sum() == 0:
        raise DataError(f"column {cell(requested)} does not hold dates or times that can be read "
                        f"(e.g. {cell(values.dropna().iloc[0]) if values.notna().any() else 'nothing'})",
                        column=requested)
    return found


def find_times(table: RawTable, requested: str | None, dayfirst: bool | None) -> ParsedTimes:
    """The datetime column of a table and its timestamps (see the module docstring). DataError when none."""
    if requested is not None:
        return _requested(table, requested, dayfirst)
    columns = list(table.cells.columns)
    order = sorted(range(len(columns)), key=lambda i: (not _named_like_time(columns[i]), named_like_year(columns[i])))
    for i in order:
        found = _candidate(table, columns[i], dayfirst, first=i == 0)
        if found is not None:
            return found
    raise DataError(f"no datetime column found: none of the columns ({names_phrase(columns, 100)}) holds dates or "
                    "times that can be read; choose it with --datetime-column (in the app: Datetime column)")


__all__ = ["ParsedTimes", "TIME_NAMES", "find_times", "parse_number_times", "parse_text_times", "row_index_columns",
           "unnamed"]
