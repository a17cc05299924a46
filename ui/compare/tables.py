"""Shaping for the Compare screen: model labels, metrics and per-step tables, one window's forecasts."""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from informer_lab.analysis.compare.comparison import COUNTERFACTUAL, FULL_MODEL, INFORMER, LAST_VALUE, LINEAR, SEASONAL_NAIVE
from informer_lab.analysis.intervals import interval_sign
from informer_lab.ui.tables import COMPARED

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


def metrics_view(metrics: pd.DataFrame, models: Sequence[str], descriptions: Mapping[str, str] | None = None
                 ) -> pd.DataFrame:
    """One row per model (in `models` order): on the standardised scale MSE, ΔMSE against the Informer and MAE,
    each with its 95 % interval (lo, hi); MSE and MAE in original units; windows. (The original-unit intervals
    are in `metrics` itself, downloadable whole.)"""
    std = metrics[metrics["scale"] == "standardised"].set_index("model")
    orig = metrics[metrics["scale"] == "original"].set_index("model")
    described = dict(descriptions or {})
    out = pd.DataFrame({"model": list(models),
                        "description": [described.get(m) or model_label(m) for m in models]})
    for column, label in (("mse", "MSE"), ("delta_mse", "ΔMSE vs Informer"), ("mae", "MAE")):
        out[label] = out["model"].map(std[column])
        out[f"{label} lo"] = out["model"].map(std[f"{column}_lo"])
        out[f"{label} hi"] = out["model"].map(std[f"{column}_hi"])
    out["MSE (orig.)"] = out["model"].map(orig["mse"])
    out["MAE (orig.)"] = out["model"].map(orig["mae"])
    out["windows"] = out["model"].map(std["windows"])
    return out


def verdict(row: Mapping) -> str:
    """What the paired ΔMSE interval (model − Informer, standardised) lets one say of a model."""
    sign = interval_sign(row["delta_mse_lo"], row["delta_mse_hi"], row["mse"])
    return "no interval (too few windows for an honest one)" if sign is None else f"{COMPARED[sign]} the Informer"


def overlay_wide(overlay: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """One window's forecasts as columns: timestamp, column, truth, then each model (original units)."""
    part = overlay[overlay["model"] != "history"]
    wide = part.pivot_table(index=["timestamp", "column"], columns="model", values="value", sort=False)
    ordered = [m for m in ["truth", *models] if m in wide.columns]
    return wide[ordered].reset_index().rename_axis(columns=None)
