"""Stage 1 of the data pipeline: read a CSV (path, bytes or upload), validate it and parse it into a SeriesFrame."""
from __future__ import annotations

import io
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

import numpy as np
import pandas as pd

from analysis.errors import DataError

from .frequency import check_supported_frequency, where_in_file, infer_frequency

logger = logging.getLogger(__name__)

Source = Union[str, os.PathLike, bytes, IO[bytes]]

DATETIME_NAMES = ("date", "datetime", "time", "timestamp")


# ---------------------------------------------------------------------------------------------
# SeriesFrame and load_csv
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SeriesFrame:
    """A validated, regularly spaced multivariate series.

    timestamps:      [N] strictly increasing, evenly spaced by `freq`
    values:          [N, C] float64, the numeric columns in file order, indexed by `timestamps`
    datetime_column: the column the timestamps came from
    freq:            pandas offset alias ('h', '15min', 'D', 's', 'W-SUN', 'MS', ...)
    name:            the file name, or 'upload' for raw bytes
    dropped_columns: columns with no numeric value at all (text or empty), left out of `values`
    """

    timestamps: pd.DatetimeIndex
    values: pd.DataFrame
    datetime_column: str
    freq: str
    name: str
    dropped_columns: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.values.columns)

    @property
    def n_rows(self) -> int:
        return len(self.timestamps)


def load_csv(source: Source, *, datetime_column: str | None = None) -> SeriesFrame:
    """Read and validate a CSV of timestamps and numeric columns.

    `source` is a path (str / Path), the file's bytes, or a binary file-like object (Streamlit's
    UploadedFile). Raises DataError naming the problem, column, row and value for: an empty file
    or no data rows, bytes that are not UTF-8, no datetime column, an unparseable or missing
    timestamp, a non-numeric, missing or infinite value, no numeric column, a duplicated
    timestamp, unsorted timestamps, irregular spacing, and a frequency the time features cannot
    encode.
    """
    data, name = _read_source(source)
    table, lines = _parse_table(_decode(data), name)
    time_col = _find_datetime_column(table, datetime_column, name)
    raw_times = table[time_col]
    timestamps = _parse_timestamps(raw_times, time_col, lines)
    values, dropped = _parse_values(table.drop(columns=[time_col]), lines, name)
    freq = infer_frequency(timestamps, column=time_col, lines=lines, raw=raw_times)
    check_supported_frequency(freq)
    values.index = timestamps
    logger.info("loaded %s: %d rows, %d numeric columns, freq %s", name, len(timestamps), values.shape[1], freq)
    return SeriesFrame(timestamps, values, time_col, freq, name, tuple(dropped))


def _read_source(source: Source) -> tuple[bytes, str]:
    """The raw bytes of a path, bytes object or binary file-like, and a display name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "upload"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"file not found: {path}")
        return path.read_bytes(), path.name
    if hasattr(source, "getvalue"):  # UploadedFile, BytesIO: the whole buffer, wherever the cursor is
        data = source.getvalue()
    elif hasattr(source, "read"):
        if getattr(source, "seekable", lambda: False)():
            source.seek(0)
        data = source.read()
    else:
        raise DataError(f"cannot read a CSV from a {type(source).__name__}; pass a path, bytes or a file")
    if isinstance(data, str):
        data = data.encode("utf-8")
    raw_name = getattr(source, "name", None)
    name = Path(raw_name).name if isinstance(raw_name, str) and raw_name else "upload"
    return bytes(data), name


def _decode(data: bytes) -> str:
    """UTF-8 text (a leading byte-order mark is dropped); DataError with the byte offset otherwise."""
    if not data.strip():
        raise DataError("the file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        offset = err.start + bom  # utf-8-sig counts from after the byte-order mark
        line = data[:offset].count(b"\n") + 1
        byte = data[offset]
        raise DataError(
            f"the file is not UTF-8 text: byte 0x{byte:02x} at byte offset {offset} (line {line}) "
            "is not valid UTF-8; save the file as UTF-8 (in Excel: 'CSV UTF-8') and load it again",
            row=line - 2 if line >= 2 else None,
            value=f"0x{byte:02x}",
        ) from None


def _parse_table(text: str, name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """All cells as strings (missing → NA), blank lines removed; also each row's 1-based file line."""
    sep = _guess_separator(text)
    try:
        table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise DataError("the file is empty") from None
    except pd.errors.ParserError as err:
        raise DataError(f"could not read {name} as CSV: {err}") from None
    table.columns = [str(c).strip() for c in table.columns]
    lines = np.arange(len(table)) + 2  # the header is line 1
    blank = table.isna().all(axis=1).to_numpy()
    if blank.any():
        logger.info("%s: skipped %d empty lines", name, int(blank.sum()))
        table = table.loc[~blank].reset_index(drop=True)
        lines = lines[~blank]
    if len(table) == 0:
        raise DataError(f"{name} has a header ({', '.join(table.columns)}) but no data rows")
    return table, lines


def _guess_separator(text: str) -> str:
    """',' unless the header has none and has ';' or a tab (European Excel exports)."""
    header = text.lstrip().split("\n", 1)[0]
    if "," not in header:
        for sep in (";", "\t"):
            if sep in header:
                return sep
    return ","


def _is_missing(raw: pd.Series) -> pd.Series:
    return raw.isna() | (raw.str.strip() == "")


def _to_numbers(raw: pd.Series) -> pd.Series:
    """float64, NaN where the cell is missing or not a number."""
    return pd.to_numeric(raw.str.strip(), errors="coerce").astype("float64")


def _to_datetimes(raw: pd.Series) -> pd.Series:
    """datetime64, NaT where the cell does not parse. ISO 8601 first, then pandas' inferred format."""
    best: pd.Series | None = None
    for kwargs in ({"format": "ISO8601"}, {}, {"format": "ISO8601", "utc": True}, {"utc": True}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "could not infer format" chatter
            try:
                parsed = pd.to_datetime(raw, errors="coerce", **kwargs)
            except (ValueError, TypeError, OverflowError):  # e.g. mixed UTC offsets without utc=True
                continue
        if best is None or parsed.notna().sum() > best.notna().sum():
            best = parsed
        if best.notna().sum() == raw.notna().sum():
            break
    if best is None:
        return pd.Series(pd.NaT, index=raw.index, dtype="datetime64[ns]")
    return best


def _looks_numeric(raw: pd.Series) -> bool:
    present = ~_is_missing(raw)
    return bool(present.any()) and bool(_to_numbers(raw)[present].notna().all())


def _find_datetime_column(table: pd.DataFrame, requested: str | None, name: str) -> str:
    """The named column; else one named date/datetime/time/timestamp; else the first text column
    whose values all parse as datetimes; else the first whose first value does (its bad rows are
    reported by `_parse_timestamps`)."""
    columns = list(table.columns)
    if requested is not None:
        if requested not in columns:
            raise DataError(
                f"there is no column named {requested!r} in {name}; its columns are {', '.join(columns)}",
                column=requested,
            )
        return requested
    for col in columns:
        if col.lower() in DATETIME_NAMES:
            return col
    text_columns = [c for c in columns if not _looks_numeric(table[c])]
    for col in text_columns:
        raw = table[col]
        if raw.notna().all() and _to_datetimes(raw).notna().all():
            return col
    for col in text_columns:
        first = table[col].dropna()
        if len(first) and _to_datetimes(first.iloc[:1]).notna().all():
            return col
    raise DataError(
        f"no datetime column found in {name}: none of its columns ({', '.join(columns)}) is named "
        "date, datetime, time or timestamp or holds timestamps; rename the timestamp column to "
        "'date' or choose it explicitly"
    )


def _parse_timestamps(raw: pd.Series, column: str, lines: np.ndarray) -> pd.DatetimeIndex:
    """[N] timestamps; DataError at the first missing or unparseable cell."""
    missing = _is_missing(raw).to_numpy()
    if missing.any():
        row = int(np.argmax(missing))
        raise DataError(f"missing timestamp in column {column!r} at {where_in_file(row, lines)}", column=column, row=row)
    parsed = _to_datetimes(raw)
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        value = raw.iloc[row]
        raise DataError(
            f"cannot read {value!r} as a date/time in column {column!r} at {where_in_file(row, lines)}",
            column=column, row=row, value=value,
        )
    return pd.DatetimeIndex(parsed, name=column)


def _parse_values(table: pd.DataFrame, lines: np.ndarray, name: str) -> tuple[pd.DataFrame, list[str]]:
    """[N, C] float64 numeric columns in file order, and the names of columns with no number at all.

    A column where some cells are numbers and others are not is an error at the first bad cell.
    """
    columns: dict[str, pd.Series] = {}
    dropped: list[str] = []
    for col in table.columns:
        raw = table[col]
        missing = _is_missing(raw).to_numpy()
        numbers = _to_numbers(raw)
        not_number = ~missing & numbers.isna().to_numpy()
        if missing.all() or not_number[~missing].all():
            dropped.append(col)
            continue
        _check_numeric_column(col, raw, numbers, missing, not_number, lines)
        columns[col] = numbers
    if dropped:
        logger.warning("%s: left out columns with no numeric values: %s", name, ", ".join(dropped))
    if not columns:
        detail = f" (columns without numbers: {', '.join(dropped)})" if dropped else ""
        raise DataError(f"{name} has no numeric column to forecast{detail}")
    return pd.DataFrame(columns), dropped


def _check_numeric_column(
    col: str, raw: pd.Series, numbers: pd.Series, missing: np.ndarray, not_number: np.ndarray, lines: np.ndarray
) -> None:
    """DataError at the first non-numeric, missing or infinite cell of a numeric column."""
    infinite = np.isinf(numbers.to_numpy())
    problem = missing | not_number | infinite
    if not problem.any():
        return
    row = int(np.argmax(problem))
    value = raw.iloc[row]
    value = None if pd.isna(value) else value
    where = where_in_file(row, lines)
    if not_number[row]:
        message = f"non-numeric value {value!r} in column {col!r} at {where}"
    elif missing[row]:
        shown = "" if value is None or not value.strip() else f" ({value!r})"
        message = f"missing value{shown} in column {col!r} at {where}; fill or remove it"
    else:
        message = f"infinite value {value!r} in column {col!r} at {where}"
    raise DataError(message, column=col, row=row, value=value)


__all__ = ["DATETIME_NAMES", "SeriesFrame", "Source", "load_csv"]
