"""The shared attention-rows view stays readable for long inputs: bounded height and labels, a log colour scale
that keeps the true weights in the hover."""
from __future__ import annotations

import numpy as np

from informer_lab.ui.attention_rows import LOG_FLOOR, MAX_HEIGHT, MAX_LABELS, HeadRows, rows_heatmap


def _rows(u: int, L_K: int) -> HeadRows:
    rng = np.random.default_rng(0)
    z = rng.dirichlet(np.ones(L_K), size=u)
    z[0, :5] = 0.0  # exact zeros (causal rows) must not break the log scale
    z[0] /= z[0].sum()
    return HeadRows(z, np.arange(u), np.arange(u), np.arange(L_K), np.array([], int), "mean(V)", "")


def test_a_long_cross_attention_is_drawn_in_bounded_height_with_few_labels():
    rows = _rows(816, 360)
    fig = rows_heatmap(rows, [f"s{i}" for i in range(816)], [f"2024-01-01 {i}" for i in range(360)], "t", False)
    assert fig.layout.height == MAX_HEIGHT
    assert len(fig.layout.yaxis.tickvals) <= MAX_LABELS
    assert len(fig.data[0].y) == 816  # every row is still drawn


def test_the_log_scale_colours_by_log10_and_hovers_the_weight():
    rows = _rows(40, 1440)
    fig = rows_heatmap(rows, [f"s{i}" for i in range(40)], [f"2024-01-01 {i}" for i in range(1440)], "t", False,
                       log=True)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, np.log10(np.maximum(rows.z, LOG_FLOOR)), rtol=1e-6)
    assert fig.data[0].zmin == np.log10(LOG_FLOOR)
    assert fig.data[0].customdata is None and len(fig.to_json()) < 2_000_000  # 57,600 cells: no per-cell hover data
    small = _rows(12, 96)
    fig = rows_heatmap(small, [f"s{i}" for i in range(12)], [f"2024-01-01 {i}" for i in range(96)], "t", False,
                       log=True)
    np.testing.assert_allclose(np.asarray(fig.data[0].customdata)[..., 1].astype(float), small.z)
    short = rows_heatmap(_rows(4, 12), list("abcd"), [f"2024-01-01 {i}" for i in range(12)], "t", False)
    assert short.layout.height < MAX_HEIGHT and short.layout.yaxis.tickvals is None


def test_a_long_history_is_cut_to_the_recent_steps_beside_the_forecast():
    import pandas as pd
    from informer_lab.ui.charts import recent
    stamps = pd.date_range("2024-01-01", periods=1440, freq="15min")
    history = pd.DataFrame({"timestamp": stamps.repeat(2), "column": ["a", "b"] * 1440, "value": range(2880)})
    cut = recent(history, 96)
    assert cut["timestamp"].nunique() == 384 and cut["timestamp"].iloc[-1] == stamps[-1]
    short = history[history["timestamp"] >= stamps[-50]]
    assert recent(short, 12) is short  # short histories are drawn whole


def test_rows_longer_than_a_chart_is_wide_are_drawn_in_bins_that_keep_each_peak():
    from informer_lab.ui.attention_rows import MAX_KEY_COLUMNS, binned_max, key_bin_width
    rows = _rows(45, 5760)
    rows.z[3, 4321] = 0.9  # a spike must keep its height in its bin
    fig = rows_heatmap(rows, [f"s{i}" for i in range(45)], [f"2024-01-01 {i}" for i in range(5760)], "t", False)
    z = np.asarray(fig.data[0].z)
    width = key_bin_width(5760)
    assert width == 4 and z.shape == (45, MAX_KEY_COLUMNS) and fig.data[0].dx == width
    for r in (0, 3, 44):  # each cell is the largest weight of its bin of keys, computed bin by bin
        expected = [rows.z[r, b * width:(b + 1) * width].max() for b in range(MAX_KEY_COLUMNS)]
        np.testing.assert_allclose(z[r], expected, rtol=1e-6)
    assert z[3, 4321 // width] == np.float32(0.9)
    assert fig.layout.title.text.endswith("· bins of 4 keys") and "bin of 4" in fig.data[0].hovertemplate
    ragged = binned_max(np.arange(10.0).reshape(1, 10), 4)  # the last bin is shorter: keys 8 and 9
    np.testing.assert_array_equal(ragged, [[3.0, 7.0, 9.0]])
    assert key_bin_width(MAX_KEY_COLUMNS) == 1 and key_bin_width(MAX_KEY_COLUMNS + 1) == 2
