"""Forecast page: pred_len steps after the last row, the table as forecast_future returns it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.forecasting import forecast_future
from tests.ui.helpers import FORECAST_PAGE, array, charts, table
from tests.conftest import SAMPLE_CSV


def test_forecast_table_chart_and_download(open_app, tiny_trained):
    at = open_app(FORECAST_PAGE)
    forecast = table(at)
    assert list(forecast.columns) == ["date", "temperature", "humidity", "price", "load"]
    assert len(forecast) == 12
    dates = pd.to_datetime(forecast["date"])
    assert dates.iloc[0] == pd.Timestamp("2024-12-31 00:00:00") and (dates.diff().dropna() == pd.Timedelta("1h")).all()
    expected = forecast_future(tiny_trained[0], load_csv(SAMPLE_CSV), seed=0)
    np.testing.assert_allclose(forecast[["temperature", "humidity", "price", "load"]],
                               expected[["temperature", "humidity", "price", "load"]], rtol=1e-5)
    figure = charts(at)[0]
    np.testing.assert_allclose(array(figure["data"][1]["y"])[1:], forecast["load"])
    assert len(array(figure["data"][0]["y"])) == 48  # the model's encoder window by default
    labels = [b.label for b in at.get("download_button")]
    assert "Download forecast (CSV)" in labels and "Download chart (HTML)" in labels


def test_plotted_column_and_history_length(open_app):
    at = open_app(FORECAST_PAGE)
    at.selectbox(key="fc_column").set_value("price").run()
    at.slider(key="fc_history").set_value(100).run()
    assert not at.exception
    figure = charts(at)[0]
    assert len(array(figure["data"][0]["y"])) == 100
    np.testing.assert_allclose(array(figure["data"][1]["y"])[1:], table(at)["price"])


def test_better_than_naive_says_what_the_paired_interval_allows(open_app, tiny_trained):
    from informer_lab.analysis.compare.comparison import headline_errors
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
    at = open_app(FORECAST_PAGE)
    checkpoint = tiny_trained[0]
    errors = headline_errors(checkpoint.model, prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV)), seed=0)
    naive = errors[errors["model"] != "informer"]
    best = naive.loc[naive["mse"].idxmin()]
    caption = next(c.value for c in at.caption if "best naive forecast" in c.value)
    if np.isnan(best["delta_mse_lo"]):  # no honest interval: the point estimate, said to be one, and why
        word = "beats" if best["delta_mse"] > 0 else "does not beat"
        assert "by the point estimate alone (no interval:" in caption
        assert f"ΔMSE (model − naive) {-best['delta_mse']:+.4f}" in caption  # the sign the metrics above use
    else:
        assert best["delta_mse_lo"] <= best["delta_mse"] <= best["delta_mse_hi"]
        word = "beats" if best["delta_mse_lo"] > 0 else "is beaten by" if best["delta_mse_hi"] < 0 else \
            "cannot be told apart from"
        assert f"[{-best['delta_mse_hi']:+.4f}, {-best['delta_mse_lo']:+.4f}]" in caption  # model − naive
    assert f"the model {word} the best naive" in caption
    ours = errors[errors["model"] == "informer"].iloc[0]
    if np.isnan(ours["mse_lo"]):
        assert ours["interval"] in at.metric[0].help
    else:
        assert f"95 % interval [{ours['mse_lo']:.4f}, {ours['mse_hi']:.4f}]" in at.metric[0].help


def test_a_second_model_side_by_side_same_rows_and_paired_test_errors(open_app, tiny_trained, tiny_second,
                                                                      with_second):
    from informer_lab.analysis.compare.comparison import headline_errors
    from informer_lab.analysis.compare.pairing import aligned_forecasts
    from informer_lab.analysis.learning.training import predict
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
    at = open_app(FORECAST_PAGE)
    at.selectbox(key="second_model").set_value(with_second).run()
    assert not at.exception, at.exception
    frame = load_csv(SAMPLE_CSV)
    ours, theirs = forecast_future(tiny_trained[0], frame, seed=0), forecast_future(tiny_second[0], frame, seed=0)
    lines = charts(at)[0]["data"]
    assert lines[2]["name"] == "other (second model)"
    np.testing.assert_allclose(array(lines[2]["y"])[1:], theirs["load"], rtol=1e-5)
    paired = next(d.value for d in at.dataframe if "load · other − sample" in d.value.columns)
    np.testing.assert_allclose(paired["load · other − sample"], theirs["load"] - ours["load"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(paired["load · sample"], ours["load"], rtol=1e-5)

    first = prepare_for_checkpoint(tiny_trained[0], frame)
    second = prepare_for_checkpoint(tiny_second[0], frame)
    own, _ = predict(tiny_second[0].model, second, "test", seed=0)
    errors = headline_errors(tiny_trained[0].model, first, seed=0,
                             others={"second": aligned_forecasts(own, first, second, "test")})
    row = errors[errors["model"] == "second"].iloc[0]
    word = "worse than" if row["delta_mse_lo"] > 0 else "better than" if row["delta_mse_hi"] < 0 else \
        "not distinguishable from"
    said = next(m.value for m in at.markdown if "other against sample" in m.value)
    assert f"{word} sample: ΔMSE (second − first) {row['delta_mse']:+.4f}" in said
    assert any(m.label.startswith("Test MSE · other") and m.value == f"{row['mse']:.4f}" for m in at.metric)


def test_a_long_test_split_is_scored_only_on_its_button(open_app, tiny_trained, monkeypatch):
    """Past AUTO_INPUT_ROWS (a seq_len-1440 model's ~11,000 test windows) opening the page forecasts nothing; the
    button scores the first 512 windows, the same numbers headline_errors gives on them."""
    import informer_lab.analysis.compare.comparison as comparison
    from informer_lab.analysis.compare.comparison import headline_errors
    from informer_lab.analysis.learning.windows import limit_windows
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
    import informer_lab.ui.forecast.tables as forecast_tables
    monkeypatch.setattr(forecast_tables, "AUTO_INPUT_ROWS", 0)
    calls = []
    real = comparison.predict
    monkeypatch.setattr(comparison, "predict", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_app(FORECAST_PAGE)
    assert not at.exception and not calls and not at.metric
    assert any("Score on the test split" in i.value for i in at.info)
    at.radio(key="fc_windows").set_value(512).run()
    assert not calls and not at.metric  # choosing how many is not asking for them
    at.button(key="fc_score").click().run()
    assert not at.exception, at.exception
    checkpoint = tiny_trained[0]
    prepared = limit_windows(prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV)), "test", 512)
    errors = headline_errors(checkpoint.model, prepared, seed=0)
    ours = errors[errors["model"] == "informer"].iloc[0]
    assert at.metric[0].value == f"{ours['mse']:.4f}" and "512 test windows" in at.metric[0].help
    assert any("first 512 windows" in c.value for c in at.caption)
    at.run()  # a rerun shows the kept result without forecasting again
    assert len(calls) == 2 and at.metric[0].value == f"{ours['mse']:.4f}"  # ours in the page, ours here


def test_the_forecast_page_opens_with_the_model_against_the_baselines(open_app):
    """As every analysis page: the check against seasonal naive and the linear baseline above the forecast, naming
    its window set (not grey text at the bottom)."""
    from tests.ui.helpers import run_until

    at = open_app(FORECAST_PAGE)

    def checked(a) -> bool:
        return any("Test MSE (standardised): model" in c.value for c in a.caption) or \
            any("seasonal naive" in w.value for w in a.warning)

    run_until(at, checked)
    shown = [c.value for c in at.caption if "Test MSE (standardised): model" in c.value]
    assert shown and "test windows" in shown[0] and "seasonal naive" in shown[0]
