"""The shared chart helpers (no Streamlit)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.ui.charts import thin


def test_a_long_line_is_thinned_to_its_bucket_extremes_and_keeps_its_ends():
    rng = np.random.default_rng(0)
    index = pd.date_range("2024-01-01", periods=11_520, freq="15min")
    series = pd.Series(np.cumsum(rng.normal(size=len(index))), index=index)
    series.iloc[5_000] = 1e3  # a lone spike must survive
    drawn = thin(series, limit=1_000)
    assert len(drawn) <= 1_002 and drawn.index.is_monotonic_increasing
    pd.testing.assert_series_equal(drawn, series.loc[drawn.index])  # points of the line, not averages
    assert drawn.index[0] == index[0] and drawn.index[-1] == index[-1]
    assert drawn.max() == series.max() and drawn.min() == series.min()
    edges = np.linspace(0, len(series), 501).astype(int)  # 500 equal runs of consecutive points: each keeps its extremes
    for a, b in zip(edges[:-1], edges[1:]):
        assert series.iloc[a:b].max() in drawn.values and series.iloc[a:b].min() in drawn.values


def test_a_short_line_comes_back_whole():
    series = pd.Series([1.0, np.nan, 3.0])
    assert thin(series, limit=10) is series
