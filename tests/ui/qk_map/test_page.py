"""Query/key map page: the points drawn are the analysis' map; a click opens that point's attention row."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.instruments.counterfactual import counterfactual
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.instruments.qk_map import qk_map
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV
from tests.ui.helpers import array, charts

PAGE = "ui/qk_map/page.py"


def _map_figure(at) -> dict:
    return next(f for f in charts(at) if "queries and keys of" in f["layout"]["title"]["text"])


def test_the_map_draws_every_query_and_key_where_the_analysis_puts_them(open_app, tiny_trained):
    at = open_app(PAGE)
    at.selectbox(key="qk_site").set_value("encoder.0.1").run()
    at.selectbox(key="qk_head").set_value(2).run()
    at.radio(key="qk_windows").set_value(64).run()
    assert not at.exception, at.exception
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    m = qk_map(checkpoint.model, prepared, "test", "encoder.0.1", 2, windows=64, seed=0)
    keys, queries, selected = _map_figure(at)["data"]
    assert keys["type"] == queries["type"] == "scattergl"
    q = m.xy[m.is_query]
    np.testing.assert_allclose(np.c_[array(queries["x"]), array(queries["y"])], q, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.c_[array(keys["x"]), array(keys["y"])], m.xy[~m.is_query], rtol=1e-5, atol=1e-6)
    assert len(array(selected["x"])) == int(m.selected.sum())  # every ProbSparse-selected query ringed
    assert f"{64:,} windows" in " ".join(x.value for x in at.markdown)


def _button(figure: dict, label: str) -> dict:
    """The restyle arguments of the map's colouring button `label` (its marker settings per trace [keys, queries])."""
    menu = figure["layout"]["updatemenus"][0]
    found = next(b for b in menu["buttons"] if b["label"] == label)
    assert found["method"] == "restyle" and found["args"][1] == [0, 1]
    return found["args"][0]


def test_every_colouring_is_a_button_of_the_map_with_each_points_own_value(open_app, tiny_trained):
    """Recolouring happens in the browser (no rerun): each button carries, per trace, the value of every drawn point,
    in the trace's point order, so the colour a point gets is its own hour, step, window or M̄."""
    at = open_app(PAGE)
    at.radio(key="qk_windows").set_value(64).run()
    assert not at.exception, at.exception
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    m = qk_map(checkpoint.model, prepared, "test", "encoder.0.0", 0, windows=64, seed=0)
    figure = _map_figure(at)
    labels = [b["label"] for b in figure["layout"]["updatemenus"][0]["buttons"]]
    assert labels == ["query or key", "input step", "hour of day", "day of week", "sampled M̄ (queries)", "window"]
    keys, queries = m.is_query == 0, m.is_query == 1  # the map's order: the drawing keeps every point (64 windows)
    hour = _button(figure, "hour of day")
    np.testing.assert_array_equal(hour["marker.color"][1], m.timestamp[queries].hour)
    np.testing.assert_array_equal(hour["marker.color"][0], m.timestamp[keys].hour)
    assert hour["marker.showscale"] == [False, True] and hour["marker.cmin"] == [0, 0]
    weekday = _button(figure, "day of week")
    np.testing.assert_array_equal(weekday["marker.color"][1], m.timestamp[queries].day_of_week)
    window = _button(figure, "window")
    np.testing.assert_array_equal(window["marker.color"][0], m.window[keys])
    mbar = _button(figure, "sampled M̄ (queries)")
    np.testing.assert_allclose(mbar["marker.color"][1], m.mbar[queries], rtol=1e-3)  # 4 significant digits
    assert isinstance(mbar["marker.color"][0], str)  # keys have no M̄: one grey
    kind = _button(figure, "query or key")
    assert kind["marker.color"] == [figure["data"][0]["marker"]["color"], figure["data"][1]["marker"]["color"]]


def test_a_clicked_query_shows_its_recorded_attention_row(open_app, tiny_trained):
    at = open_app(PAGE)
    at.radio(key="qk_windows").set_value(64).run()
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    m = qk_map(checkpoint.model, prepared, "test", "encoder.0.0", 0, windows=64, seed=0)
    point = int(np.flatnonzero(m.selected)[5])  # a selected query: its row is computed
    at.session_state["qk_point"] = point
    at.run()
    assert not at.exception, at.exception
    window, position = int(m.window[point]), int(m.position[point])
    row = next(f for f in charts(at) if f["layout"]["title"]["text"].startswith(f"Attention row of query {position}"))
    want = counterfactual(checkpoint.model, prepared, "test", window, "none", seed=0).attention_row(
        "encoder.0.0", 0, position)
    assert bool(want["computed_original"].all())
    np.testing.assert_allclose(array(row["data"][0]["y"]), want["original"], rtol=1e-5, atol=1e-7)
    assert np.isclose(array(row["data"][0]["y"]).sum(), 1.0, atol=1e-5)  # a softmax row
    assert any(f"Query {position} of window {window}" in s.value for s in at.subheader)
    at.button(key="qk_open").click().run()
    assert at.session_state["sp_window_test"] == window and at.session_state["sp_site"] == "encoder.0.0"
