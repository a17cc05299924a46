"""Figures of the Data & model screen: the series, and the training loss."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from informer_lab.ui.charts import TRAIN, VAL, layout


def series_figure(long: pd.DataFrame, columns: list[str], title: str) -> go.Figure:
    """One panel per column (their units differ), sharing the time axis. long: timestamp, column, value."""
    n = max(1, len(columns))
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.03 if n > 3 else 0.06,
                        subplot_titles=columns)
    for i, column in enumerate(columns, start=1):
        part = long[long["column"] == column]
        fig.add_trace(go.Scatter(x=part["timestamp"], y=part["value"], mode="lines", name=column,
                                   line=dict(width=1)), row=i, col=1)
    fig.update_layout(layout(title, max(260, 150 * n + 60), legend=False, hovermode="x unified"))
    fig.update_annotations(font_size=12, x=0, xanchor="left")
    return fig


def loss_figure(steps: pd.DataFrame, epochs: pd.DataFrame, title: str = "Training loss (MSE, standardised)"):
    traces = []
    if len(steps):
        traces += [go.Scatter(x=steps["global_step"], y=steps["loss"], mode="lines", name="train loss per step",
                              line=dict(color=TRAIN, width=1), opacity=0.45),
                   go.Scatter(x=steps["global_step"], y=steps["epoch_mean"], mode="lines",
                              name="train loss, epoch mean so far", line=dict(color=TRAIN, width=2))]
    if len(epochs):
        traces.append(go.Scatter(x=epochs["global_step"], y=epochs["val_loss"], mode="lines+markers",
                                 name="validation loss (end of epoch)", line=dict(color=VAL, dash="dot"),
                                 marker=dict(size=9)))
    last = int(steps["global_step"].max()) if len(steps) else 1
    return go.Figure(traces, layout(
        title, 340, hovermode="x unified",
        xaxis=dict(title=dict(text="step"), tickformat="d", dtick=1 if last <= 12 else None, rangemode="tozero"),
        yaxis=dict(title=dict(text="MSE"))))
