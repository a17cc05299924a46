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

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.compare.baselines import (LinearBaseline, fit_linear_baseline, last_value_forecast, seasonal_naive_forecast,
                        split_histories)
from informer_lab.analysis.data import PreparedData, seasonal_period
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.passes import Pass, run_passes
from informer_lab.analysis.learning.windows import WindowDataset
from informer_lab.analysis.learning.training import TrainProgress, TrainSettings, predict, train

log = logging.getLogger(__name__)

INFORMER = "informer"
COUNTERFACTUAL = "informer_full_counterfactual"
FULL_MODEL = "full_attention_model"
LAST_VALUE = "last_value"
SEASONAL_NAIVE = "seasonal_naive"
LINEAR = "linear"
LINEAR_BESIDE_PASSES = 2048  # seq_len up to which the linear fit runs beside the model passes (its memory is small)


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Comparison:
    """Forecasts of several models on one split's windows and their errors.

    metrics:   one row per (model, scale): model, scale ("standardised" | "original"), mse, mae with 95 % intervals
               (`_lo`, `_hi`), delta_mse against informer with its paired interval, windows (`error_table`)
    per_step:  one row per (model, horizon step 1 … pred_len): mse, mae (standardised), mse_original, mae_original
    epsilon:   ‖Y_prob − Y_full‖_F / ‖Y_full‖_F, informer vs its full-attention counterfactual (standardised)
    forecasts: model name → [N, pred_len, c_out] standardised forecasts (read-only arrays)
    truth:     [N, pred_len, c_out] standardised truths
    seasonal_period: the period seasonal_naive used; None when it fell back to the last value
    notes:     what a reader should know (periods, fallbacks, the twin's settings)
    linear:    the fitted linear baseline (it depends on the train split only: pass it to the next comparison)
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
    linear: LinearBaseline | None = None

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(self.forecasts)


def compare_forecasts(checkpoint_model: Informer, prepared: PreparedData, *, full_model: Informer | None = None,
                      seed: int = 0, split: str = "test", period: int | None = None, kernel: int = 25,
                      ridge: float = 1e-6, batch_size: int = 64,
                      others: Mapping[str, np.ndarray] | None = None,
                      progress: Callable[[float, str], None] | None = None, workers: int = 1,
                      linear: LinearBaseline | None = None) -> Comparison:
    """Forecast every window of `split` with each model and baseline; score them in both scales.

    progress(fraction, what): called as the forecasts of the split are made (the model passes dominate the time).
    To score fewer windows, pass `analysis.learning.windows.limit_windows(prepared, split, n)`.
    workers: threads the model passes (and the linear fit) share (`analysis.learning.passes`); the forecasts are the same
    for any number: the key-sampled pass runs its batches in order, the full-attention passes' batches are pure.

    others: more forecasts to score beside them, name → [N, pred_len, c_out] on this split's windows in this
            model's standardised scale (a second checkpoint's: `analysis.compare.pairing.aligned_forecasts`).

    period: the seasonal-naive season in steps (None: `seasonal_period(prepared.freq)`); when it exceeds
            seq_len, seasonal_naive falls back to the last value and `notes` says so.
    kernel, ridge: the linear baseline's moving-average width and relative ridge; `linear`: that baseline already
            fitted on this data's train split with them (it does not depend on the windows scored or the seed).
    """
    spec = prepared.spec
    notes: list[str] = []
    passes = [Pass(INFORMER, checkpoint_model), Pass(COUNTERFACTUAL, checkpoint_model, "full")]
    if full_model is not None:
        c = full_model.config
        if c.encoder_attention != "full" or c.decoder_attention != "full":
            notes.append(f"{FULL_MODEL} has {c.encoder_attention}/{c.decoder_attention} self-attention, not full/full")
        passes.append(Pass(FULL_MODEL, full_model))
    if linear is not None and (linear.kernel, linear.ridge) != (kernel, ridge):
        raise ValueError(f"the linear baseline given was fitted with kernel {linear.kernel}, ridge {linear.ridge:g}, "
                         f"not {kernel}, {ridge:g}")
    n = len(WindowDataset(prepared, split))
    # The fit's L × L matrices (three of them at its peak: +0.84 GB at seq_len 5760) beside the passes' batches could
    # double a long comparison's memory: past LINEAR_BESIDE_PASSES it runs first, alone.
    beside = workers > 1 and spec.seq_len <= LINEAR_BESIDE_PASSES
    if linear is None and not beside:
        if progress is not None:
            progress(0.0, "fitting the linear baseline on the train windows")
        linear = fit_linear_baseline(prepared, kernel=kernel, ridge=ridge)
    extra = {} if linear is not None else {LINEAR: lambda: fit_linear_baseline(prepared, kernel=kernel, ridge=ridge)}
    what = f"{n:,} windows × {len(passes)} models" + (" and the linear baseline's fit" if extra else "")

    def windows_done(done: int, total: int) -> None:
        if progress is not None:
            progress(done / max(1, total), f"forecasting {what}: {done:,} of {total:,} window forecasts")
    made, truth, fitted = run_passes(passes, prepared, split, seed=seed, batch_size=batch_size, workers=workers,
                                     extra=extra, progress=windows_done)
    preds, counterfactual = made[INFORMER], made[COUNTERFACTUAL]
    forecasts: dict[str, np.ndarray] = dict(made)
    forecasts.update(_checked_others(others, preds.shape))
    linear = fitted.get(LINEAR, linear)

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
    notes.append(f"linear: DLinear-style, kernel {kernel}, ridge {ridge:g}, closed form on {linear.train_windows} "
                 "train windows")
    forecasts[LINEAR] = linear.predict(history)

    truth = np.asarray(truth, dtype=np.float64)
    targets = tuple(prepared.target_columns)
    metrics = error_table(forecasts, truth, prepared, seed=seed, split=split)
    truth_orig = prepared.scaler.inverse_transform(truth, targets)
    step_rows = []
    for name, forecast in forecasts.items():
        forecast = np.asarray(forecast, dtype=np.float64)
        err = forecast - truth  # [N, P, C]
        err_orig = prepared.scaler.inverse_transform(forecast, targets) - truth_orig
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
    return Comparison(metrics=metrics, per_step=pd.DataFrame(step_rows), epsilon=epsilon,
                      forecasts=MappingProxyType(frozen), truth=truth, target_columns=targets, split=split,
                      seasonal_period=used, notes=tuple(notes), seed=seed, linear=linear)


def error_table(forecasts: Mapping[str, np.ndarray], truth: np.ndarray, prepared: PreparedData, *,
                seed: int = 0, split: str = "test") -> pd.DataFrame:
    """One row per (model, scale): model, scale ("standardised" | "original"), mse, mse_lo, mse_hi, mae, mae_lo,
    mae_hi, delta_mse (model − informer) with delta_mse_lo / delta_mse_hi, windows, interval and delta_interval (why the MSE, the ΔMSE, has none).

    forecasts: name → [N, pred_len, c_out] standardised, the first the reference for delta_mse; truth likewise.
    Intervals: 95 % over windows (analysis.intervals), each difference computed window by window (paired); NaN
    where too few windows give an honest one. `seed` is unused (nothing is resampled).
    """
    targets = tuple(prepared.target_columns)
    truth = np.asarray(truth, dtype=np.float64)
    names = list(forecasts)
    span = data_span(prepared, split)
    rows = []
    for scale in ("standardised", "original"):
        def err(f):
            f = np.asarray(f, dtype=np.float64)
            return f - truth if scale == "standardised" else \
                prepared.scaler.inverse_transform(f, targets) - prepared.scaler.inverse_transform(truth, targets)
        errors = [err(forecasts[n]) for n in names]
        sq = np.stack([(e ** 2).mean(axis=(1, 2)) for e in errors], axis=1)  # [N, models]
        ab = np.stack([np.abs(e).mean(axis=(1, 2)) for e in errors], axis=1)
        values = np.concatenate([sq, ab, sq - sq[:, :1]], axis=1)
        k = len(names)
        floor = np.r_[np.zeros(2 * k), np.full(k, np.nan)]  # MSE and MAE are never negative: cut there, and said
        means = window_means(values, span=span, floor=floor)
        est, lo, hi = means.estimate, means.lo, means.hi
        why = ["; ".join(r for r in pair if r) for pair in zip(means.reasons(), means.notes())]
        for i, name in enumerate(names):
            rows.append({"model": name, "scale": scale, "mse": est[i], "mse_lo": lo[i], "mse_hi": hi[i],
                         "mae": est[k + i], "mae_lo": lo[k + i], "mae_hi": hi[k + i], "delta_mse": est[2 * k + i],
                         "delta_mse_lo": lo[2 * k + i], "delta_mse_hi": hi[2 * k + i], "windows": len(truth),
                         "interval": why[i], "delta_interval": why[2 * k + i]})
    return pd.DataFrame(rows)


def _checked_others(others: Mapping[str, np.ndarray] | None, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """`others` as a dict, each forecast checked to have the model's own forecasts' shape (same windows)."""
    out = dict(others or {})
    for name, forecast in out.items():
        if np.shape(forecast) != tuple(shape):
            raise ValueError(f"forecasts {name!r} have shape {list(np.shape(forecast))}, expected {list(shape)}")
    return out


def headline_errors(model: Informer, prepared: PreparedData, *, split: str = "test", seed: int = 0,
                    batch_size: int = 64, others: Mapping[str, np.ndarray] | None = None,
                    progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """The model, the last value, and the seasonal naive forecast (when the data has a season that fits the
    window) on every window of a split: `error_table`'s standardised rows. (The whole comparison, with the
    counterfactual and the linear baseline, is `compare_forecasts`.) progress(done, total): windows forecast."""
    preds, truth = predict(model, prepared, split, batch_size=batch_size, seed=seed, progress=progress)
    history = split_histories(prepared, split)
    forecasts = {INFORMER: preds, **_checked_others(others, preds.shape),
                 LAST_VALUE: last_value_forecast(history, prepared.spec.pred_len)}
    period = seasonal_period(prepared.freq)
    if period is not None and period <= prepared.spec.seq_len:
        forecasts[SEASONAL_NAIVE] = seasonal_naive_forecast(history, prepared.spec.pred_len, period)
    table = error_table(forecasts, truth, prepared, seed=seed, split=split)
    return table[table["scale"] == "standardised"].drop(columns="scale").reset_index(drop=True)


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

    def add(name: str, times, values: np.ndarray, read: bool = False) -> None:  # [T, c_out] standardised, or as read
        original = values if read else prepared.scaler.inverse_transform(values, targets)
        frames.append(pd.DataFrame({"timestamp": np.repeat(np.asarray(times), len(targets)), "model": name,
                                    "column": np.tile(targets, len(times)), "value": original.reshape(-1)}))

    seq_len, part = prepared.spec.seq_len, prepared.split(comparison.split)
    if history:
        add("history", part.timestamps[window:window + seq_len],
            part.original[window:window + seq_len, -len(targets):], read=True)
    pred_len = prepared.spec.pred_len
    add("truth", stamps, part.original[window + seq_len:window + seq_len + pred_len, -len(targets):], read=True)
    for name, forecast in comparison.forecasts.items():
        add(name, stamps, forecast[window])
    return pd.concat(frames, ignore_index=True)


def train_full_attention_twin(prepared: PreparedData, checkpoint_config: InformerConfig,
                              settings: TrainSettings = TrainSettings(), *,
                              progress: Callable[[TrainProgress], None] | None = None) -> Informer:
    """The same config with full encoder and decoder self-attention, trained by `analysis.learning.training.train`
    with `settings` (seeded); cross-attention stays as configured. Returns the best model, in eval mode."""
    config = checkpoint_config.replace(encoder_attention="full", decoder_attention="full")
    return train(prepared, config, settings, progress=progress).model


__all__ = ["COUNTERFACTUAL", "Comparison", "FULL_MODEL", "INFORMER", "LAST_VALUE", "LINEAR", "SEASONAL_NAIVE",
           "compare_forecasts", "error_table", "headline_errors", "train_full_attention_twin", "window_overlay"]
