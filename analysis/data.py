"""The data pipeline, tabular half: CSV → validated series → scaled splits (pandas and numpy only).

Everything here is a pure function or a frozen dataclass; nothing imports Streamlit, and nothing imports
torch: the app reads and plots a CSV before torch has loaded (cold start). The tensor half, windows and
batches, is `analysis.windows`.

Flow::

    load_csv(source)            -> SeriesFrame     validate, parse, infer the frequency
    prepare(frame, DataSpec)    -> PreparedData    order columns, split in time, scale on train
    analysis.windows                               (Batch, y) windows for training, evaluation, forecasting

Row numbers in error messages: "row N" is the N-th data row counting from 1 (the header is not
a row), followed by the line of the file it sits on, e.g. "row 5 (line 6 of the file)".
`DataError.row` holds the same row 0-based (4 here), so it indexes `SeriesFrame.values.iloc`.

Shapes use the paper's names: N rows of a split, C = enc_in input columns, C_out = c_out target
columns, F = n_marks time features.
"""
from __future__ import annotations

import io
import logging
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Sequence, Union

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from analysis.errors import ConfigError, DataError

logger = logging.getLogger(__name__)

Source = Union[str, os.PathLike, bytes, IO[bytes]]
Features = Literal["M", "S", "MS"]

DATETIME_NAMES = ("date", "datetime", "time", "timestamp")
ETT_COLUMNS = ("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")
# Official ETT borders in hours: 12 months train, 4 months val, 4 months test (30-day months).
ETT_HOURLY_BORDERS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)  # 8640, 11520, 14400
ETT_STEPS_PER_HOUR = {"h": 1, "15min": 4}
SPLITS = ("train", "val", "test")


# ---------------------------------------------------------------------------------------------
# Where: the row phrase every message uses
# ---------------------------------------------------------------------------------------------

def _where(row: int, lines: np.ndarray | None) -> str:
    """'row 5 (line 6 of the file)' for 0-based data row 4; 'row 5' when the file lines are unknown."""
    if lines is None:
        return f"row {row + 1}"
    return f"row {row + 1} (line {int(lines[row])} of the file)"


def _describe_step(step: pd.Timedelta) -> str:
    """A readable duration: '1 h', '15 min', '2 days', '1.5 s'."""
    seconds = step.total_seconds()
    if seconds % 86400 == 0:
        days = int(seconds // 86400)
        return f"{days} day" if days == 1 else f"{days} days"
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


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
    _check_supported_frequency(freq)
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
        raise DataError(f"missing timestamp in column {column!r} at {_where(row, lines)}", column=column, row=row)
    parsed = _to_datetimes(raw)
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        value = raw.iloc[row]
        raise DataError(
            f"cannot read {value!r} as a date/time in column {column!r} at {_where(row, lines)}",
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
    where = _where(row, lines)
    if not_number[row]:
        message = f"non-numeric value {value!r} in column {col!r} at {where}"
    elif missing[row]:
        shown = "" if value is None or not value.strip() else f" ({value!r})"
        message = f"missing value{shown} in column {col!r} at {where}; fill or remove it"
    else:
        message = f"infinite value {value!r} in column {col!r} at {where}"
    raise DataError(message, column=col, row=row, value=value)


def _check_order(timestamps: pd.DatetimeIndex, raw: pd.Series | None, column: str | None,
                 lines: np.ndarray | None) -> None:
    """DataError at the first duplicated timestamp, then at the first one earlier than its predecessor."""
    def shown(row: int) -> object:
        return raw.iloc[row] if raw is not None else timestamps[row]

    duplicated = timestamps.duplicated(keep="first")
    if duplicated.any():
        row = int(np.argmax(duplicated))
        first = int(np.flatnonzero(timestamps == timestamps[row])[0])
        raise DataError(
            f"duplicated timestamp {str(shown(row))!r} at {_where(row, lines)}: "
            f"the same timestamp is already at {_where(first, lines)}",
            column=column, row=row, value=shown(row),
        )
    backwards = np.flatnonzero(np.diff(timestamps.asi8) < 0)
    if len(backwards):
        row = int(backwards[0]) + 1
        raise DataError(
            f"timestamps are not in increasing order: {str(shown(row))!r} at {_where(row, lines)} comes "
            f"before {str(shown(row - 1))!r} at {_where(row - 1, lines)}; sort the file by time",
            column=column, row=row, value=shown(row),
        )


# ---------------------------------------------------------------------------------------------
# Frequency
# ---------------------------------------------------------------------------------------------

def infer_frequency(
    timestamps: Sequence | pd.DatetimeIndex,
    *,
    column: str | None = None,
    lines: np.ndarray | None = None,
    raw: pd.Series | None = None,
) -> str:
    """The series' step as a pandas offset alias: 'h', '15min', 'D', '3D', 'W-SUN', 's', 'B', 'MS', ...

    The step is the most common gap; every gap must equal it (or the timestamps must follow a
    calendar rule: business days, month/quarter/year starts or ends). Otherwise DataError at the
    first row whose gap differs, stating that gap and the inferred step. `column`, `lines` (file
    line of each row) and `raw` (the cells as written) only make the message friendlier.
    """
    ts = pd.DatetimeIndex(timestamps)
    if len(ts) < 2:
        raise DataError(f"need at least 2 timestamps to infer the frequency, got {len(ts)}", column=column)
    _check_order(ts, raw, column, lines)
    gaps = np.diff(ts.asi8)  # in the index's unit
    unique, counts = np.unique(gaps, return_counts=True)
    step_units = unique[np.argmax(counts)]  # ties → the smallest gap
    unit_ns = pd.Timedelta(1, unit=ts.unit).value
    step = pd.Timedelta(int(step_units) * unit_ns, unit="ns")
    if (gaps == step_units).all():
        return _alias_for_step(step, ts[0])
    calendar = _calendar_alias(ts)
    if calendar is not None:
        return calendar
    row = int(np.flatnonzero(gaps != step_units)[0]) + 1
    gap = ts[row] - ts[row - 1]
    value = raw.iloc[row] if raw is not None else ts[row]
    raise DataError(
        f"irregular spacing at {_where(row, lines)}: {str(value)!r} comes {_describe_step(gap)} after the "
        f"previous timestamp, but the series steps by {_describe_step(step)} (its most common gap); "
        "fill in or remove rows so that every step is the same",
        column=column, row=row, value=value,
    )


def _alias_for_step(step: pd.Timedelta, first: pd.Timestamp) -> str:
    """A fixed step as an alias; 7 days becomes a weekly alias anchored on the first weekday."""
    seconds = step.total_seconds()
    if seconds % 86400 == 0:
        days = int(seconds // 86400)
        if days == 7:
            return f"W-{first.day_name()[:3].upper()}"
        return "D" if days == 1 else f"{days}D"
    return to_offset(step).freqstr


def _calendar_alias(ts: pd.DatetimeIndex) -> str | None:
    """The calendar rule (business day, month, quarter, year) that generates `ts` exactly, if any."""
    month = ts[0].month_name()[:3].upper()
    for alias in ("B", "MS", "ME", "BMS", "BME", f"QS-{month}", f"QE-{month}", f"YS-{month}", f"YE-{month}"):
        expected = pd.date_range(start=ts[0], periods=len(ts), freq=alias)
        if expected[0] == ts[0] and bool((expected == ts).all()):
            return alias
    return None


def future_timestamps(last_timestamp: pd.Timestamp, freq: str, n: int) -> pd.DatetimeIndex:
    """[n] timestamps continuing the series after `last_timestamp` by one `freq` step each."""
    offset = to_offset(freq)
    return pd.date_range(start=pd.Timestamp(last_timestamp) + offset, periods=n, freq=offset)


# ---------------------------------------------------------------------------------------------
# Time features (the official Informer "timeF" encoding)
# ---------------------------------------------------------------------------------------------

def _second(ts: pd.DatetimeIndex) -> np.ndarray:
    return ts.second / 59.0 - 0.5


def _minute(ts: pd.DatetimeIndex) -> np.ndarray:
    return ts.minute / 59.0 - 0.5


def _hour(ts: pd.DatetimeIndex) -> np.ndarray:
    return ts.hour / 23.0 - 0.5


def _dayofweek(ts: pd.DatetimeIndex) -> np.ndarray:
    return ts.day_of_week / 6.0 - 0.5


def _day(ts: pd.DatetimeIndex) -> np.ndarray:
    return (ts.day - 1) / 30.0 - 0.5


def _dayofyear(ts: pd.DatetimeIndex) -> np.ndarray:
    return (ts.day_of_year - 1) / 365.0 - 0.5


def _week(ts: pd.DatetimeIndex) -> np.ndarray:
    return (ts.isocalendar().week.to_numpy(dtype="float64") - 1) / 52.0 - 0.5


def _month(ts: pd.DatetimeIndex) -> np.ndarray:
    return (ts.month - 1) / 11.0 - 0.5


_FIELDS = {"second": _second, "minute": _minute, "hour": _hour, "dayofweek": _dayofweek, "day": _day,
           "dayofyear": _dayofyear, "week": _week, "month": _month}
_FIELDS_BY_KIND = {
    "s": ("second", "minute", "hour", "dayofweek", "day", "dayofyear"),
    "min": ("minute", "hour", "dayofweek", "day", "dayofyear"),
    "h": ("hour", "dayofweek", "day", "dayofyear"),
    "D": ("dayofweek", "day", "dayofyear"),
    "W": ("day", "week"),
    "M": ("month",),
}
_MONTHLY_OFFSETS = (
    pd.offsets.MonthBegin, pd.offsets.MonthEnd, pd.offsets.BusinessMonthBegin, pd.offsets.BusinessMonthEnd,
    pd.offsets.SemiMonthBegin, pd.offsets.SemiMonthEnd, pd.offsets.QuarterBegin, pd.offsets.QuarterEnd,
    pd.offsets.BQuarterBegin, pd.offsets.BQuarterEnd,
)


def _frequency_kind(freq: str) -> str:
    """The time-feature family of an alias: 's', 'min', 'h', 'D', 'W' or 'M' (ConfigError otherwise)."""
    try:
        offset = to_offset(freq)
    except (ValueError, TypeError):
        raise ConfigError(f"unknown frequency {freq!r}; use a pandas alias such as 'h', '15min', 'D'") from None
    kinds = ((pd.offsets.Second, "s"), (pd.offsets.Minute, "min"), (pd.offsets.Hour, "h"),
             (pd.offsets.Day, "D"), (pd.offsets.BusinessDay, "D"), (pd.offsets.Week, "W"), (_MONTHLY_OFFSETS, "M"))
    for classes, kind in kinds:
        if isinstance(offset, classes):
            return kind
    raise ConfigError(
        f"frequency {freq!r} is not supported: time features exist for steps of seconds, minutes, "
        "hours, days, weeks, months and quarters"
    )


def _check_supported_frequency(freq: str) -> None:
    try:
        _frequency_kind(freq)
    except ConfigError as err:
        raise DataError(f"the series steps by {freq!r}, which cannot be used: {err}") from None


def time_feature_names(freq: str) -> tuple[str, ...]:
    """The calendar fields encoded for `freq`, in column order (e.g. hourly: hour, dayofweek, day, dayofyear)."""
    return _FIELDS_BY_KIND[_frequency_kind(freq)]


def n_time_features(freq: str) -> int:
    """F, the number of time-feature columns for `freq` (hourly 4, minutely 5, secondly 6, daily 3, ...)."""
    return len(time_feature_names(freq))


def time_features(timestamps: Sequence | pd.DatetimeIndex, freq: str) -> np.ndarray:
    """[N, F] float32 calendar fields scaled to [-0.5, 0.5] (official Informer 'timeF').

    Hourly: hour/23, dayofweek/6, (day-1)/30, (dayofyear-1)/365, each minus 0.5; minutely prepends
    minute/59; secondly prepends second/59 before that; daily and business-daily use dayofweek,
    day, dayofyear; weekly day, (isoweek-1)/52; monthly and quarterly (month-1)/11.
    """
    ts = pd.DatetimeIndex(timestamps)
    columns = [np.asarray(_FIELDS[name](ts), dtype="float64") for name in time_feature_names(freq)]
    return np.stack(columns, axis=1).astype(np.float32)  # [N, F]


# ---------------------------------------------------------------------------------------------
# Scaler
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Scaler:
    """Per-column standardisation fitted on the training rows: (x - mean) / std.

    mean, std: [C] float64; columns: the C column names, in the order of the arrays' last axis.
    """

    mean: np.ndarray
    std: np.ndarray
    columns: tuple[str, ...]

    def _stats(self, columns: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
        if columns is None:
            return self.mean, self.std
        unknown = [c for c in columns if c not in self.columns]
        if unknown:
            raise ConfigError(f"the scaler knows columns {', '.join(self.columns)}, not {', '.join(unknown)}")
        idx = [self.columns.index(c) for c in columns]
        return self.mean[idx], self.std[idx]

    def transform(self, values, columns: Sequence[str] | None = None):
        """[..., C'] raw → scaled. `columns` names the C' columns (default: all, in order). Arrays
        stay arrays (float64), tensors stay tensors (their dtype and device)."""
        mean, std = self._stats(columns)
        mean, std = _like(mean, values), _like(std, values)
        return (_as_values(values) - mean) / std

    def inverse_transform(self, values, columns: Sequence[str] | None = None):
        """[..., C'] scaled → raw; e.g. `columns=[target]` for a forecast of the target only."""
        mean, std = self._stats(columns)
        mean, std = _like(mean, values), _like(std, values)
        return _as_values(values) * std + mean

    def to_dict(self) -> dict:
        """JSON-ready form, for checkpoints."""
        return {"columns": list(self.columns), "mean": self.mean.tolist(), "std": self.std.tolist()}

    @classmethod
    def from_dict(cls, data: dict) -> "Scaler":
        mean = np.asarray(data["mean"], dtype="float64")
        std = np.asarray(data["std"], dtype="float64")
        columns = tuple(data["columns"])
        if not (mean.shape == std.shape == (len(columns),)) or not np.all(std > 0):
            raise ConfigError(f"invalid scaler: {len(columns)} columns, mean {mean.shape}, std {std.shape}")
        return cls(mean, std, columns)


def _torch_tensor(values) -> bool:
    """Whether `values` is a torch tensor, without importing torch: if torch is not loaded, it cannot be one."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.is_tensor(values)


def _as_values(values):
    return values if _torch_tensor(values) else np.asarray(values, dtype="float64")


def _like(stat: np.ndarray, values):
    if _torch_tensor(values):
        return sys.modules["torch"].as_tensor(stat, dtype=values.dtype, device=values.device)
    return stat


def fit_scaler(train_values, columns: Sequence[str]) -> Scaler:
    """Mean and (population) std of each column of [N, C] training rows; a constant column gets std 1."""
    values = np.asarray(train_values, dtype="float64")
    if values.ndim != 2 or values.shape[1] != len(columns) or values.shape[0] == 0:
        raise ValueError(f"expected [N > 0, {len(columns)}] training values, got {values.shape}")
    mean = values.mean(axis=0)
    std = values.std(axis=0)
    constant = std <= 1e-12 * np.maximum(1.0, np.abs(mean))
    return Scaler(mean, np.where(constant, 1.0, std), tuple(columns))


# ---------------------------------------------------------------------------------------------
# DataSpec, splits, prepare
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DataSpec:
    """What to forecast and with which windows.

    target:    the column to forecast (for 'M' every column is forecast; target just goes last)
    features:  'M' all columns in, all out; 'S' target in, target out; 'MS' all in, target out
    seq_len:   encoder window (paper: 96)
    label_len: known steps that open the decoder input (paper: 48); at most seq_len
    pred_len:  forecast horizon (paper: 24)
    """

    target: str
    features: Features = "M"
    seq_len: int = 96
    label_len: int = 48
    pred_len: int = 24

    def __post_init__(self) -> None:
        if not isinstance(self.target, str) or not self.target:
            raise ConfigError("target must be a column name")
        if self.features not in ("M", "S", "MS"):
            raise ConfigError(f"features must be 'M', 'S' or 'MS', got {self.features!r}")
        for field in ("seq_len", "label_len", "pred_len"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{field} must be a whole number > 0, got {value!r}")
        if self.label_len > self.seq_len:
            raise ConfigError(
                f"label_len ({self.label_len}) cannot exceed seq_len ({self.seq_len}): the decoder "
                "starts with the last label_len steps of the encoder window"
            )

    def check_columns(self, columns: Sequence[str]) -> None:
        """ConfigError unless the target is one of the numeric `columns`."""
        if self.target not in columns:
            raise ConfigError(f"target column {self.target!r} is not among the numeric columns: {', '.join(columns)}")


def column_layout(value_columns: Sequence[str], spec: DataSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input columns, target columns). Inputs are the other columns then the target last (as the
    official code orders them), or only the target for 'S'; targets are all inputs for 'M', else
    the target alone — always the last c_out input columns."""
    spec.check_columns(value_columns)
    if spec.features == "S":
        inputs: tuple[str, ...] = (spec.target,)
    else:
        inputs = tuple(c for c in value_columns if c != spec.target) + (spec.target,)
    targets = inputs if spec.features == "M" else (spec.target,)
    return inputs, targets


def split_borders(n_rows: int, seq_len: int, *, ett_steps_per_hour: int | None = None) -> dict[str, tuple[int, int]]:
    """Row ranges [start, stop) of train / val / test, in time order.

    ETT (`ett_steps_per_hour` 1 or 4): train [0, 8640), val [8640 - seq_len, 11520),
    test [11520 - seq_len, 14400) in hours, times the steps per hour. Otherwise 70 / 10 / 20 by row
    count. Val and test start seq_len rows early so that their first window's history is real.
    """
    if ett_steps_per_hour is not None:
        train_end, val_end, test_end = (b * ett_steps_per_hour for b in ETT_HOURLY_BORDERS)
    else:
        num_train = int(n_rows * 0.7)
        num_test = int(n_rows * 0.2)
        num_val = n_rows - num_train - num_test
        train_end, val_end, test_end = num_train, num_train + num_val, n_rows
    return {
        "train": (0, train_end),
        "val": (max(0, train_end - seq_len), val_end),
        "test": (max(0, val_end - seq_len), test_end),
    }


def ett_steps_per_hour(frame: SeriesFrame) -> int | None:
    """1 or 4 when `frame` is an ETT file (its columns and 'h' / '15min' step) long enough for the
    official borders; None otherwise."""
    steps = ETT_STEPS_PER_HOUR.get(frame.freq)
    if steps is None or sorted(frame.columns) != sorted(ETT_COLUMNS):
        return None
    if frame.n_rows < ETT_HOURLY_BORDERS[-1] * steps:
        logger.info("%s has ETT columns but only %d rows: using the 70/10/20 split", frame.name, frame.n_rows)
        return None
    return steps


@dataclass(frozen=True, eq=False)
class Split:
    """One split's rows, ready for windowing.

    start, stop: its rows [start, stop) in the frame (val and test include seq_len history rows)
    values:      [N, enc_in] float32, scaled input columns
    marks:       [N, n_marks] float32, time features
    timestamps:  [N]
    """

    name: str
    start: int
    stop: int
    values: np.ndarray
    marks: np.ndarray
    timestamps: pd.DatetimeIndex

    def __len__(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True, eq=False)
class PreparedData:
    """A frame cut into scaled train / val / test splits for one DataSpec.

    columns:        the enc_in input columns, target last ('S': the target only)
    target_columns: the c_out forecast columns, the last c_out of `columns`
    scaler:         fitted on the train rows only, over `columns`
    """

    spec: DataSpec
    columns: tuple[str, ...]
    target_columns: tuple[str, ...]
    scaler: Scaler
    train: Split
    val: Split
    test: Split
    freq: str
    is_ett: bool

    @property
    def enc_in(self) -> int:
        return len(self.columns)

    @property
    def dec_in(self) -> int:
        return len(self.columns)

    @property
    def c_out(self) -> int:
        return len(self.target_columns)

    @property
    def n_marks(self) -> int:
        return n_time_features(self.freq)

    def split(self, name: str) -> Split:
        if name not in SPLITS:
            raise ConfigError(f"unknown split {name!r}; choose train, val or test")
        return getattr(self, name)


def prepare(frame: SeriesFrame, spec: DataSpec) -> PreparedData:
    """Order columns, split in time, fit the scaler on train rows only, and compute time features.

    DataError if any split has fewer than seq_len + pred_len rows (no complete window).
    """
    columns, targets = column_layout(frame.columns, spec)
    ett = ett_steps_per_hour(frame)
    borders = split_borders(frame.n_rows, spec.seq_len, ett_steps_per_hour=ett)
    _check_split_sizes(borders, spec, frame)
    raw = frame.values[list(columns)].to_numpy(dtype="float64")  # [N_all, enc_in]
    train_start, train_stop = borders["train"]
    scaler = fit_scaler(raw[train_start:train_stop], columns)
    scaled = scaler.transform(raw).astype(np.float32)
    marks = time_features(frame.timestamps, frame.freq)  # [N_all, F]
    splits = {
        name: Split(name, start, stop, scaled[start:stop], marks[start:stop], frame.timestamps[start:stop])
        for name, (start, stop) in borders.items()
    }
    return PreparedData(spec, columns, targets, scaler, splits["train"], splits["val"], splits["test"],
                        frame.freq, ett is not None)


def _check_split_sizes(borders: dict[str, tuple[int, int]], spec: DataSpec, frame: SeriesFrame) -> None:
    need = spec.seq_len + spec.pred_len
    for name, (start, stop) in borders.items():
        have = max(0, min(stop, frame.n_rows) - start)
        if have < need:
            raise DataError(
                f"the {name} split of {frame.name} has {have} rows, but a window needs at least "
                f"seq_len + pred_len = {spec.seq_len} + {spec.pred_len} = {need} rows "
                f"(the file has {frame.n_rows} rows); use a longer file or shorter windows"
            )
