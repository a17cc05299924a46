"""analysis.data.frequency: the step of a series, and the timestamps that continue it."""
from __future__ import annotations


import pandas as pd
import pytest

from informer_lab.analysis.data import (
    future_timestamps,
    infer_frequency,
    load_csv,
)
from informer_lab.analysis.errors import DataError
from tests.analysis.data.helpers import csv_text, write


@pytest.mark.parametrize("freq, expected", [
    ("h", "h"), ("15min", "15min"), ("min", "min"), ("s", "s"), ("D", "D"), ("2h", "2h"),
    ("W-SUN", "W-SUN"), ("MS", "MS"), ("ME", "ME"), ("B", "B"),
])
def test_infer_frequency(freq, expected):
    stamps = pd.date_range("2024-01-07", periods=40, freq=freq)
    assert infer_frequency(stamps) == expected


def test_infer_frequency_from_a_15_minute_csv(tmp_path):
    stamps = pd.date_range("2024-01-01", periods=10, freq="15min").strftime("%Y-%m-%d %H:%M")
    frame = load_csv(write(tmp_path, csv_text([f"{ts},{i}" for i, ts in enumerate(stamps)], header="date,x")))
    assert frame.freq == "15min"


def test_infer_frequency_uses_the_most_common_step():
    stamps = pd.DatetimeIndex(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-05", "2024-01-06"])
    with pytest.raises(DataError) as info:
        infer_frequency(stamps)
    assert info.value.row == 3
    assert "comes 2 days after" in str(info.value) and "steps daily" in str(info.value)


@pytest.mark.parametrize("freq", ["h", "15min", "D", "MS", "W-SUN"])
def test_future_timestamps_continue_the_step(freq):
    history = pd.date_range("2024-01-07", periods=30, freq=freq)
    future = future_timestamps(history[-1], freq, 5)
    expected = pd.date_range(history[0], periods=35, freq=freq)[30:]
    assert list(future) == list(expected)
