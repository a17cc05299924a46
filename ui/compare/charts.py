"""Figures of the Compare screen: error per horizon step, and one window's forecasts."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from ui.charts import HISTORY, TRUTH, layout, vline

MODEL_COLOURS = {"informer": "#d62728", "informer_full_counterfactual": "#1f77b4", "full_attention_model": "#9467bd",
                 "last_value": "#7f7f7f", "seasonal_naive": "#2ca02c", "linear": "#ff7f0e"}


def per_step_figure(per_step: pd.DataFrame, column: str, label: str, labels: dict[str, str]) -> go.Figure:
    traces = [go.Scatter(x=part["step"], y=part[column], mode="lines+markers", name=labels.get(model, model),
                         line=dict(color=MODEL_COLOURS.get(model), width=2), marker=dict(size=5),
                         hovertemplate=f"step %{{x}} · {label} %{{y:.4g}}<extra>{model}</extra>")
              for model, part in per_step.groupby("model", sort=False)]
    n = int(per_step["step"].max()) if len(per_step) else 1
    return go.Figure(traces, layout(f"{label} per horizon step", 400, legend="right",
                                    xaxis=dict(title=dict(text="horizon step"), dtick=1 if n <= 24 else None),
                                    yaxis=dict(title=dict(text=label))))


def overlay_figure(overlay: pd.DataFrame, column: str, models: Sequence[str], labels: dict[str, str],
                   title: str) -> go.Figure:
    """History, truth and every model's forecast of one window and column (original units)."""
    part = overlay[overlay["column"] == column]
    traces = []
    history = part[part["model"] == "history"]
    if len(history):
        traces.append(go.Scatter(x=history["timestamp"], y=history["value"], mode="lines", name="history (input)",
                                 line=dict(color=HISTORY, width=1.5)))
    truth = part[part["model"] == "truth"]
    traces.append(go.Scatter(x=truth["timestamp"], y=truth["value"], mode="lines+markers", name="truth",
                             line=dict(color=TRUTH, width=2.5), marker=dict(size=4)))
    for model in models:
        rows = part[part["model"] == model]
        traces.append(go.Scatter(x=rows["timestamp"], y=rows["value"], mode="lines", name=labels.get(model, model),
                                 line=dict(color=MODEL_COLOURS.get(model), width=1.8,
                                           dash="solid" if model.startswith("informer") else "dash")))
    return go.Figure(traces, layout(title, 440, hovermode="x unified", legend="right",
                                    shapes=[vline(truth["timestamp"].iloc[0])] if len(truth) else [],
                                    yaxis=dict(title=dict(text=column))))
