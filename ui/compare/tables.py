"""Shaping for the Compare screen: model labels, metrics and per-step tables, one window's forecasts."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from analysis.comparison import COUNTERFACTUAL, FULL_MODEL, INFORMER, LAST_VALUE, LINEAR, SEASONAL_NAIVE

MODEL_LABELS = {
    INFORMER: "Informer (as trained, ProbSparse)",
    COUNTERFACTUAL: "Informer, full-attention counterfactual (same weights)",
    FULL_MODEL: "Full-attention twin (trained separately)",
    LAST_VALUE: "Last value",
    SEASONAL_NAIVE: "Seasonal naive",
    LINEAR: "Linear (DLinear-style)",
}

SHORT_LABELS = {INFORMER: "Informer (ProbSparse)", COUNTERFACTUAL: "counterfactual (full attn.)",
                FULL_MODEL: "twin (full attn.)", LAST_VALUE: "last value", SEASONAL_NAIVE: "seasonal naive",
                LINEAR: "linear"}


def model_label(name: str) -> str:
    return MODEL_LABELS.get(name, name)


def short_label(name: str) -> str:
    """For legends."""
    return SHORT_LABELS.get(name, name)


def per_step_wide(per_step: pd.DataFrame, column: str, models: Sequence[str]) -> pd.DataFrame:
    """One row per horizon step, one column per model, of one per-step measure (e.g. "mse")."""
    wide = per_step.pivot(index="step", columns="model", values=column)
    return wide[[m for m in models if m in wide.columns]].reset_index().rename_axis(columns=None)


def metrics_view(metrics: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """One row per model (in `models` order): MSE and MAE standardised and in original units, windows."""
    wide = metrics.pivot(index="model", columns="scale", values=["mse", "mae"])
    windows = metrics.groupby("model")["windows"].first()
    out = pd.DataFrame({"model": list(models), "description": [model_label(m) for m in models]})
    for metric in ("mse", "mae"):
        for scale, label in (("standardised", "std."), ("original", "orig.")):
            out[f"{metric.upper()} ({label})"] = out["model"].map(wide[(metric, scale)])
    out["windows"] = out["model"].map(windows)
    return out


def overlay_wide(overlay: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """One window's forecasts as columns: timestamp, column, truth, then each model (original units)."""
    part = overlay[overlay["model"] != "history"]
    wide = part.pivot_table(index=["timestamp", "column"], columns="model", values="value", sort=False)
    ordered = [m for m in ["truth", *models] if m in wide.columns]
    return wide[ordered].reset_index().rename_axis(columns=None)
