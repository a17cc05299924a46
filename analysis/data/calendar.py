"""Calendar facts of a frequency: the official Informer "timeF" time features, and the seasonal periods."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from .frequency import frequency_kind


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


def time_feature_names(freq: str) -> tuple[str, ...]:
    """The calendar fields encoded for `freq`, in column order (e.g. hourly: hour, dayofweek, day, dayofyear)."""
    return _FIELDS_BY_KIND[frequency_kind(freq)]


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
# Seasonal periods
# ---------------------------------------------------------------------------------------------

def _periods_per_step(rule_code: str) -> tuple[int, ...] | None:
    """The seasonal periods of one step of a calendar frequency (n = 1), by its rule code; None for a fixed step."""
    if rule_code in ("B", "C"):  # business days (C: custom business days)
        return (5,)
    if rule_code.startswith("W"):  # 'W-SUN', ...
        return (52,)
    if rule_code.startswith("SM"):  # semi-month: 'SMS-15', 'SME-15' ('SM-15' before pandas 2.2)
        return (24,)
    if rule_code in ("MS", "ME", "M", "BMS", "BME", "BM"):
        return (12,)
    if rule_code.startswith(("Q", "BQ")):  # 'QS-JAN', 'QE-DEC', 'BQS-JAN', ...
        return (4,)
    return None


def seasonal_periods(freq: str) -> tuple[int, ...]:
    """Seasonal periods, in steps of `freq`, shortest first: a day and a week for steps shorter than a day
    that divide it (hourly: 24, 168; 15-minute: 96, 672), 7 for daily, 5 for business days, and a year for
    weekly (52), semi-monthly (24), monthly (12) and quarterly (4) data; () when no cycle is obvious.

    A multiple of a step keeps a period only when it divides it: '2h' → (12, 84), '2MS' → (6,), '2W' → (26,),
    '3W', '5MS' and '2D' → (); a step that does not move forward (n < 1) has none.
    """
    offset = to_offset(freq)
    if offset.n < 1:
        return ()
    per_step = _periods_per_step(offset.rule_code)  # rule_code: 'h', 'min', 'D', 'B', 'W-SUN', 'MS', 'QS-JAN', ...
    if per_step is not None:
        return tuple(period // offset.n for period in per_step if period % offset.n == 0)
    try:
        seconds = pd.Timedelta(offset).total_seconds()
    except (ValueError, TypeError):
        return ()
    if seconds <= 0:
        return ()
    day, week = 86400.0, 7 * 86400.0
    if seconds < day and day % seconds == 0:
        return int(day // seconds), int(week // seconds)
    if seconds == day:
        return (7,)
    return ()


def seasonal_period(freq: str) -> int | None:
    """The season length in steps of `freq`, the first of `seasonal_periods` ('h' → 24, '15min' → 96,
    'D' → 7, 'W-SUN' → 52, 'MS' → 12); None when no cycle is obvious.

    Hourly data also has a weekly cycle (168 steps): pass `period=168` to `compare_forecasts` when
    seq_len ≥ 168.
    """
    periods = seasonal_periods(freq)
    return periods[0] if periods else None


__all__ = ["n_time_features", "seasonal_period", "seasonal_periods", "time_feature_names", "time_features"]
