"""Figures of the Compare screen: error per horizon step, and one window's forecasts."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import HISTORY, TRUTH, layout, recent, vline

MODEL_COLOURS = {"informer": "#d62728", "informer_full_counterfactual": "#1f77b4", "full_attention_model": "#9467bd",
                 "last_value": "#7f7f7f", "seasonal_naive": "#2ca02c", "linear": "#ff7f0e"}


def delta_figure(metrics: pd.DataFrame, models: Sequence[str], labels: dict[str, str]) -> go.Figure:
    """ΔMSE = model − Informer (standardised) of every other model, with its paired 95 % interval: right of 0 the
    Informer is better; an interval across 0 is a difference these windows cannot show."""
    rows = metrics[metrics["scale"] == "standardised"].set_index("model")
    others = [m for m in models if m in rows.index and m != models[0]]
    rows = rows.loc[others]
    known = (rows["delta_mse_lo"].notna() & rows["delta_mse_hi"].notna()).any()  # a bar without one: no whisker
    error = dict(type="data", symmetric=False, array=(rows["delta_mse_hi"] - rows["delta_mse"]).to_numpy(),
                 arrayminus=(rows["delta_mse"] - rows["delta_mse_lo"]).to_numpy(), color="#444444",
                 thickness=1.2) if known else dict(visible=False)
    bars = go.Bar(y=[labels.get(m, m) for m in others], x=rows["delta_mse"], orientation="h", error_x=error,
                  marker_color=[MODEL_COLOURS.get(m, "#7f7f7f") for m in others],
                  customdata=rows[["delta_mse_lo", "delta_mse_hi", "mse"]].to_numpy(),
                  hovertemplate="%{y}: ΔMSE %{x:+.4g}<br>95 % interval [%{customdata[0]:+.4g}, "
                                "%{customdata[1]:+.4g}]<br>MSE %{customdata[2]:.4g}<extra></extra>")
    zero = dict(type="line", xref="x", yref="paper", x0=0, x1=0, y0=0, y1=1, line=dict(color="#222222", width=1))
    return go.Figure([bars], layout("ΔMSE against the Informer (model − Informer, standardised), 95 % interval",
                                    120 + 48 * len(others), legend=False, shapes=[zero],
                                    xaxis=dict(title=dict(text="ΔMSE (right of 0: the Informer is better)")),
                                    yaxis=dict(autorange="reversed")))


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
    truth_steps = int((part["model"] == "truth").sum())
    history = recent(part[part["model"] == "history"], truth_steps)
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
