"""The series' step: infer and check a pandas frequency alias from timestamps, and continue a series by it."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from informer_lab.analysis.errors import ConfigError, DataError

from .messages import REPAIR_HINT, where_in_file


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
    """The step of a regular series as a pandas offset alias: 'h', '15min', 'D', '3D', 'W-SUN', 's', 'B', 'MS', ...

    Every timestamp must sit on the step's grid with none missing (a calendar rule counts: business days,
    month/quarter/year starts or ends). Otherwise DataError at the first row off the grid or after a gap, naming
    the option that repairs it. `column`, `lines` (file line of each row) and `raw` (the cells as written) only
    make the message friendlier.
    """
    ts = pd.DatetimeIndex(timestamps)
    if len(ts) < 2:
        raise DataError(f"need at least 2 timestamps to infer the frequency, got {len(ts)}", column=column)
    _check_order(ts, raw, column, lines)
    freq, _ = fit_frequency(ts)
    points = grid(ts[0], ts[-1], freq)
    position = points.get_indexer(ts)
    if (position >= 0).all() and len(points) == len(ts):
        return freq
    off = np.flatnonzero(position < 0)
    row = int(off[0]) if len(off) else int(np.flatnonzero(np.diff(position) > 1)[0]) + 1
    value = raw.iloc[row] if raw is not None else ts[row]
    gap = ts[row] - ts[row - 1]
    raise DataError(
        f"irregular spacing at {where_in_file(row, lines)}: {str(value)!r} comes {_describe_step(gap)} after the "
        f"previous timestamp, but the series steps {describe_frequency(freq)}; fill the gaps with {REPAIR_HINT}",
        column=column, row=row, value=value, repairable=True,
    )


def _alias_for_step(step: pd.Timedelta, first: pd.Timestamp) -> str:
    """A fixed step as an alias; whole weeks become a weekly alias anchored on the first weekday ('2W-MON')."""
    seconds = step.total_seconds()
    if seconds % 86400 == 0:
        days = int(seconds // 86400)
        if days % 7 == 0:
            return f"{'' if days == 7 else days // 7}W-{first.day_name()[:3].upper()}"
        return "D" if days == 1 else f"{days}D"
    return to_offset(step).freqstr


def _unit_step(ts: pd.DatetimeIndex, count: int) -> pd.Timedelta:
    """`count` ticks of the index's own unit (microseconds for the lab's timestamps) as a Timedelta of that unit:
    no nanosecond conversion, which overflows past 292 years."""
    return pd.Timedelta(int(count), unit=ts.unit)


def _calendar_steps(ts: pd.DatetimeIndex) -> list[str]:
    """Month, quarter and year rules of several periods ('5YS-JAN', '2QS-JAN', '6MS'), when the timestamps sit on
    month starts or month ends and most are k months apart."""
    if not ((ts.day == 1).all() or ts.is_month_end.all()) or (ts.hour != 0).any() or (ts.minute != 0).any():
        return []
    months = np.diff(np.asarray(ts.year, dtype=np.int64) * 12 + np.asarray(ts.month, dtype=np.int64))
    months = months[months > 0]
    if not len(months):
        return []
    values, counts = np.unique(months, return_counts=True)
    k = int(values[np.argmax(counts)])
    if k <= 1:
        return []
    end = "E" if ts.is_month_end.all() and not (ts.day == 1).all() else "S"
    month = ts[0].month_name()[:3].upper()
    out = []  # the coarsest unit first: it wins a tie (the same grid as 60 months is '5YS-JAN')
    if k % 12 == 0:
        out.append(f"{k // 12}Y{end}-{month}" if k > 12 else f"Y{end}-{month}")
    if k % 3 == 0:
        out.append(f"{k // 3}Q{end}-{month}" if k > 3 else f"Q{end}-{month}")
    return out + [f"{k}M{end}"]


def future_timestamps(last_timestamp: pd.Timestamp, freq: str, n: int) -> pd.DatetimeIndex:
    """[n] timestamps continuing the series after `last_timestamp` by one `freq` step each."""
    offset = to_offset(freq)
    last = pd.Timestamp(last_timestamp)
    return pd.date_range(start=last + offset, periods=n, freq=offset, unit=last.unit)


# ---------------------------------------------------------------------------------------------
# Fitting a grid to timestamps that are not regular (repair)
# ---------------------------------------------------------------------------------------------

CALENDAR_STEPS_FROM = pd.Timedelta(days=1)  # calendar rules are tried only for steps of a day or more
NICE_STEPS = [pd.Timedelta(x) for x in ("1s", "2s", "5s", "10s", "15s", "20s", "30s", "1min", "2min", "5min", "10min",
                                        "15min", "20min", "30min", "1h", "2h", "3h", "4h", "6h", "8h", "12h", "1D",
                                        "7D")]


MAX_GRID = 20_000_000  # points: a grid longer than this is no series this app reads (it would take GBs)
_NOMINAL_DAYS = ((pd.offsets.BusinessDay, 7 / 5), (pd.offsets.Week, 7), (pd.offsets.SemiMonthBegin, 15),
                 (pd.offsets.SemiMonthEnd, 15), (pd.offsets.MonthBegin, 30), (pd.offsets.MonthEnd, 30),
                 (pd.offsets.BusinessMonthBegin, 30), (pd.offsets.BusinessMonthEnd, 30),
                 (pd.offsets.QuarterBegin, 90), (pd.offsets.QuarterEnd, 90), (pd.offsets.BQuarterBegin, 90),
                 (pd.offsets.BQuarterEnd, 90), (pd.offsets.YearBegin, 365), (pd.offsets.YearEnd, 365))


def grid_size(first: pd.Timestamp, last: pd.Timestamp, freq: str) -> int:
    """About how many points `grid(first, last, freq)` has, computed without building it (exact for fixed steps)."""
    offset = to_offset(freq)
    span = (pd.Timestamp(last) - pd.Timestamp(first)).total_seconds()  # seconds: no unit can overflow
    try:
        step = pd.Timedelta(offset).total_seconds()
    except (ValueError, TypeError):
        days = next((d for cls, d in _NOMINAL_DAYS if isinstance(offset, cls)), 1.0)
        step = days * abs(offset.n) * 86400.0
    return int(span // step) + 1 if step > 0 else MAX_GRID + 1


def grid(first: pd.Timestamp, last: pd.Timestamp, freq: str) -> pd.DatetimeIndex:
    """Every timestamp of `freq` from `first` to `last` (both included when on the grid). DataError when that
    would be more than MAX_GRID points (a stray timestamp years away from the rest, or far too fine a step)."""
    size = grid_size(first, last, freq)
    if size > MAX_GRID:
        raise DataError(f"{describe_frequency(freq)} steps from {first} to {last} would be {size:,} rows; a "
                        "timestamp far from the others (check the first and last rows), or choose --freq")
    first, last = pd.Timestamp(first), pd.Timestamp(last)
    return pd.date_range(start=first, end=last, freq=to_offset(freq), unit=first.unit)


def _candidates(ts: pd.DatetimeIndex) -> list[str]:
    gaps = np.diff(ts.asi8)
    gaps = gaps[gaps > 0]
    unique, counts = np.unique(gaps, return_counts=True)
    step = _unit_step(ts, unique[np.argmax(counts)])
    out = [_alias_for_step(step, ts[0])]
    median = _unit_step(ts, np.median(gaps))
    nice = min(NICE_STEPS, key=lambda candidate: abs(np.log(candidate / median)))
    if abs(np.log(nice / median)) < np.log(1.25):  # readings a little off a round step (10:02 in an hourly series)
        out.append(_alias_for_step(nice, ts[0]))
    common = int(np.gcd.reduce(gaps))
    span = (ts[-1] - ts[0]) / _unit_step(ts, common)
    if common != unique[np.argmax(counts)] and span <= 2 * len(ts):  # a finer step that still fits every point
        out.append(_alias_for_step(_unit_step(ts, common), ts[0]))
    if step >= CALENDAR_STEPS_FROM:
        month = ts[0].month_name()[:3].upper()
        out += _calendar_steps(ts)
        out += ["B", "MS", "ME", "BMS", "BME", f"QS-{month}", f"QE-{month}", f"YS-{month}", f"YE-{month}"]
    return list(dict.fromkeys(out))


def step_days(ts: pd.DatetimeIndex) -> float:
    """The median step of sorted timestamps in days."""
    if len(ts) < 2:
        return 0.0
    ticks_per_day = pd.Timedelta(days=1) / _unit_step(ts, 1)
    return float(np.median(np.diff(ts.asi8))) / ticks_per_day


def fit_frequency(timestamps: pd.DatetimeIndex) -> tuple[str, float]:
    """The step that best explains sorted, distinct timestamps with gaps or stray points, and the share of the
    timestamps on its grid (1.0: every timestamp is on it; only rows are missing).

    Candidates: the most common gap, the round step nearest the median gap, a finer common step that still fits
    every point, and (for steps of a day or more) the calendar rules. The winner puts the most timestamps on its grid, then has the fewest grid points.
    """
    ts = pd.DatetimeIndex(timestamps)
    if len(ts) < 2:
        raise DataError(f"need at least 2 timestamps to infer the frequency, got {len(ts)}")
    best = None
    for alias in _candidates(ts):
        if grid_size(ts[0], ts[-1], alias) > 50 * len(ts) + 100:  # a grid far finer than the data: not its step
            continue
        try:
            points = grid(ts[0], ts[-1], alias)
        except (ValueError, OverflowError):
            continue
        on = float(ts.isin(points).mean())
        key = (on, -len(points), alias[0].isalpha() and step_days(ts) >= 28)  # ties: a calendar rule (YS, MS)
        if best is None or key > best[0]:
            best = (key, alias)
    if best is None:
        raise DataError(f"the {len(ts):,} timestamps, from {ts[0]} to {ts[-1]}, are too irregular to find their "
                        "step; check the first and last rows, or choose the step with --freq (e.g. --freq h)")
    return best[1], best[0][0]


def regularity(timestamps: pd.DatetimeIndex) -> float:
    """1.0 for timestamps on a grid with nothing missing; lower the more points are off it or missing
    (timestamps on the fitted grid ÷ its size); 0.0 for unordered timestamps."""
    ts = pd.DatetimeIndex(timestamps).dropna()
    if len(ts) < 3:
        return 1.0
    if (np.diff(ts.asi8) < 0).mean() > 0.01:
        return 0.0
    ts = ts.sort_values().unique()
    freq, _ = fit_frequency(ts)
    return float(ts.isin(grid(ts[0], ts[-1], freq)).sum() / max(1, len(grid(ts[0], ts[-1], freq))))


def describe_frequency(freq: str) -> str:
    """A frequency in words: 'hourly', 'every 15 minutes', 'daily', 'weekly (Saturdays)', 'monthly (month start)',
    'business days', 'quarterly (quarter start, from January)', …; the alias itself when there are no words."""
    try:
        offset = to_offset(freq)
    except (ValueError, TypeError):
        return str(freq)
    n = offset.n
    units = ((pd.offsets.Second, "second"), (pd.offsets.Minute, "minute"), (pd.offsets.Hour, "hour"),
             (pd.offsets.Day, "day"))
    adverbs = {"second": "every second", "minute": "every minute", "hour": "hourly", "day": "daily"}
    for cls, unit in units:
        if isinstance(offset, cls):
            return adverbs[unit] if n == 1 else f"every {n} {unit}s"
    every = "" if n == 1 else f"every {n} "
    if isinstance(offset, pd.offsets.Week):
        day = "" if offset.weekday is None else f" ({pd.Timestamp(2024, 1, 1 + offset.weekday).day_name()}s)"
        return (f"weekly{day}" if n == 1 else f"every {n} weeks{day}")
    if isinstance(offset, pd.offsets.BusinessDay):
        return "business days" if n == 1 else f"every {n} business days"
    names = ((pd.offsets.MonthBegin, "monthly", "month start"), (pd.offsets.MonthEnd, "monthly", "month end"),
             (pd.offsets.BusinessMonthBegin, "monthly", "first business day"),
             (pd.offsets.BusinessMonthEnd, "monthly", "last business day"),
             (pd.offsets.SemiMonthBegin, "twice a month", "1st and 15th"),
             (pd.offsets.SemiMonthEnd, "twice a month", "15th and month end"),
             (pd.offsets.QuarterBegin, "quarterly", "quarter start"), (pd.offsets.QuarterEnd, "quarterly", "quarter end"),
             (pd.offsets.YearBegin, "yearly", "year start"), (pd.offsets.YearEnd, "yearly", "year end"))
    for cls, word, anchor in names:
        if isinstance(offset, cls):
            month = getattr(offset, "startingMonth", None) or getattr(offset, "month", None)
            default = 12 if cls in (pd.offsets.QuarterEnd, pd.offsets.YearEnd) else 1
            cycle = 3 if word == "quarterly" else 12
            if month and (month - default) % cycle:
                anchor += f", {pd.Timestamp(2024, month, 1).month_name()}"
            unit = {"monthly": "months", "quarterly": "quarters", "yearly": "years"}.get(word)
            return f"{word} ({anchor})" if n == 1 or unit is None else f"{every}{unit} ({anchor})"
    return str(freq)


# ---------------------------------------------------------------------------------------------
# Supported frequencies: the time-feature family of a step
# ---------------------------------------------------------------------------------------------

_MONTHLY_OFFSETS = (
    pd.offsets.MonthBegin, pd.offsets.MonthEnd, pd.offsets.BusinessMonthBegin, pd.offsets.BusinessMonthEnd,
    pd.offsets.SemiMonthBegin, pd.offsets.SemiMonthEnd, pd.offsets.QuarterBegin, pd.offsets.QuarterEnd,
    pd.offsets.BQuarterBegin, pd.offsets.BQuarterEnd,
    pd.offsets.YearBegin, pd.offsets.YearEnd, pd.offsets.BYearBegin, pd.offsets.BYearEnd,  # month: a constant
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
        "hours, days, weeks, months, quarters and years"
    )


def check_supported_frequency(freq: str) -> None:
    try:
        frequency_kind(freq)
    except ConfigError as err:
        raise DataError(f"the series steps by {freq!r}, which cannot be used: {err}") from None


__all__ = ["describe_frequency", "fit_frequency", "future_timestamps", "grid", "infer_frequency", "regularity"]
