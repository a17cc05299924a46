"""Has the model learned anything? Its test MSE beside seasonal naive and the linear baseline, with paired intervals.

What a head, a query or an input cell does says little about a model that forecasts worse than repeating last
season (DLinear, 2023, finds simple baselines often win). Every analysis states this check first.

Cheap at any length: at most `max_windows` windows of the split, and at most ROWS input rows in all (a seq_len-1440
model scores 69 windows), spread evenly over the split (every stride-th window). Intervals: 95 % over the windows
scored (analysis.intervals), each model − baseline difference taken window by window (paired, the same windows and
key samples for all three), with ⌈(seq_len + pred_len) / stride⌉ scored windows counted as dependent; once the
stride reaches seq_len + pred_len the windows share no row. An MSE's interval is cut at 0 (an MSE is never negative)
and the summary says so. A verdict needs the windows its interval needs: a difference with no interval (too few
windows) gives no verdict against that baseline, and the summary and the warning say why, once per figure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, key_generator

from informer_lab.analysis.compare.baselines import LinearBaseline, fit_linear_baseline, last_value_forecast, seasonal_naive_forecast, split_histories
from informer_lab.analysis.data import PreparedData, range_departure, seasonal_period
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.windows import WindowDataset, collate
from informer_lab.analysis.errors import count

MODEL = "model"
BASELINES = {"seasonal_naive": "seasonal naive", "linear": "the linear baseline"}
ROWS = 100_000  # windows × seq_len scored at most
MAX_WINDOWS = 512
MIN_WINDOWS = 32


def chosen_windows(total: int, seq_len: int, max_windows: int | None = None) -> np.ndarray:
    """Window indices spread evenly over `total` windows: at most max_windows (default MAX_WINDOWS) and ROWS input
    rows, never fewer than MIN_WINDOWS (or all there are)."""
    cap = MAX_WINDOWS if max_windows is None else max_windows
    budget = max(1, min(cap, max(MIN_WINDOWS, ROWS // max(1, seq_len))))
    stride = max(1, math.ceil(total / budget))
    return np.arange(0, total, stride)


@dataclass(frozen=True, eq=False)
class BaselineCheck:
    """table: one row per forecaster (model, seasonal_naive, linear): name, label, mse, mse_lo, mse_hi, delta_mse
    (model − it), delta_mse_lo, delta_mse_hi (the paired interval). worse: baselines the model is worse than with
    the interval (delta_mse_lo > 0); not_better: those it does not beat (delta_mse_hi ≥ 0, or the point estimate
    without an interval)."""

    table: pd.DataFrame
    windows: int
    total_windows: int
    stride: int
    span: int
    split: str
    seed: int
    worse: tuple[str, ...]
    not_better: tuple[str, ...]
    notes: tuple[str, ...]
    suggestion: str | None = None  # what might help when the model loses (a trending series without RevIN)
    undecided: tuple[str, ...] = ()  # baselines whose difference has no interval: no verdict against them
    undecided_reason: str = ""

    def _delta(self, name: str) -> str:
        row = self.table.set_index("name").loc[name]
        interval = "" if np.isnan(row.delta_mse_lo) else f" [{row.delta_mse_lo:+.3g}, {row.delta_mse_hi:+.3g}]"
        share = f", {row.delta_mse / row.mse:+.0%} of its MSE" if row.mse > 0 else ""
        return f"ΔMSE {row.delta_mse:+.3g}{interval}{share}"

    def warning(self) -> str | None:
        """A plain sentence when the model is not better than a baseline, or cannot be told to be, else None."""
        if not self.not_better and not self.undecided:
            return None
        parts = []
        table = self.table.set_index("name")
        even = [n for n in self.not_better if n not in self.worse]
        for word, names in (("worse than", self.worse),
                            ("no better than", [n for n in even if table.loc[n, "delta_mse"] >= 0]),
                            ("not shown to beat", [n for n in even if table.loc[n, "delta_mse"] < 0])):
            if names:
                parts.append(f"{word} " + " and ".join(f"{BASELINES[n]} ({self._delta(n)})" for n in names))
        if self.undecided:
            parts.append("not measured against " + " and ".join(BASELINES[n] for n in self.undecided)
                         + f" ({self.undecided_reason.removeprefix('no interval: ')}; a verdict needs an interval)")
        return (f"This model is {'; '.join(parts)} on {self.describe_windows()}: what its heads, queries and inputs "
                "do may explain little." + (f" {self.suggestion}" if self.suggestion else ""))

    def describe_windows(self) -> str:
        every = f", one in {self.stride}" if self.stride > 1 else ""
        return f"{self.windows:,} of {count(self.total_windows, self.split + ' window')}{every}"

    def summary(self) -> str:
        """One line: the three MSEs with their intervals (each one's own: an interval, or "no interval"), and what
        was scored; a cut at 0 and a missing verdict are said."""
        def fmt(row):
            interval = " (no interval)" if np.isnan(row.mse_lo) else f" [{row.mse_lo:.3g}, {row.mse_hi:.3g}]"
            return f"{row.label} {row.mse:.3g}{interval}"
        rows = list(self.table.itertuples())
        shown = [r for r in rows if not np.isnan(r.mse_lo)]
        tail = "95 % intervals over windows" if shown else "no interval (too few windows)"
        if any(r.mse_lo == 0 < r.mse for r in shown):
            tail += ", cut at 0 (an MSE is never negative)"
        if self.undecided:
            names = " and ".join(BASELINES[n] for n in self.undecided)
            tail += f"; no verdict against {names}: the difference has no interval"
        return f"Test MSE (standardised): {'; '.join(fmt(r) for r in rows)} — {self.describe_windows()}, {tail}"

    @property
    def has_intervals(self) -> bool:
        return not self.undecided

    def record(self) -> dict:
        """What a checkpoint keeps of the check (metrics.json's `baselines`): strict JSON, a missing interval as
        null. mse: each forecaster's MSE; delta_mse: model − each baseline [point, low, high]."""
        def number(value) -> float | None:
            return float(value) if np.isfinite(value) else None

        rows = self.table.set_index("name")
        return {"split": self.split, "windows": self.windows, "total_windows": self.total_windows,
                "stride": self.stride, "seed": self.seed, "intervals": self.has_intervals,
                "mse": {name: number(rows.loc[name, "mse"]) for name in rows.index},
                "delta_mse": {name: [number(rows.loc[name, c]) for c in ("delta_mse", "delta_mse_lo", "delta_mse_hi")]
                              for name in BASELINES},
                "worse": list(self.worse), "not_better": list(self.not_better), "undecided": list(self.undecided),
                "warning": self.warning()}

    def as_dict(self) -> dict:
        return {"table": self.table.to_dict(orient="records"), "windows": self.windows,
                "total_windows": self.total_windows, "stride": self.stride, "span": self.span, "split": self.split,
                "seed": self.seed, "worse": list(self.worse), "not_better": list(self.not_better),
                "warning": self.warning(), "notes": list(self.notes), "suggestion": self.suggestion,
                "undecided": list(self.undecided)}


@torch.no_grad()
def forecast_windows(model: Informer, prepared: PreparedData, split: str, windows: np.ndarray, *, seed: int = 0,
                     batch_size: int = 64, progress: Callable[[int, int], None] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Standardised forecasts and truths [n, pred_len, c_out] of the given windows (key sample from `seed`, drawn
    batch after batch as `analysis.learning.training.predict` draws it)."""
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    device = next(model.parameters()).device
    generator = key_generator(seed)
    dataset = WindowDataset(prepared, split)
    preds, trues = [], []
    for start in range(0, len(windows), batch_size):
        batch, y = collate([dataset[int(w)] for w in windows[start:start + batch_size]])
        preds.append(model(batch.to(device), generator=generator).float().cpu().numpy())
        trues.append(y.numpy())
        if progress is not None:
            progress(min(len(windows), start + batch_size), len(windows))
    return np.concatenate(preds), np.concatenate(trues)


def baseline_forecasts(prepared: PreparedData, split: str, windows: np.ndarray,
                       linear: LinearBaseline | None = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """Seasonal naive (the last value when no season of the data fits the window) and the linear baseline on the
    given windows, standardised; and notes on what was used."""
    spec = prepared.spec
    history = split_histories(prepared, split)[windows]
    period = seasonal_period(prepared.freq)
    notes = []
    if period is not None and period <= spec.seq_len:
        naive = seasonal_naive_forecast(history, spec.pred_len, period)
        notes.append(f"seasonal naive: period {period} steps")
    else:
        naive = last_value_forecast(history, spec.pred_len)
        notes.append("seasonal naive: no season of the data fits the window, so the last value")
    linear = linear if linear is not None else fit_linear_baseline(prepared)
    return {"seasonal_naive": naive, "linear": linear.predict(history)}, notes


def check_against_baselines(model: Informer, prepared: PreparedData, *, split: str = "test", seed: int = 0,
                            max_windows: int | None = None, batch_size: int = 64,
                            linear: LinearBaseline | None = None,
                            progress: Callable[[int, int], None] | None = None) -> BaselineCheck:
    """The model against seasonal naive and the linear baseline on evenly spread windows of `split`."""
    spec = prepared.spec
    total = len(WindowDataset(prepared, split))
    if total < 1:
        raise ValueError(f"the {split} split has no complete window")
    windows = chosen_windows(total, spec.seq_len, max_windows)
    stride = int(windows[1] - windows[0]) if len(windows) > 1 else 1
    preds, truth = forecast_windows(model, prepared, split, windows, seed=seed, batch_size=batch_size,
                                    progress=progress)
    others, notes = baseline_forecasts(prepared, split, windows, linear)
    forecasts = {MODEL: preds, **others}
    sq = np.stack([((f - truth) ** 2).mean(axis=(1, 2)) for f in forecasts.values()], axis=1)  # [n, 3]
    values = np.concatenate([sq, sq[:, :1] - sq], axis=1)  # MSEs, then model − each
    span = data_span(prepared, split, stride)
    k = len(forecasts)
    means = window_means(values, span=span, floor=np.r_[np.zeros(k), np.full(k, np.nan)])
    est, lo, hi = means.estimate, means.lo, means.hi
    labels = {MODEL: "model", **{n: BASELINES[n] for n in others}}
    rows = [{"name": n, "label": labels[n], "mse": est[i], "mse_lo": lo[i], "mse_hi": hi[i],
             "delta_mse": est[k + i], "delta_mse_lo": lo[k + i], "delta_mse_hi": hi[k + i]}
            for i, n in enumerate(forecasts)]
    table = pd.DataFrame(rows)
    worse, not_better, undecided = [], [], []
    for r in rows[1:]:
        if np.isnan(r["delta_mse_lo"]):  # a verdict needs the windows its interval needs
            undecided.append(r["name"])
            continue
        if r["delta_mse_lo"] > 0:
            worse.append(r["name"])
        if r["delta_mse_hi"] >= 0:
            not_better.append(r["name"])
    reason = next((r for r in means.reasons()[k:] if r), "")
    if reason:
        notes.append(f"{reason}: no verdict against the baselines without one")
    naive_delta = next(r["delta_mse"] for r in rows if r["name"] == "seasonal_naive")
    losing = "seasonal_naive" in not_better or ("seasonal_naive" in undecided and naive_delta > 0)
    suggestion = trend_suggestion(model, prepared, split) if losing else None  # advice, not a verdict
    return BaselineCheck(table, len(windows), total, stride, span, split, seed, tuple(worse), tuple(not_better),
                         tuple(notes), suggestion, tuple(undecided), reason)


def trend_suggestion(model: Informer, prepared: PreparedData, split: str) -> str | None:
    """For a model that loses to seasonal naive: reversible instance normalisation, when `split` leaves the train
    range and the model reads the windows at the train split's scale (neither RevIN nor the lags embedding's own
    standardisation of each window); else None."""
    departure = range_departure(prepared, split)
    own_scale = getattr(model.config, "revin", False) or getattr(model.config, "instance_scaling", "none") != "none"
    if not departure.left or own_scale:
        return None
    return (f"{departure.describe()[0].upper()}{departure.describe()[1:]}; the train split's scaler maps it outside "
            "every value the model saw. Reversible instance normalisation reads each window at its own level: "
            "train with --revin (in the app: RevIN in the Train form).")


__all__ = ["BASELINES", "BaselineCheck", "MAX_WINDOWS", "ROWS", "baseline_forecasts", "check_against_baselines",
           "chosen_windows", "forecast_windows"]
