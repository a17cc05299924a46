"""The exact-vs-sampled scatter: every selected or exact-top query drawn; a long input's lazy bulk drawn one point a
cell of the chart, every occupied cell still drawn."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.ui.charts import SCATTER_CELLS, one_per_cell
from informer_lab.ui.sparsity.charts import MAX_SCATTER_POINTS, exact_vs_sampled_figure


def _queries(n: int, u: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    exact = rng.normal(size=n)
    sampled = exact + rng.normal(scale=0.3, size=n)
    selected = np.zeros(n, bool)
    selected[np.argsort(-sampled)[:u]] = True
    in_top = np.zeros(n, bool)
    in_top[np.argsort(-exact)[:u]] = True
    hq = pd.DataFrame({"position": np.arange(n), "timestamp": pd.date_range("2024-01-01", periods=n, freq="15min"),
                       "exact_m": exact, "sampled_mbar": sampled, "selected": selected,
                       "rank_sampled": np.argsort(np.argsort(-sampled)) + 1,
                       "rank_exact": np.argsort(np.argsort(-exact)) + 1})
    return hq, in_top


def _cells(x, y, hq) -> set:
    (x0, x1), (y0, y1) = [(hq[c].min(), hq[c].max()) for c in ("exact_m", "sampled_mbar")]
    nx, ny = SCATTER_CELLS
    return {(min(int((a - x0) / (x1 - x0) * nx), nx - 1), min(int((b - y0) / (y1 - y0) * ny), ny - 1))
            for a, b in zip(x, y)}


def test_each_point_sits_at_its_query_and_a_long_inputs_bulk_keeps_every_occupied_cell():
    for n, u in ((96, 25), (5760, 45)):
        hq, in_top = _queries(n, u)
        fig = exact_vs_sampled_figure(hq, "exact_m", "exact M", in_top, "t")
        drawn = np.concatenate([np.asarray(t.customdata)[:, 0].astype(int) for t in fig.data])
        assert len(set(drawn)) == len(drawn)  # no query twice
        bulk = ~hq["selected"].to_numpy() & ~in_top
        assert set(np.flatnonzero(~bulk)) <= set(drawn)  # every selected or exact-top query is drawn
        for t in fig.data:  # each point at its query's numbers, in the group its name says
            at = np.asarray(t.customdata)[:, 0].astype(int)
            np.testing.assert_allclose(t.x, hq["exact_m"].to_numpy()[at])
            np.testing.assert_allclose(t.y, hq["sampled_mbar"].to_numpy()[at])
            assert hq["selected"].to_numpy()[at].all() == t.name.startswith("selected")
        last = fig.data[-1]
        assert last.name.startswith(f"lazy · not in exact top-u ({bulk.sum()}")
        if n <= MAX_SCATTER_POINTS:
            assert len(drawn) == n
        else:  # thinned: fewer points, but every cell a bulk query occupies still has a drawn point
            assert len(last.x) < bulk.sum() and last.name.endswith(f"{len(last.x)} drawn)")
            assert _cells(last.x, last.y, hq) == _cells(hq["exact_m"][bulk], hq["sampled_mbar"][bulk], hq)


def test_one_point_per_cell_by_hand():
    x = np.array([0.0, 0.1, 0.9, 1.0, np.nan, 0.55])
    y = np.array([0.0, 0.05, 0.9, 1.0, 0.5, 0.2])
    keep = one_per_cell(x, y, (0.0, 1.0), (0.0, 1.0), cells=(2, 2))
    np.testing.assert_array_equal(keep, [0, 2, 5])  # 1 shares 0's cell, 3 shares 2's, NaN is left out
    flat = one_per_cell(np.ones(4), np.arange(4.0), (1.0, 1.0), (0.0, 3.0), cells=(3, 4))  # a zero-width range
    np.testing.assert_array_equal(flat, [0, 1, 2, 3])


def test_the_score_heatmap_places_evenly_spaced_queries_by_a_start_and_a_step():
    from informer_lab.ui.sparsity.charts import score_heatmap
    n = 5760
    stamps = pd.date_range("2017-08-25", periods=n, freq="15min")
    pos = pd.DataFrame({"position": np.arange(n), "timestamp": stamps, "span_start": stamps, "span_end": stamps,
                        "segment": "input"})
    z, selected = np.random.default_rng(0).random((4, n)), np.zeros((4, n), bool)
    fig = score_heatmap(z, pos, selected, "M", "t")
    assert fig.data[0].x is None and pd.Timestamp(fig.data[0].x0) == stamps[0] and fig.data[0].dx == 15 * 60 * 1000
    gap = pos.copy()
    gap.loc[100:, "timestamp"] += pd.Timedelta("1h")  # a gap: every query keeps its own timestamp
    fig = score_heatmap(z, gap, selected, "M", "t")
    assert fig.data[0].x0 is None and list(pd.DatetimeIndex(fig.data[0].x)) == list(gap["timestamp"])


def test_the_selected_series_line_of_a_long_input_keeps_each_buckets_extremes():
    from informer_lab.ui.charts import MAX_LINE_POINTS
    from informer_lab.ui.sparsity.charts import selected_series_figure
    n = 5856
    values = np.sin(np.arange(n) / 50.0)
    values[4321] = 9.0  # a spike survives
    series = pd.DataFrame({"timestamp": pd.date_range("2017-08-25", periods=n, freq="15min"), "value": values,
                           "part": np.where(np.arange(n) < 5760, "encoder input", "future (truth, not an input)")})
    marks = pd.DataFrame({"timestamp": series["timestamp"][:2], "value": values[:2], "position": [0, 1],
                          "span": ["a", "b"], "rank": [1, 2]})
    fig = selected_series_figure(series, marks, "OT", "t", series["timestamp"][5760])
    line = fig.data[0]
    assert len(line.x) <= MAX_LINE_POINTS + 2 and max(line.y) == 9.0 and min(line.y) == values[:5760].min()
    assert len(fig.data[1].x) == 96  # the short future part is drawn whole
