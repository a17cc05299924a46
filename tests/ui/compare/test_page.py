"""Compare page: one row per model with compare_forecasts' numbers, ε shown, and the full-attention twin."""
from __future__ import annotations

import numpy as np
import pytest

from informer_lab.analysis.compare.comparison import compare_forecasts
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.ui.helpers import array, charts, metric, sidebar_text
from tests.conftest import SAMPLE_CSV

PAGE = "ui/compare/page.py"
BASE = ["informer", "informer_full_counterfactual", "last_value", "seasonal_naive", "linear"]


@pytest.fixture(scope="module")
def expected_test(tiny_trained):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    return compare_forecasts(checkpoint.model, prepared, split="test", seed=0)  # 1,741 windows: intervals exist


def _metrics(at):
    return next(d.value for d in at.dataframe if "ΔMSE vs Informer" in d.value.columns)


def _overlay(at) -> dict:
    return next(f for f in charts(at) if "every forecast" in f["layout"]["title"]["text"])


def _run(at, split="val"):
    at.radio(key="cp_split").set_value(split)
    [button] = [b for b in at.button if b.label == "Run comparison"]
    button.click().run()
    assert not at.exception, at.exception
    return at


def test_nothing_runs_until_asked(open_app):
    at = open_app(PAGE)
    assert not at.exception and not charts(at)
    assert any("Run comparison" in i.value for i in at.info)
    assert "Device:" in sidebar_text(at)  # the page stopped early (state.stop_page) and kept its sidebar


def test_what_the_tab_remembers_never_starts_a_comparison(open_app, tiny_trained, monkeypatch):
    """a window count chosen for another model persisted in the tab and launched a 6-minute job on opening
    the page. Remembered settings of another model, or of this one whose result is no longer kept, show the button;
    only its click computes."""
    import informer_lab.analysis.compare.comparison as comparison
    import informer_lab.ui.compare.cache as compare_cache
    calls = []
    real = comparison.compare_forecasts
    monkeypatch.setattr(compare_cache, "compare_forecasts", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_app(PAGE)
    at.session_state["cp_params"] = dict(model="runs/another@1", data="x", split="test", windows=512, twin=None)
    at.run()
    assert not at.exception and not calls and not charts(at)
    at.radio(key="cp_windows").set_value(512)
    at = _run(at, "test")
    assert len(calls) == 1 and charts(at)
    compare_cache._COMPARISONS.clear()  # the result is dropped (another tab's work, a restart of the cache)
    at.run()
    assert len(calls) == 1 and not charts(at)
    assert any("not kept any more" in i.value for i in at.info)
    at = _run(at, "test")
    assert len(calls) == 2 and charts(at)


def test_a_row_per_model_epsilon_and_the_window_overlay(open_app, expected_test):
    at = _run(open_app(PAGE), "test")
    table = _metrics(at)
    assert list(table["model"]) == BASE
    metrics = expected_test.metrics.set_index(["model", "scale"])
    for model, row in table.set_index("model").iterrows():
        std = metrics.loc[(model, "standardised")]
        for column, label in (("mse", "MSE"), ("delta_mse", "ΔMSE vs Informer"), ("mae", "MAE")):
            np.testing.assert_allclose(row[[label, f"{label} lo", f"{label} hi"]].to_numpy(float),
                                       std[[column, f"{column}_lo", f"{column}_hi"]].to_numpy(float))
        assert np.isnan(row["MSE lo"]) or row["MSE lo"] <= row["MSE"] <= row["MSE hi"]  # none: the page says why
        np.testing.assert_allclose(row["MAE (orig.)"], metrics.loc[(model, "original"), "mae"])
    assert table.loc[0, "ΔMSE vs Informer"] == 0  # the Informer against itself
    # ΔMSE of every other model, its error bar reaching the paired interval; the verdict read off the interval
    [delta] = [f for f in charts(at) if f["layout"]["title"]["text"].startswith("ΔMSE against the Informer")]
    others = table.iloc[1:]
    bars = delta["data"][0]
    assert others["ΔMSE vs Informer lo"].notna().any()  # the error bars below are drawn
    np.testing.assert_allclose(array(bars["x"]), others["ΔMSE vs Informer"])
    np.testing.assert_allclose(array(bars["x"]) + array(bars["error_x"]["array"]), others["ΔMSE vs Informer hi"])
    np.testing.assert_allclose(array(bars["x"]) - array(bars["error_x"]["arrayminus"]), others["ΔMSE vs Informer lo"])
    said = " ".join(m.value for m in at.markdown)
    for row in others.itertuples():
        lo, hi = row[others.columns.get_loc("ΔMSE vs Informer lo") + 1], row[others.columns.get_loc("ΔMSE vs Informer hi") + 1]
        word = "worse than" if lo > 0 else "better than" if hi < 0 else "not distinguishable from"
        assert f"{word} the Informer" in said
    assert set(table["windows"]) == {len(expected_test.truth)}
    assert metric(at, "ε (counterfactual gap)") == f"{expected_test.epsilon:.4f}"
    # per-horizon MSE: one line per model
    per_step = next(f for f in charts(at) if f["layout"]["title"]["text"].startswith("MSE (standardised)"))
    assert len(per_step["data"]) == len(BASE)
    informer = expected_test.per_step[expected_test.per_step.model == "informer"]
    np.testing.assert_allclose(array(per_step["data"][0]["y"]), informer.mse)
    # the overlay: history, truth and every model; moving the window moves it
    overlay = _overlay(at)
    assert [t["name"] for t in overlay["data"]][:2] == ["history (input)", "truth"]
    assert len(overlay["data"]) == 2 + len(BASE)
    truth = array(overlay["data"][1]["y"])
    at.slider(key="cp_window_test").set_value(30).run()
    assert not at.exception
    moved = _overlay(at)
    assert not np.allclose(array(moved["data"][1]["y"]), truth)
    wide = next(d.value for d in at.dataframe if "truth" in d.value.columns)
    assert list(wide.columns) == ["timestamp", "column", "truth", *BASE] and len(wide) == 12 * 4
    labels = [b.label for b in at.get("download_button")]
    assert "Download this window (CSV)" in labels and labels.count("Download chart (HTML)") == 3


def test_the_full_attention_twin_trains_in_the_background_and_joins_the_table(open_app):
    at = open_app(PAGE)
    at.number_input(key="cp_twin_steps").set_value(3)
    at.number_input(key="cp_twin_batch").set_value(8)
    [train] = [b for b in at.button if b.label == "Train the twin"]
    train.click().run()
    assert not at.exception
    [key] = [k for k in at.session_state.keys() if str(k).startswith("cp_twin::")]
    job = at.session_state[key]
    assert job.wait(timeout=300) and job.status == "done", job.error
    assert job.model.config.encoder_attention == "full" and job.model.config.decoder_attention == "full"
    at.run()
    assert not at.exception
    assert at.checkbox(key="cp_with_twin").value  # offered once the twin is ready
    _run(at)
    table = _metrics(at)
    assert list(table["model"]) == BASE[:2] + ["full_attention_model"] + BASE[2:]
    assert table.set_index("model").loc["full_attention_model", "description"].startswith("Full-attention twin")


def test_the_second_model_joins_the_comparison_on_the_same_windows(open_app, tiny_trained, tiny_second,
                                                                   with_second):
    """Picked on the Forecast screen, the second model is already chosen here (one choice per tab); its row
    carries the numbers of its own forecasts moved onto these windows and into this model's scale."""
    from informer_lab.analysis.compare.pairing import aligned_forecasts
    from informer_lab.analysis.learning.training import predict
    at = open_app("ui/forecast/page.py")
    at.selectbox(key="second_model").set_value(with_second).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="second_model").value == with_second
    at = _run(at, "test")
    table = _metrics(at)
    assert list(table["model"]) == BASE[:2] + ["second"] + BASE[2:]
    frame = load_csv(SAMPLE_CSV)
    first = prepare_for_checkpoint(tiny_trained[0], frame)
    second = prepare_for_checkpoint(tiny_second[0], frame)
    own, _ = predict(tiny_second[0].model, second, "test", seed=0)
    expected = compare_forecasts(tiny_trained[0].model, first, split="test", seed=0,
                                 others={"second": aligned_forecasts(own, first, second, "test")})
    want = expected.metrics.set_index(["model", "scale"]).loc[("second", "standardised")]
    row = table.set_index("model").loc["second"]
    np.testing.assert_allclose(row[["MSE", "ΔMSE vs Informer", "ΔMSE vs Informer lo", "ΔMSE vs Informer hi"]]
                               .to_numpy(float), want[["mse", "delta_mse", "delta_mse_lo", "delta_mse_hi"]]
                               .to_numpy(float), rtol=1e-6)
    assert row["description"] == "Second model: other"
    overlay = _overlay(at)
    assert "other (second model)" in [t["name"] for t in overlay["data"]]


def test_scoring_the_first_windows_only_and_the_progress_reported(open_app, tiny_trained):
    from informer_lab.analysis.learning.windows import limit_windows
    at = open_app(PAGE)
    at.radio(key="cp_windows").set_value(512)
    at = _run(at, "test")
    table = _metrics(at)
    assert set(table["windows"]) == {512}
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    seen = []
    want = compare_forecasts(checkpoint.model, limit_windows(prepared, "test", 512), split="test", seed=0,
                             progress=lambda f, text: seen.append((f, text)))
    np.testing.assert_allclose(table["MSE"], want.metrics[want.metrics.scale == "standardised"]["mse"], rtol=1e-9)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("512 windows × 2 models" in text and "1,024 of 1,024 window forecasts" in text for _, text in seen)
    assert any("linear baseline" in text for _, text in seen)
