"""Head masking page: the checkbox grid drives the masked forecast; window and split drive the data."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.heads.masking import head_mask, masked_window_forecast, mean_contexts
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.ui.helpers import FORECAST_PAGE, MASK_PAGE, array, charts, checkbox, metric, table
from tests.conftest import SAMPLE_CSV


def _expected(tiny_trained, split, window, off, mode="zero", seed=0, column="load"):
    """The same forecast of `column` computed straight from analysis/, without the app."""
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    means = mean_contexts(checkpoint.model, prepared, "train", max_windows=256, seed=seed) if mode == "mean" else None
    mask = head_mask(checkpoint.model, off, mode, means)
    t = masked_window_forecast(checkpoint.model, prepared, split, window, mask, seed=seed).table
    return t[t.column == column].reset_index(drop=True)


def test_grid_has_a_checkbox_per_site_and_head_all_on(open_app):
    at = open_app(MASK_PAGE)
    labels = [c.label for c in at.checkbox]
    assert labels == [f"{site}:{h}" for site in ("encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0")
                      for h in range(4)]
    assert all(c.value for c in at.checkbox)
    rows = table(at)
    assert len(rows) == 12 and list(rows["step"]) == list(range(1, 13))
    np.testing.assert_allclose(rows["masked"], rows["baseline"])
    assert metric(at, "Steps made worse") == "0 of 12"


def test_turning_a_head_off_changes_the_masked_forecast_to_the_analysis_result(open_app, tiny_trained):
    at = open_app(MASK_PAGE)
    before = table(at)
    checkbox(at, "encoder.0.0:1").uncheck().run()
    assert not at.exception
    after = table(at)
    np.testing.assert_allclose(after["baseline"], before["baseline"])
    np.testing.assert_allclose(after["truth"], before["truth"])
    assert np.abs(after["masked"] - before["masked"]).max() > 1e-3
    expected = _expected(tiny_trained, "test", 0, [(0, 1)])
    np.testing.assert_allclose(after["masked"], expected["masked"], rtol=1e-5)
    np.testing.assert_allclose(after["error_change"], after["masked_error"] - after["baseline_error"], atol=1e-9)
    assert any("encoder.0.0:1" in m.value for m in at.markdown)
    # mean ablation is a different intervention with a different result
    at.radio(key="hm_mode").set_value("mean").run()
    assert not at.exception
    mean = table(at)
    np.testing.assert_allclose(mean["masked"], _expected(tiny_trained, "test", 0, [(0, 1)], "mean")["masked"],
                               rtol=1e-5)
    assert np.abs(mean["masked"] - after["masked"]).max() > 1e-4


def test_window_and_split_change_the_plotted_data(open_app):
    at = open_app(MASK_PAGE)
    first = charts(at)[0]
    first_rows = table(at)
    at.slider(key="hm_window_test").set_value(5).run()
    assert not at.exception
    moved = table(at)
    assert (pd.to_datetime(moved["timestamp"]) - pd.to_datetime(first_rows["timestamp"])).eq(pd.Timedelta("5h")).all()
    history, moved_history = array(first["data"][0]["y"]), array(charts(at)[0]["data"][0]["y"])
    np.testing.assert_allclose(moved_history[:-5], history[5:])  # the encoder history moved by 5 steps
    at.radio(key="hm_split").set_value("val").run()
    assert not at.exception
    val = table(at)
    assert pd.to_datetime(val["timestamp"]).max() < pd.to_datetime(first_rows["timestamp"]).min()


def test_the_mask_survives_a_page_switch_and_all_heads_on_resets_it(open_app):
    at = open_app(MASK_PAGE)
    checkbox(at, "cross.0:3").uncheck().run()
    at.slider(key="hm_window_test").set_value(7).run()
    masked = table(at)["masked"].to_numpy()
    at.switch_page(FORECAST_PAGE).run()
    at.switch_page(MASK_PAGE).run()
    assert not at.exception
    assert not checkbox(at, "cross.0:3").value and at.slider(key="hm_window_test").value == 7
    np.testing.assert_allclose(table(at)["masked"], masked)
    at.button(key="hm_all_on").click().run()
    assert all(c.value for c in at.checkbox)
    rows = table(at)
    np.testing.assert_allclose(rows["masked"], rows["baseline"])


def test_two_sessions_keep_their_own_masks_on_the_shared_model(open_app, tiny_trained):
    """Two tabs share the cached checkpoint (cache_resource) but not their masks or results."""
    a, b = open_app(MASK_PAGE), open_app(MASK_PAGE)
    checkbox(a, "encoder.0.0:0").uncheck().run()
    checkbox(b, "cross.0:2").uncheck().run()
    b.radio(key="hm_mode").set_value("mean").run()
    a.run()
    ta, tb = table(a), table(b)
    np.testing.assert_allclose(ta["baseline"], tb["baseline"])  # same model, same window, same seed
    assert np.abs(ta["masked"] - tb["masked"]).max() > 1e-4
    np.testing.assert_allclose(ta["masked"], _expected(tiny_trained, "test", 0, [(0, 0)])["masked"], rtol=1e-5)
    np.testing.assert_allclose(tb["masked"], _expected(tiny_trained, "test", 0, [(3, 2)], "mean")["masked"],
                               rtol=1e-5)
    assert [c.label for c in a.checkbox if not c.value] == ["encoder.0.0:0"]
    assert [c.label for c in b.checkbox if not c.value] == ["cross.0:2"]
    assert a.radio(key="hm_mode").value == "zero"


def test_the_seed_is_visible_and_reaches_the_analysis(open_app, tiny_trained):
    at = open_app(MASK_PAGE)
    checkbox(at, "decoder_self.0:0").uncheck().run()
    at.number_input(key="analysis_seed").set_value(3).run()
    assert not at.exception
    assert any("seed 3" in c.value for c in at.caption)
    rows = table(at)
    expected = _expected(tiny_trained, "test", 0, [(2, 0)], seed=3)
    np.testing.assert_allclose(rows["baseline"], expected["baseline"], rtol=1e-5)
    np.testing.assert_allclose(rows["masked"], expected["masked"], rtol=1e-5)


def test_the_plotted_column_switches_both_panels_of_the_one_figure(open_app, tiny_trained):
    at = open_app(MASK_PAGE)
    checkbox(at, "encoder.0.0:1").uncheck().run()
    at.selectbox(key="hm_column").set_value("temperature").run()
    assert not at.exception
    figures = charts(at)
    assert len(figures) == 1  # the forecast and its error change are panels of one figure
    fig = figures[0]
    assert fig["layout"]["title"]["text"].startswith("temperature: window 0")
    rows = table(at)
    expected = _expected(tiny_trained, "test", 0, [(0, 1)], column="temperature")
    masked = next(tr for tr in fig["data"] if tr["name"] == "masked")
    np.testing.assert_allclose(array(masked["y"]), expected["masked"], rtol=1e-5)
    bars = next(tr for tr in fig["data"] if tr["type"] == "bar")
    assert (masked.get("xaxis", "x"), bars["xaxis"]) == ("x", "x2")  # left panel: the forecast; right: per step
    np.testing.assert_allclose(array(bars["y"]), rows["error_change"])
    np.testing.assert_allclose(array(bars["y"]), (expected["masked"] - expected["truth"]).abs()
                               - (expected["baseline"] - expected["truth"]).abs(), atol=1e-4)


def test_the_same_mask_on_a_second_model_at_the_window_that_starts_at_the_same_row(open_app, tiny_second,
                                                                                  with_second):
    at = open_app(MASK_PAGE)
    at.selectbox(key="second_model").set_value(with_second).run()
    at.slider(key="hm_window_test").set_value(9).run()
    checkbox(at, "cross.0:2").uncheck().run()
    assert not at.exception, at.exception
    # straight from analysis/: the second model (seq_len 36) on its own preparation, same window index on test
    checkpoint = tiny_second[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    t = masked_window_forecast(checkpoint.model, prepared, "test", 9, head_mask(checkpoint.model, [(3, 2)], "zero"),
                               seed=0).table
    want = t[t.column == "load"].reset_index(drop=True)
    paired = next(d.value for d in at.dataframe if "opposite" in d.value.columns)
    np.testing.assert_allclose(paired["masked − baseline · other"], want["masked"] - want["baseline"], rtol=1e-4,
                               atol=1e-7)
    np.testing.assert_allclose(paired["error change · other"], want["error_change"], rtol=1e-4, atol=1e-7)
    ours = table(at)
    assert list(pd.to_datetime(paired["timestamp"])) == list(pd.to_datetime(ours["timestamp"]))  # same rows
    opposite = (paired["error change · sample"] * paired["error change · other"]) < 0
    assert list(paired["opposite"]) == list(opposite)
    assert metric(at, "Steps with opposite effects") == \
        f"{int(opposite.sum())} of {len(paired)}"


def test_a_date_picks_the_window_whose_forecast_starts_then(open_app, tiny_trained):
    at = open_app(MASK_PAGE)
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    starts = prepared.test.timestamps[48:]
    assert at.datetime_input(key="hm_date_test_0").value == starts[0].to_pydatetime()
    at.datetime_input(key="hm_date_test_0").set_value(starts[700].to_pydatetime()).run()
    assert not at.exception, at.exception
    assert at.slider(key="hm_window_test").value == 700
    assert pd.Timestamp(table(at)["timestamp"].iloc[0]) == starts[700]  # the forecast starts there
    at.slider(key="hm_window_test").set_value(5).run()
    assert at.datetime_input(key="hm_date_test_5").value == starts[5].to_pydatetime()  # the field follows
