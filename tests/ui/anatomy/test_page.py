"""Anatomy page: rollout through the pyramid, the three P forms, flow, the lens and the direct shares, re-sliced."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
from informer_lab.analysis.attention.recording import window_batch
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.anatomy.flow import flow, uniform
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV
from tests.ui.helpers import array, figure, grid, markdown_tables

PAGE = "ui/anatomy/page.py"


def test_rollout_flow_lens_and_shares(open_app, tiny_trained):
    at = open_app(PAGE)
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    pieces = record_pieces(checkpoint.model, window_batch(prepared, "test", [0]), 0)
    expected = rollout(window_graph(checkpoint.model, pieces, 0), range(1, 13)).inputs.mean(axis=0)

    picture = figure(at, "Rollout through the pyramid")
    z = grid(picture["data"][0]["z"], float)
    assert z.shape == (3, 48)  # layer 1 (24 positions over 48 steps), layer 0, the input steps
    np.testing.assert_allclose(z[-1], expected, rtol=1e-6)
    inputs = figure(at, "The input window shaded by relevance")
    bars = next(t for t in inputs["data"] if t["name"] == "rollout relevance")
    np.testing.assert_allclose(array(bars["y"]).astype(float), expected, rtol=1e-6)
    assert not any(t["name"] == "flow relevance" for t in inputs["data"])  # every step: flow on request
    forms = next(t for t in markdown_tables(at) if "form" in t.columns)
    assert list(forms["form"]) == ["routed", "structural", "jacobian"]
    assert any("label share" in m.value for m in at.markdown)

    at.session_state["an_tab"] = "Direct shares"  # lazy tabs: only the open one is drawn
    at.run()
    assert not at.exception
    bars = [t for t in figure(at, "Each decoder head's direct share")["data"] if t["type"] == "bar"]
    assert len(bars) == 2 * 4 and "remainder" not in {b["name"] for b in bars}
    at.toggle(key="an_remainder").set_value(True).run()
    shares = figure(at, "Each decoder head's direct share")
    bars = [t for t in shares["data"] if t["type"] == "bar"]
    assert len(bars) == 2 * 4 + 1  # decoder_self.0 and cross.0, four heads each, and the remainder
    total = np.sum([array(b["y"]).astype(float) for b in bars], axis=0)
    forecast = next(t for t in shares["data"] if t["name"] == "forecast")
    np.testing.assert_allclose(total, array(forecast["y"]).astype(float), rtol=1e-6, atol=1e-9)
    at.session_state["an_tab"] = "Forecast lens"
    at.run()
    lens = figure(at, "Forecast lens")
    assert {t["name"] for t in lens["data"]} >= {"truth", "decoder 0 (the forecast)", "encoder 0",
                                                "encoder 1 (the forecast)"}

    at.session_state["an_tab"] = "Rollout and flow"
    at.run()
    at.selectbox(key="an_step").set_value(3).run()  # a re-slice: one step, the same recording
    assert not at.exception
    one = rollout(window_graph(checkpoint.model, pieces, 0), [3]).inputs[0]
    np.testing.assert_allclose(grid(figure(at, "Rollout through the pyramid")["data"][0]["z"], float)[-1], one,
                               rtol=1e-6)
    branches = set()
    for alpha in (0.5, 0.9):  # one step, a small graph: flow at once; a line only where steps differ
        at.slider(key="an_alpha").set_value(alpha).run()
        raw = flow(window_graph(checkpoint.model, pieces, 0, alpha=alpha), [3])[1]
        drawn = any(t["name"] == "flow relevance" for t in figure(at, "The input window shaded by relevance")["data"])
        said = any("every input step takes the same maximum flow" in i.value for i in at.info)
        assert (drawn, said) == (not uniform(raw), uniform(raw)), alpha
        branches.add(uniform(raw))
    assert branches == {True, False}  # α = ½ gives every step the whole cut; α = 0.9 lets the columns differ
    at.slider(key="an_alpha").set_value(0.5).run()
    at.radio(key="an_form").set_value("jacobian").run()
    at.selectbox(key="an_head").set_value(2).run()
    assert not at.exception
    head = rollout(window_graph(checkpoint.model, pieces, 0, head=2, distil="jacobian"), [3]).inputs[0]
    np.testing.assert_allclose(grid(figure(at, "Rollout through the pyramid")["data"][0]["z"], float)[-1], head,
                               rtol=1e-6)

    at.session_state["an_tab"] = "Forecast lens"
    at.run()
    at.button(key="an_lens_run").click().run()
    assert not at.exception
    lens_table = next(t.value for t in at.dataframe if "MSE to the forecast" in t.value.columns)
    assert set(lens_table["lens"]) == {"decoder", "encoder", "encoder_tuned"}
    final = lens_table[(lens_table["lens"] == "decoder")]
    assert np.isfinite(final["MSE"]).all()


def test_the_pyramid_chart_keeps_one_column_per_step_at_any_resolution():
    """Every input step its own column, with its lag in the hover, also on data a second apart (minute-resolution
    labels would merge sixty steps into one)."""
    import pandas as pd

    from informer_lab.ui.anatomy.charts import pyramid_figure

    L = 120
    timestamps = pd.date_range("2024-01-01", periods=L, freq="s")
    z = np.random.default_rng(0).random((3, L))
    trace = pyramid_figure(["layer 1", "layer 0", "input steps"], z, timestamps, "test").data[0]
    assert len(set(pd.DatetimeIndex(trace.x))) == L
    np.testing.assert_array_equal(np.asarray(trace.customdata)[0], L - np.arange(L))
    np.testing.assert_allclose(np.asarray(trace.z, float), z, rtol=1e-6)
