"""Forecast comparison: baselines exact where the answer is known, ε = 0 exactly when ProbSparse keeps every
query, original-unit metrics that are the standardised ones rescaled, and per-step tables that add up."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.compare.baselines import moving_average, seasonal_naive_forecast
from informer_lab.analysis.compare.comparison import (COUNTERFACTUAL, FULL_MODEL, INFORMER, LAST_VALUE, LINEAR, SEASONAL_NAIVE,
                                 compare_forecasts, train_full_attention_twin, window_overlay)
from informer_lab.analysis.data import DataSpec, load_csv, prepare, seasonal_period
from informer_lab.analysis.learning.training import TrainSettings, config_for, evaluate
from informer_lab.model import Informer, active_count

SMALL = dict(d_model=8, n_heads=2, e_layers=(1,), d_ff=16, dropout=0.0)
SPEC = DataSpec(target="y", features="S", seq_len=48, label_len=24, pred_len=30)  # pred_len > one season


def synthetic(tmp_path, values: np.ndarray, name: str, freq: str = "h"):
    """A one-column CSV (date, y) written to tmp_path and read back by load_csv."""
    dates = pd.date_range("2024-01-01", periods=len(values), freq=freq)
    path = tmp_path / f"{name}.csv"
    pd.DataFrame({"date": dates.strftime("%Y-%m-%d %H:%M:%S"), "y": [repr(float(v)) for v in values]}).to_csv(
        path, index=False)
    return load_csv(path)


def random_model(prepared, **overrides) -> Informer:
    torch.manual_seed(0)
    return Informer(config_for(prepared, **{**SMALL, **overrides})).eval()


def errors(comparison, model: str, scale: str = "standardised") -> tuple[float, float]:
    row = comparison.metrics[(comparison.metrics.model == model) & (comparison.metrics.scale == scale)]
    assert len(row) == 1
    return float(row.mse.iloc[0]), float(row.mae.iloc[0])


@pytest.fixture(scope="module")
def short_prepared(sample_frame, tiny_spec):
    n = 1200
    frame = replace(sample_frame, timestamps=sample_frame.timestamps[:n], values=sample_frame.values.iloc[:n])
    return prepare(frame, tiny_spec)


# ---------------------------------------------------------------- baselines on known answers

def test_seasonal_naive_is_exact_on_a_pure_daily_season(tmp_path):
    pattern = np.random.default_rng(0).normal(size=24).round(4)
    frame = synthetic(tmp_path, np.tile(pattern, 40), "season")  # 960 hourly rows, period 24
    prepared = prepare(frame, SPEC)
    c = compare_forecasts(random_model(prepared), prepared)
    assert c.seasonal_period == 24
    assert errors(c, SEASONAL_NAIVE) == (0.0, 0.0) and errors(c, SEASONAL_NAIVE, "original") == (0.0, 0.0)
    assert errors(c, LAST_VALUE)[0] > 0.1  # the series is not trivial
    assert errors(c, LINEAR)[0] < 1e-6  # a season of 24 ≤ seq_len is a linear map of the window too


def test_last_value_is_exact_on_a_constant_series(tmp_path):
    frame = synthetic(tmp_path, np.full(600, 5.25), "constant")
    prepared = prepare(frame, SPEC)
    c = compare_forecasts(random_model(prepared), prepared)
    assert errors(c, LAST_VALUE) == (0.0, 0.0) and errors(c, LAST_VALUE, "original") == (0.0, 0.0)
    overlay = window_overlay(c, prepared, 0)
    assert np.all(overlay[overlay.model == "truth"].value == 5.25)


def test_linear_model_is_exact_on_a_linear_trend(tmp_path):
    frame = synthetic(tmp_path, 3.0 + 0.5 * np.arange(800), "trend")
    prepared = prepare(frame, SPEC)
    c = compare_forecasts(random_model(prepared), prepared)
    assert errors(c, LINEAR)[0] < 1e-9  # extrapolating beyond the train range, still exact
    assert errors(c, LINEAR, "original")[1] < 1e-3  # in units of y (steps of 0.5 per hour)
    assert errors(c, LAST_VALUE, "original")[1] > 5.0  # the last value lags by 0.5·h


def test_seasonal_naive_falls_back_to_the_last_value_when_the_season_is_longer_than_the_window(tmp_path):
    frame = synthetic(tmp_path, np.sin(np.arange(600) / 5.0), "short")
    prepared = prepare(frame, DataSpec(target="y", features="S", seq_len=16, label_len=8, pred_len=8))
    c = compare_forecasts(random_model(prepared), prepared)
    assert c.seasonal_period is None and any("fell back" in note for note in c.notes)
    np.testing.assert_array_equal(c.forecasts[SEASONAL_NAIVE], c.forecasts[LAST_VALUE])
    c4 = compare_forecasts(random_model(prepared), prepared, period=4)  # an explicit period that fits
    assert c4.seasonal_period == 4


def test_naive_rules_and_the_moving_average_on_small_arrays():
    history = np.arange(6, dtype=float).reshape(1, 6, 1)  # positions 0..5, the future starts at 6
    out = seasonal_naive_forecast(history, pred_len=5, period=3)[0, :, 0]
    np.testing.assert_array_equal(out, [3, 4, 5, 3, 4])  # t − 3, then t − 6 once t − 3 is in the future
    np.testing.assert_array_equal(moving_average(np.array([0.0, 0.0, 3.0]), 3), [0.0, 1.0, 2.0])  # ends repeated
    ramp = np.arange(40, dtype=float)
    np.testing.assert_allclose(moving_average(ramp, 25)[12:-12], ramp[12:-12])  # a line is its own trend
    assert [seasonal_period(f) for f in ("h", "15min", "D")] == [24, 96, 7]


# ---------------------------------------------------------------- the counterfactual gap

def test_epsilon_is_zero_when_probsparse_keeps_every_query(short_prepared):
    model = random_model(short_prepared, factor=12, e_layers=(2,))  # u = L at 48, 24 (distilled) and 36 (decoder)
    c = model.config
    assert all(active_count(c.factor, L) == L for L in (c.seq_len, c.seq_len // 2, c.dec_len))
    comparison = compare_forecasts(model, short_prepared)
    assert comparison.epsilon < 1e-5  # float round-off between the two code paths
    np.testing.assert_allclose(comparison.forecasts[INFORMER], comparison.forecasts[COUNTERFACTUAL], atol=1e-5)


def test_epsilon_is_positive_for_the_trained_model_and_metrics_match_evaluate(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    c = compare_forecasts(model, short_prepared, seed=3)
    assert c.epsilon > 1e-3
    expected = evaluate(model, short_prepared, "test", seed=3)
    mse, mae = errors(c, INFORMER)
    assert mse == pytest.approx(expected.mse, rel=1e-5) and mae == pytest.approx(expected.mae, rel=1e-5)
    mse_o, mae_o = errors(c, INFORMER, "original")
    assert mse_o == pytest.approx(expected.mse_original, rel=1e-5)
    assert set(c.models) == {INFORMER, COUNTERFACTUAL, LAST_VALUE, SEASONAL_NAIVE, LINEAR}
    # ε by its definition, from the two forecasts
    diff = c.forecasts[INFORMER] - c.forecasts[COUNTERFACTUAL]
    assert c.epsilon == pytest.approx(np.sqrt((diff ** 2).sum() / (c.forecasts[COUNTERFACTUAL] ** 2).sum()))


# ---------------------------------------------------------------- scales, steps, overlay

def test_original_units_are_the_standardised_errors_rescaled_for_one_column(sample_frame):
    frame = replace(sample_frame, timestamps=sample_frame.timestamps[:1000], values=sample_frame.values.iloc[:1000])
    prepared = prepare(frame, DataSpec(target="load", features="S", seq_len=48, label_len=24, pred_len=12))
    c = compare_forecasts(random_model(prepared), prepared)
    std = float(prepared.scaler.std[-1])
    for model in c.models:
        mse, mae = errors(c, model)
        mse_o, mae_o = errors(c, model, "original")
        assert mse_o == pytest.approx(mse * std ** 2, rel=1e-9)
        assert mae_o == pytest.approx(mae * std, rel=1e-9)


def test_per_step_rows_cover_the_horizon_and_average_to_the_totals(short_prepared):
    c = compare_forecasts(random_model(short_prepared), short_prepared)
    pred_len = short_prepared.spec.pred_len
    for model in c.models:
        rows = c.per_step[c.per_step.model == model]
        assert list(rows.step) == list(range(1, pred_len + 1))
        assert rows.mse.mean() == pytest.approx(errors(c, model)[0], rel=1e-9)
        assert rows.mae_original.mean() == pytest.approx(errors(c, model, "original")[1], rel=1e-9)
    # the last value drifts away: its error grows from the first step to the last on this hourly series
    last = c.per_step[c.per_step.model == LAST_VALUE]
    assert last.mse.iloc[0] < last.mse.iloc[-1]


def test_window_overlay_lines_up_with_the_raw_file(sample_frame, short_prepared):
    c = compare_forecasts(random_model(short_prepared), short_prepared)
    window = 5
    overlay = window_overlay(c, short_prepared, window)
    truth = overlay[(overlay.model == "truth") & (overlay.column == "load")]
    raw = sample_frame.values["load"]
    np.testing.assert_allclose(truth.value.to_numpy(), raw.loc[truth.timestamp].to_numpy(), rtol=1e-5)
    history = overlay[(overlay.model == "history") & (overlay.column == "price")]
    assert len(history) == 48 and history.timestamp.iloc[-1] < truth.timestamp.iloc[0]
    np.testing.assert_allclose(history.value.to_numpy(), sample_frame.values["price"].loc[history.timestamp], rtol=1e-5)
    assert set(overlay.model) == {"history", "truth", *c.models}
    assert (overlay.model == INFORMER).sum() == 12 * 4
    with pytest.raises(ValueError, match="outside the test split"):
        window_overlay(c, short_prepared, 10**6)


def test_full_attention_twin_is_the_same_config_with_full_self_attention(tmp_path):
    frame = synthetic(tmp_path, np.sin(np.arange(700) * 2 * np.pi / 24), "twin")
    prepared = prepare(frame, SPEC)
    model = random_model(prepared)
    twin = train_full_attention_twin(prepared, model.config, TrainSettings(epochs=1, max_steps_per_epoch=2))
    assert twin.config == model.config.replace(encoder_attention="full", decoder_attention="full")
    assert not twin.training
    c = compare_forecasts(model, prepared, full_model=twin)
    assert FULL_MODEL in c.models and len(c.metrics) == 2 * 6
    assert not any("not full/full" in note for note in c.notes)
    again = train_full_attention_twin(prepared, model.config, TrainSettings(epochs=1, max_steps_per_epoch=2))
    assert all(torch.equal(a, b) for a, b in zip(twin.state_dict().values(), again.state_dict().values()))


def test_the_window_gram_equals_the_direct_sums():
    from numpy.lib.stride_tricks import sliding_window_view
    from informer_lab.analysis.compare.baselines import window_gram
    s = np.random.default_rng(0).normal(size=300) * 5 + 2
    for width, n in ((1, 300), (7, 50), (40, 200), (64, 237)):
        gram, sums = window_gram(s, width, n)
        windows = sliding_window_view(s, width)[:n]
        np.testing.assert_allclose(gram, windows.T @ windows, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(sums, windows.sum(axis=0), rtol=1e-12)


def test_the_linear_baseline_is_the_least_squares_fit_on_the_decomposed_windows(tiny_prepared):
    """Brute force: build every window's [seasonal, trend] features, solve the same centred ridge problem."""
    from numpy.lib.stride_tricks import sliding_window_view
    from informer_lab.analysis.compare.baselines import _decompose, fit_linear_baseline
    fit = fit_linear_baseline(tiny_prepared, kernel=5, ridge=1e-4)
    L, P = tiny_prepared.spec.seq_len, tiny_prepared.spec.pred_len
    s = np.asarray(tiny_prepared.train.values, dtype=np.float64)[:, -1]
    n = len(s) - L - P + 1
    X = _decompose(sliding_window_view(s, L)[:n], 5)
    Y = sliding_window_view(s[L:], P)[:n]
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    gram = Xc.T @ Xc
    W = np.linalg.solve(gram + 1e-4 * np.trace(gram) / (2 * L) * np.eye(2 * L), Xc.T @ Yc)
    np.testing.assert_allclose(fit.seasonal_weights[-1], W[:L].T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fit.trend_weights[-1], W[L:].T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fit.bias[-1], Y.mean(0) - X.mean(0) @ W, rtol=1e-6, atol=1e-8)


def test_the_sparse_trend_operator_is_the_moving_average_of_each_unit_window():
    from informer_lab.analysis.compare.baselines import moving_average, trend_operator
    for L, kernel in ((1, 1), (5, 25), (48, 5), (97, 25), (300, 1)):
        np.testing.assert_allclose(trend_operator(L, kernel).toarray(), moving_average(np.eye(L), kernel),
                                   rtol=0, atol=1e-15)
    x = np.random.default_rng(1).normal(size=(3, 200))
    np.testing.assert_allclose(x @ trend_operator(200, 25), moving_average(x, 25), rtol=1e-12, atol=1e-12)
