"""analysis.data.calendar: the timeF time features and seasonal periods of a frequency."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.data import (
    n_time_features,
    seasonal_period,
    seasonal_periods,
    time_features,
)
from informer_lab.analysis.errors import ConfigError


def test_hourly_time_features_at_a_known_timestamp():
    # 2024-03-05 13:00 is a Tuesday (dayofweek 1), day 5, day of year 31 + 29 + 5 = 65.
    marks = time_features(pd.DatetimeIndex(["2024-03-05 13:00"]), "h")
    expected = [13 / 23 - 0.5, 1 / 6 - 0.5, 4 / 30 - 0.5, 64 / 365 - 0.5]
    assert marks.dtype == np.float32 and marks.shape == (1, 4)
    np.testing.assert_allclose(marks[0], expected, rtol=0, atol=1e-7)


def test_minutely_and_secondly_time_features_prepend_minute_then_second():
    stamp = pd.DatetimeIndex(["2024-03-05 13:45:30"])
    hourly = time_features(stamp, "h")[0]
    minutely = time_features(stamp, "15min")[0]
    secondly = time_features(stamp, "s")[0]
    np.testing.assert_allclose(minutely, [45 / 59 - 0.5, *hourly], atol=1e-7)
    np.testing.assert_allclose(secondly, [30 / 59 - 0.5, 45 / 59 - 0.5, *hourly], atol=1e-7)


def test_daily_weekly_monthly_time_features():
    stamp = pd.DatetimeIndex(["2024-03-05"])  # ISO week 10
    np.testing.assert_allclose(time_features(stamp, "D")[0], [1 / 6 - 0.5, 4 / 30 - 0.5, 64 / 365 - 0.5], atol=1e-7)
    np.testing.assert_allclose(time_features(stamp, "B")[0], time_features(stamp, "D")[0])
    np.testing.assert_allclose(time_features(stamp, "W-SUN")[0], [4 / 30 - 0.5, 9 / 52 - 0.5], atol=1e-7)
    np.testing.assert_allclose(time_features(stamp, "MS")[0], [2 / 11 - 0.5], atol=1e-7)


def test_time_features_stay_in_half_unit_range_over_a_year():
    marks = time_features(pd.date_range("2024-01-01", periods=366 * 24, freq="h"), "h")
    assert marks.min() == pytest.approx(-0.5) and marks.max() == pytest.approx(0.5)


@pytest.mark.parametrize("freq, count", [("s", 6), ("min", 5), ("15min", 5), ("h", 4), ("D", 3), ("B", 3),
                                         ("W-SUN", 2), ("MS", 1), ("ME", 1)])
def test_n_time_features(freq, count):
    assert n_time_features(freq) == count
    assert time_features(pd.date_range("2024-01-01", periods=3, freq=freq), freq).shape == (3, count)


def test_unknown_frequency_is_a_config_error():
    with pytest.raises(ConfigError):
        n_time_features("fortnightly")


@pytest.mark.parametrize("freq, periods", [
    ("h", (24, 168)), ("15min", (96, 672)), ("2h", (12, 84)), ("7min", ()), ("D", (7,)), ("2D", ()), ("B", (5,)),
    ("2B", ()), ("W-SUN", (52,)), ("2W", (26,)), ("3W", ()), ("MS", (12,)), ("2MS", (6,)), ("5MS", ()),
    ("SMS", (24,)), ("QS-JAN", (4,)), ("2QS", (2,)), ("3QS", ()), ("YS", ()), ("ms", ()), ("-1MS", ()),
])
def test_seasonal_periods_of_a_multiple_are_those_it_divides(freq, periods):
    assert seasonal_periods(freq) == periods
    assert seasonal_period(freq) == (periods[0] if periods else None)
