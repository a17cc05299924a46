"""The series' step: infer and check a pandas frequency alias from timestamps, and continue a series by it."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from analysis.errors import ConfigError, DataError


# ---------------------------------------------------------------------------------------------
# Where: the row phrase every message uses (reading's too: it lives here because reading imports this module)
# ---------------------------------------------------------------------------------------------

def where_in_file(row: int, lines: np.ndarray | None) -> str:
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
# Order and step
# ---------------------------------------------------------------------------------------------

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
            f"duplicated timestamp {str(shown(row))!r} at {where_in_file(row, lines)}: "
            f"the same timestamp is already at {where_in_file(first, lines)}",
            column=column, row=row, value=shown(row),
        )
    backwards = np.flatnonzero(np.diff(timestamps.asi8) < 0)
    if len(backwards):
        row = int(backwards[0]) + 1
        raise DataError(
            f"timestamps are not in increasing order: {str(shown(row))!r} at {where_in_file(row, lines)} comes "
            f"before {str(shown(row - 1))!r} at {where_in_file(row - 1, lines)}; sort the file by time",
            column=column, row=row, value=shown(row),
        )


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
        f"irregular spacing at {where_in_file(row, lines)}: {str(value)!r} comes {_describe_step(gap)} after the "
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
# Supported frequencies: the time-feature family of a step
# ---------------------------------------------------------------------------------------------

_MONTHLY_OFFSETS = (
    pd.offsets.MonthBegin, pd.offsets.MonthEnd, pd.offsets.BusinessMonthBegin, pd.offsets.BusinessMonthEnd,
    pd.offsets.SemiMonthBegin, pd.offsets.SemiMonthEnd, pd.offsets.QuarterBegin, pd.offsets.QuarterEnd,
    pd.offsets.BQuarterBegin, pd.offsets.BQuarterEnd,
)


def frequency_kind(freq: str) -> str:
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


def check_supported_frequency(freq: str) -> None:
    try:
        frequency_kind(freq)
    except ConfigError as err:
        raise DataError(f"the series steps by {freq!r}, which cannot be used: {err}") from None


__all__ = ["future_timestamps", "infer_frequency"]
