"""The query/key map's shaping: the points drawn when a map holds more than the browser is sent."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.instruments.qk_map import qk_map, qk_map_table
from informer_lab.ui.qk_map.tables import MAX_DRAWN, drawn_points


def test_a_map_over_the_drawing_limit_is_cut_to_it_keeping_every_selected_query(tiny_trained, tiny_prepared):
    """256 windows of (48 queries + 48 keys) = 24,576 points: the branch long inputs reach (it crashed on pandas 3's
    read-only columns)."""
    m = qk_map(tiny_trained[0].model, tiny_prepared, "test", "encoder.0.0", 1, windows=256, seed=0)
    assert m.n_points > MAX_DRAWN
    drawn = drawn_points(m, seed=3)
    assert len(drawn) == MAX_DRAWN
    points = drawn["point"].to_numpy()
    assert len(np.unique(points)) == len(points) and points.min() >= 0 and points.max() < m.n_points
    assert set(np.flatnonzero(m.selected)) <= set(points)  # every selected query kept
    whole = qk_map_table(m)
    pd.testing.assert_frame_equal(drawn.drop(columns="point"), whole.iloc[points].reset_index(drop=True))
    again = drawn_points(m, seed=3)
    np.testing.assert_array_equal(again["point"], points)  # seeded
    assert not np.array_equal(drawn_points(m, seed=4)["point"], points)


def test_a_small_limit_keeps_the_selected_queries_and_fills_up_with_others(tiny_trained, tiny_prepared):
    m = qk_map(tiny_trained[0].model, tiny_prepared, "test", "encoder.0.0", 0, windows=16, seed=0)
    selected = int(m.selected.sum())
    drawn = drawn_points(m, seed=0, limit=2 * selected + 50)
    assert len(drawn) == 2 * selected + 50 and int(drawn["selected"].sum()) == selected
    assert len(drawn_points(m, seed=0, limit=m.n_points)) == m.n_points  # under the limit: every point


def test_a_click_on_any_trace_names_the_map_point_drawn_there(tiny_trained, tiny_prepared):
    """Streamlit reports a click as (curve, index in that trace): it must lead to the point whose coordinates are
    drawn there, for keys, queries and the ringed selected queries alike."""
    from informer_lab.ui.qk_map.charts import map_figure
    from informer_lab.ui.qk_map.tables import clicked_point
    m = qk_map(tiny_trained[0].model, tiny_prepared, "test", "encoder.0.0", 2, windows=32, seed=0)
    points = drawn_points(m, seed=0, limit=1_000)
    figure = map_figure(points, {"kind": None}, {"kind": "query or key"}, "map", (0.5, 0.2))
    for curve in range(3):
        trace = figure.data[curve]
        for index in (0, len(trace.x) // 2, len(trace.x) - 1):
            point = clicked_point({"selection": {"points": [{"curve_number": curve, "point_index": index}]}}, points)
            np.testing.assert_allclose([trace.x[index], trace.y[index]], m.xy[point], rtol=1e-6, atol=1e-6)
            assert list(trace.customdata[index]) == [m.window[point], m.position[point]]
    assert clicked_point({"selection": {"points": []}}, points) is None
    assert clicked_point(None, points) is None


def test_the_default_window_count_keeps_a_map_under_a_million_points():
    from informer_lab.ui.qk_map.tables import default_windows
    choices = (64, 256, 1024)
    assert [choices[default_windows(choices, L)] for L in (48, 96, 1440, 5760, 20_000)] == [256, 256, 256, 64, 64]


def test_selected_queries_fill_at_most_half_of_a_small_drawing(tiny_trained, tiny_prepared):
    m = qk_map(tiny_trained[0].model, tiny_prepared, "test", "encoder.0.0", 0, windows=64, seed=0)
    selected = int(m.selected.sum())  # 64 windows × 20
    drawn = drawn_points(m, seed=1, limit=selected)
    assert len(drawn) == selected and int(drawn["selected"].sum()) == selected // 2
    assert drawn["point"].is_unique and drawn["point"].is_monotonic_increasing
