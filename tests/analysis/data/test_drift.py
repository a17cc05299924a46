"""A split that leaves the train range is measured, and the verdict names RevIN for a model that loses to seasonal
naive on it (not for a stationary series, nor for a model already trained with it)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.data import DataSpec, column_departure, load_csv, prepare, range_departure
import io


def _frame(values: np.ndarray):
    hours = pd.date_range("2020-01-01", periods=len(values), freq="h")
    return load_csv(io.BytesIO(pd.DataFrame({"date": hours.strftime("%Y-%m-%d %H:%M:%S"), "y": values}).to_csv(index=False).encode()))


def test_a_trend_leaves_the_train_range_and_a_stationary_series_does_not():
    n = 2000
    t = np.arange(n, dtype=float)
    season = np.sin(2 * np.pi * t / 24)
    spec = DataSpec("y", "S", 48, 24, 12)
    trending = range_departure(prepare(_frame(t / 100 + season), spec))
    assert trending.above == 1.0 and trending.below == 0.0 and trending.left  # every test row above the train's
    assert "100% of its rows above the train split's highest value" in trending.describe()
    flat = range_departure(prepare(_frame(season + np.random.default_rng(0).normal(0, 0.1, n)), spec))
    assert flat.outside < 0.05 and not flat.left
    falling = column_departure(-t, 48)  # the same before any model, from the raw column
    assert falling.below == 1.0 and falling.above == 0.0
    # the forecast rows are counted, not the seq_len rows of history that the test split borrows from val
    edge = np.concatenate([np.zeros(1600), np.ones(400)])  # the step lands exactly where the test rows start
    assert column_departure(edge, 48).above == 1.0
