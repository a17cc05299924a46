"""Is the Informer any good here? Its test forecasts next to its full-attention counterfactual and baselines.

Models compared (all on the same windows of one split, the test split by default):

- ``informer``                     the model as trained (ProbSparse key sample drawn from `seed`)
- ``informer_full_counterfactual`` the same weights with every site on full attention
                                   (`attention="full"`): what ProbSparse costs this model
- ``full_attention_model``         optional: a separately trained twin with full self-attention
                                   (`train_full_attention_twin`): what ProbSparse costs in training
- ``last_value``                   every horizon step repeats the last known value of its column
- ``seasonal_naive``               the value one season earlier, y[t − k·m] with the smallest k ≥ 1 that
                                   lands in the encoder window (m = `analysis.data.seasonal_period`)
- ``linear``                       a DLinear-style model (Zeng et al. 2023): per target column, a moving-
                                   average trend / seasonal split of the window and one linear map
                                   seq_len → pred_len on each part, fitted in closed form (ridge) on the
                                   train windows

ε, the counterfactual gap, is ‖Y_prob − Y_full‖_F / ‖Y_full‖_F over all the split's standardised forecasts
of ``informer`` and ``informer_full_counterfactual``: 0 exactly when ProbSparse selects every query (u = L).

Everything is deterministic: the key sample comes from `seed`, the baselines draw nothing.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from model import Informer, InformerConfig

from .data import PreparedData, seasonal_period
from .windows import WindowDataset
from .training import TrainProgress, TrainSettings, predict, train

log = logging.getLogger(__name__)

INFORMER = "informer"
COUNTERFACTUAL = "informer_full_counterfactual"
FULL_MODEL = "full_attention_model"
LAST_VALUE = "last_value"
SEASONAL_NAIVE = "seasonal_naive"
LINEAR = "linear"


# ---------------------------------------------------------------------------------------------
# Naive baselines: [N, seq_len, c_out] known target history → [N, pred_len, c_out]
# ---------------------------------------------------------------------------------------------

def last_value_forecast(history: np.ndarray, pred_len: int) -> np.ndarray:
    """[N, seq_len, C] → [N, pred_len, C]: the last known value, repeated."""
    return np.repeat(history[:, -1:, :], pred_len, axis=1)


def seasonal_naive_forecast(history: np.ndarray, pred_len: int, period: int) -> np.ndarray:
    """[N, seq_len, C] → [N, pred_len, C]: step h (1-based) takes the value at T + h − k·period, with
    k = ⌈h / period⌉ the fewest whole seasons that reach back into the window (T = its last position).
    Needs period ≤ seq_len."""
    seq_len = history.shape[1]
    if not 1 <= period <= seq_len:
        raise ValueError(f"seasonal period {period} must be in 1 … seq_len = {seq_len}")
    h = np.arange(1, pred_len + 1)
    k = -(-h // period)  # ⌈h / period⌉
    index = seq_len - 1 + h - k * period  # in [seq_len − period, seq_len − 1]
    return history[:, index, :]


# ---------------------------------------------------------------------------------------------
# The DLinear-style baseline
# ---------------------------------------------------------------------------------------------

def moving_average(x: np.ndarray, kernel: int) -> np.ndarray:
    """Trend of [..., L] series: a centred moving average of odd width `kernel`, the ends padded by
    repeating the first and last values (as DLinear's `moving_avg`). Same shape as x."""
    if kernel < 1 or kernel % 2 == 0:
        raise ValueError(f"moving-average kernel must be an odd number ≥ 1, got {kernel}")
    pad = (kernel - 1) // 2
    padded = np.concatenate([np.repeat(x[..., :1], pad, axis=-1), x, np.repeat(x[..., -1:], pad, axis=-1)], axis=-1)
    csum = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(padded, axis=-1)], axis=-1)
    return (csum[..., kernel:] - csum[..., :-kernel]) / kernel  # [..., L]


def _decompose(x: np.ndarray, kernel: int) -> np.ndarray:
    """[N, L] windows → [N, 2L] features: (seasonal = x − trend, trend)."""
    trend = moving_average(x, kernel)
    return np.concatenate([x - trend, trend], axis=-1)


@dataclass(frozen=True, eq=False)
class LinearBaseline:
    """Per target column j: forecast = W_s[j] · seasonal + W_t[j] · trend + bias[j], each W [pred_len, seq_len].

    seasonal_weights, trend_weights: [c_out, pred_len, seq_len]; bias: [c_out, pred_len]; standardised scale.

    Note: trend and seasonal are both linear in the window, so the fitted map is a linear map of the
    window; the split changes the fit only through the ridge penalty (and, in DLinear, through SGD).
    """

    seasonal_weights: np.ndarray
    trend_weights: np.ndarray
    bias: np.ndarray
    kernel: int
    ridge: float
    train_windows: int

    def predict(self, history: np.ndarray) -> np.ndarray:
        """[N, seq_len, c_out] target history → [N, pred_len, c_out]."""
        c_out, pred_len, seq_len = self.seasonal_weights.shape
        if history.ndim != 3 or history.shape[1:] != (seq_len, c_out):
            raise ValueError(f"history has shape {list(history.shape)}, expected [N, {seq_len}, {c_out}]")
        out = np.empty((history.shape[0], pred_len, c_out))
        for j in range(c_out):
            x = history[:, :, j].astype(np.float64)  # [N, L]
            trend = moving_average(x, self.kernel)
            out[:, :, j] = (x - trend) @ self.seasonal_weights[j].T + trend @ self.trend_weights[j].T + self.bias[j]
        return out


def fit_linear_baseline(prepared: PreparedData, *, kernel: int = 25, ridge: float = 1e-6,
                        chunk: int = 4096) -> LinearBaseline:
    """Least squares with a small ridge on the train split's windows, per target column, in float64.

    The features [seasonal, trend] and the targets are centred (the intercept is not penalised); the
    ridge is `ridge` × the mean feature variance, so it is scale-free. The [2L, 2L] normal equations are
    accumulated `chunk` windows at a time, so memory does not grow with the split. No randomness.
    """
    spec = prepared.spec
    seq_len, pred_len, c_out = spec.seq_len, spec.pred_len, prepared.c_out
    values = np.asarray(prepared.train.values, dtype=np.float64)[:, -c_out:]  # [N_rows, c_out]
    n = len(values) - seq_len - pred_len + 1
    if n < 1:
        raise ValueError(f"the train split has {len(values)} rows: no window of seq_len + pred_len = "
                         f"{seq_len + pred_len} to fit the linear baseline on")
    p = 2 * seq_len
    seasonal = np.empty((c_out, pred_len, seq_len))
    trend = np.empty((c_out, pred_len, seq_len))
    bias = np.empty((c_out, pred_len))
    for j in range(c_out):
        s = values[:, j]
        X_all = sliding_window_view(s, seq_len)[:n]  # [n, L] view
        Y_all = sliding_window_view(s[seq_len:], pred_len)[:n]  # [n, P] view

        def chunks():
            for start in range(0, n, chunk):
                yield _decompose(X_all[start:start + chunk], kernel), Y_all[start:start + chunk]

        mu_x, mu_y = np.zeros(p), np.zeros(pred_len)
        for phi, y in chunks():
            mu_x += phi.sum(axis=0)
            mu_y += y.sum(axis=0)
        mu_x, mu_y = mu_x / n, mu_y / n
        gram, cross = np.zeros((p, p)), np.zeros((p, pred_len))
        for phi, y in chunks():
            phi_c, y_c = phi - mu_x, y - mu_y
            gram += phi_c.T @ phi_c
            cross += phi_c.T @ y_c
        scale = np.trace(gram) / p
        lam = ridge * (scale if scale > 0 else 1.0)
        W = np.linalg.solve(gram + lam * np.eye(p), cross)  # [2L, P]
        seasonal[j], trend[j] = W[:seq_len].T, W[seq_len:].T
        bias[j] = mu_y - mu_x @ W
    return LinearBaseline(seasonal, trend, bias, kernel, ridge, n)


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Comparison:
    """Forecasts of several models on one split's windows and their errors.

    metrics:   one row per (model, scale): model, scale ("standardised" | "original"), mse, mae, windows
    per_step:  one row per (model, horizon step 1 … pred_len): mse, mae (standardised), mse_original, mae_original
    epsilon:   ‖Y_prob − Y_full‖_F / ‖Y_full‖_F, informer vs its full-attention counterfactual (standardised)
    forecasts: model name → [N, pred_len, c_out] standardised forecasts (read-only arrays)
    truth:     [N, pred_len, c_out] standardised truths
    seasonal_period: the period seasonal_naive used; None when it fell back to the last value
    notes:     what a reader should know (periods, fallbacks, the twin's settings)
    """

    metrics: pd.DataFrame
    per_step: pd.DataFrame
    epsilon: float
    forecasts: Mapping[str, np.ndarray]
    truth: np.ndarray
    target_columns: tuple[str, ...]
    split: str
    seasonal_period: int | None
    notes: tuple[str, ...]
    seed: int

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(self.forecasts)


def split_histories(prepared: PreparedData, split: str) -> np.ndarray:
    """[N, seq_len, c_out] the known target history of every window of a split (window i starts at row i)."""
    spec = prepared.spec
    n = len(WindowDataset(prepared, split))
    values = np.asarray(prepared.split(split).values)[:, -prepared.c_out:]  # [N_rows, c_out]
    return sliding_window_view(values, spec.seq_len, axis=0)[:n].transpose(0, 2, 1)  # [n, L, c_out]


def compare_forecasts(checkpoint_model: Informer, prepared: PreparedData, *, full_model: Informer | None = None,
                      seed: int = 0, split: str = "test", period: int | None = None, kernel: int = 25,
                      ridge: float = 1e-6, batch_size: int = 64) -> Comparison:
    """Forecast every window of `split` with each model and baseline; score them in both scales.

    period: the seasonal-naive season in steps (None: `seasonal_period(prepared.freq)`); when it exceeds
            seq_len, seasonal_naive falls back to the last value and `notes` says so.
    kernel, ridge: the linear baseline's moving-average width and relative ridge.
    """
    spec = prepared.spec
    notes: list[str] = []
    preds, truth = predict(checkpoint_model, prepared, split, batch_size=batch_size, seed=seed)
    counterfactual, _ = predict(checkpoint_model, prepared, split, batch_size=batch_size, seed=seed, attention="full")
    forecasts: dict[str, np.ndarray] = {INFORMER: preds, COUNTERFACTUAL: counterfactual}
    if full_model is not None:
        c = full_model.config
        if c.encoder_attention != "full" or c.decoder_attention != "full":
            notes.append(f"{FULL_MODEL} has {c.encoder_attention}/{c.decoder_attention} self-attention, not full/full")
        forecasts[FULL_MODEL], _ = predict(full_model, prepared, split, batch_size=batch_size, seed=seed)

    history = split_histories(prepared, split)
    if len(history) != len(truth):
        raise RuntimeError(f"{len(history)} histories for {len(truth)} windows")  # a bug, not a user error
    forecasts[LAST_VALUE] = last_value_forecast(history, spec.pred_len)
    used = period if period is not None else seasonal_period(prepared.freq)
    if used is None:
        notes.append(f"seasonal_naive: no season known for frequency {prepared.freq!r}; fell back to the last value")
        forecasts[SEASONAL_NAIVE] = forecasts[LAST_VALUE]
    elif used > spec.seq_len or used < 1:
        notes.append(f"seasonal_naive: period {used} is longer than seq_len = {spec.seq_len}; "
                     "fell back to the last value")
        forecasts[SEASONAL_NAIVE] = forecasts[LAST_VALUE]
        used = None
    else:
        notes.append(f"seasonal_naive: period {used} steps of {prepared.freq!r}")
        forecasts[SEASONAL_NAIVE] = seasonal_naive_forecast(history, spec.pred_len, used)
    linear = fit_linear_baseline(prepared, kernel=kernel, ridge=ridge)
    notes.append(f"linear: DLinear-style, kernel {kernel}, ridge {ridge:g}, closed form on {linear.train_windows} "
                 "train windows")
    forecasts[LINEAR] = linear.predict(history)

    truth = np.asarray(truth, dtype=np.float64)
    targets = tuple(prepared.target_columns)
    truth_orig = prepared.scaler.inverse_transform(truth, targets)
    metric_rows, step_rows = [], []
    for name, forecast in forecasts.items():
        forecast = np.asarray(forecast, dtype=np.float64)
        err = forecast - truth  # [N, P, C]
        err_orig = prepared.scaler.inverse_transform(forecast, targets) - truth_orig
        metric_rows.append({"model": name, "scale": "standardised", "mse": float(np.mean(err ** 2)),
                            "mae": float(np.mean(np.abs(err))), "windows": len(err)})
        metric_rows.append({"model": name, "scale": "original", "mse": float(np.mean(err_orig ** 2)),
                            "mae": float(np.mean(np.abs(err_orig))), "windows": len(err)})
        step_mse, step_mae = np.mean(err ** 2, axis=(0, 2)), np.mean(np.abs(err), axis=(0, 2))
        step_mse_o, step_mae_o = np.mean(err_orig ** 2, axis=(0, 2)), np.mean(np.abs(err_orig), axis=(0, 2))
        for h in range(spec.pred_len):
            step_rows.append({"model": name, "step": h + 1, "mse": float(step_mse[h]), "mae": float(step_mae[h]),
                              "mse_original": float(step_mse_o[h]), "mae_original": float(step_mae_o[h])})

    full = np.asarray(counterfactual, dtype=np.float64)
    norm = float(np.linalg.norm(full))
    gap = float(np.linalg.norm(np.asarray(preds, dtype=np.float64) - full))
    epsilon = gap / norm if norm > 0 else (0.0 if gap == 0 else float("inf"))

    frozen = {}
    for name, forecast in forecasts.items():
        array = np.array(forecast, dtype=np.float64)  # a copy: the caller's arrays stay theirs
        array.setflags(write=False)
        frozen[name] = array
    truth.setflags(write=False)
    log.info("compared %d models on %d %s windows; epsilon %.4g", len(frozen), len(truth), split, epsilon)
    return Comparison(metrics=pd.DataFrame(metric_rows), per_step=pd.DataFrame(step_rows), epsilon=epsilon,
                      forecasts=MappingProxyType(frozen), truth=truth, target_columns=targets, split=split,
                      seasonal_period=used, notes=tuple(notes), seed=seed)


def headline_errors(model: Informer, prepared: PreparedData, *, split: str = "test", seed: int = 0,
                    batch_size: int = 64) -> pd.DataFrame:
    """MSE and MAE (standardised) on every window of a split: the model, the last value, and the seasonal naive
    forecast when the data has a season that fits the window. One row each: model, mse, mae, windows.
    (The whole comparison, with the counterfactual and the linear baseline, is `compare_forecasts`.)"""
    preds, truth = predict(model, prepared, split, batch_size=batch_size, seed=seed)
    history = split_histories(prepared, split)
    forecasts = {INFORMER: preds, LAST_VALUE: last_value_forecast(history, prepared.spec.pred_len)}
    period = seasonal_period(prepared.freq)
    if period is not None and period <= prepared.spec.seq_len:
        forecasts[SEASONAL_NAIVE] = seasonal_naive_forecast(history, prepared.spec.pred_len, period)
    truth = np.asarray(truth, dtype=np.float64)
    return pd.DataFrame([{"model": name, "mse": float(np.mean((np.asarray(f, np.float64) - truth) ** 2)),
                          "mae": float(np.mean(np.abs(np.asarray(f, np.float64) - truth))), "windows": len(truth)}
                         for name, f in forecasts.items()])


def window_overlay(comparison: Comparison, prepared: PreparedData, window: int, *,
                   history: bool = True) -> pd.DataFrame:
    """One window, ready to plot, in original units: rows (timestamp, model, column, value).

    model is each compared model, "truth" for the true future and (with `history`) "history" for the
    encoder window of the target columns.
    """
    n = len(comparison.truth)
    if not 0 <= window < n:
        raise ValueError(f"window {window} is outside the {comparison.split} split's {n} windows")
    targets = list(comparison.target_columns)
    stamps = WindowDataset(prepared, comparison.split).window_timestamps(window)
    frames = []

    def add(name: str, times, values: np.ndarray) -> None:  # values [T, c_out] standardised
        original = prepared.scaler.inverse_transform(values, targets)
        frames.append(pd.DataFrame({"timestamp": np.repeat(np.asarray(times), len(targets)), "model": name,
                                    "column": np.tile(targets, len(times)), "value": original.reshape(-1)}))

    if history:
        seq_len = prepared.spec.seq_len
        part = prepared.split(comparison.split)
        add("history", part.timestamps[window:window + seq_len],
            np.asarray(part.values[window:window + seq_len, -len(targets):], dtype=np.float64))
    add("truth", stamps, comparison.truth[window])
    for name, forecast in comparison.forecasts.items():
        add(name, stamps, forecast[window])
    return pd.concat(frames, ignore_index=True)


def train_full_attention_twin(prepared: PreparedData, checkpoint_config: InformerConfig,
                              settings: TrainSettings = TrainSettings(), *,
                              progress: Callable[[TrainProgress], None] | None = None) -> Informer:
    """The same config with full encoder and decoder self-attention, trained by `analysis.training.train`
    with `settings` (seeded); cross-attention stays as configured. Returns the best model, in eval mode."""
    config = checkpoint_config.replace(encoder_attention="full", decoder_attention="full")
    return train(prepared, config, settings, progress=progress).model


__all__ = ["COUNTERFACTUAL", "Comparison", "FULL_MODEL", "INFORMER", "LAST_VALUE", "LINEAR", "LinearBaseline",
           "SEASONAL_NAIVE", "compare_forecasts", "fit_linear_baseline", "headline_errors", "last_value_forecast",
           "moving_average", "seasonal_naive_forecast", "split_histories", "train_full_attention_twin", "window_overlay"]
