"""Plotly figures. Each takes tables shaped by `analysis` / `ui.tables` and only draws them."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

HISTORY = "#8c8c8c"
TRUTH = "#222222"
BASELINE = "#1f77b4"
MASKED = "#ff7f0e"
FORECAST = "#d62728"
WORSE = "#d62728"
BETTER = "#2ca02c"
TRAIN = "#1f77b4"
VAL = "#d62728"


def _layout(fig: go.Figure, title: str, height: int, *, legend: bool = True) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)),
        height=height, margin=dict(l=10, r=10, t=70 if legend else 45, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0) if legend else None,
        showlegend=legend, hovermode="x unified",
    )
    return fig


def series_figure(long: pd.DataFrame, columns: list[str], title: str) -> go.Figure:
    """One panel per column (their units differ), sharing the time axis. long: timestamp, column, value."""
    n = max(1, len(columns))
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.03 if n > 3 else 0.06,
                        subplot_titles=columns)
    for i, column in enumerate(columns, start=1):
        part = long[long["column"] == column]
        fig.add_trace(go.Scatter(x=part["timestamp"], y=part["value"], mode="lines", name=column,
                                   line=dict(width=1)), row=i, col=1)
    fig = _layout(fig, title, height=max(260, 150 * n + 60), legend=False)
    fig.update_annotations(font_size=12, x=0, xanchor="left")
    return fig


def loss_figure(steps: pd.DataFrame, epochs: pd.DataFrame, title: str = "Training loss (MSE, standardised)"):
    fig = go.Figure()
    if len(steps):
        fig.add_trace(go.Scatter(x=steps["global_step"], y=steps["loss"], mode="lines", name="train loss per step",
                                 line=dict(color=TRAIN, width=1), opacity=0.45))
        fig.add_trace(go.Scatter(x=steps["global_step"], y=steps["epoch_mean"], mode="lines",
                                 name="train loss, epoch mean so far", line=dict(color=TRAIN, width=2)))
    if len(epochs):
        fig.add_trace(go.Scatter(x=epochs["global_step"], y=epochs["val_loss"], mode="lines+markers",
                                 name="validation loss (end of epoch)", line=dict(color=VAL, dash="dot"),
                                 marker=dict(size=9)))
    last = int(steps["global_step"].max()) if len(steps) else 1
    fig.update_xaxes(title_text="step", tickformat="d", dtick=1 if last <= 12 else None, rangemode="tozero")
    fig.update_yaxes(title_text="MSE")
    return _layout(fig, title, 340)


def masking_figure(history: pd.DataFrame, rows: pd.DataFrame, column: str, title: str) -> go.Figure:
    """One target column of a masked window, two panels: left, the encoder history, truth, baseline and masked
    forecast (original units); right, per horizon step, |masked − truth| − |baseline − truth| (positive: the
    mask made it worse). history: timestamp, column, value (the encoder window); rows: the column's window_table.

    One figure, not two: the browser re-creates a chart whenever its figure changes (Streamlit gives a chart
    an identity derived from its spec), and each plotly chart costs a fixed ~0.1 s to create on two cores, so
    switching the column redraws one chart instead of two.
    """
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.08,
                        subplot_titles=["", "absolute error change per step (masked − baseline)"])
    hist = history[history["column"] == column]
    fig.add_trace(go.Scatter(x=hist["timestamp"], y=hist["value"], mode="lines", name="history (encoder input)",
                             line=dict(color=HISTORY, width=1.5)), row=1, col=1)
    fig.add_trace(go.Scatter(x=rows["timestamp"], y=rows["truth"], mode="lines+markers", name="truth",
                             line=dict(color=TRUTH, width=2), marker=dict(size=4)), row=1, col=1)
    fig.add_trace(go.Scatter(x=rows["timestamp"], y=rows["baseline"], mode="lines+markers",
                             name="baseline (all heads on)", line=dict(color=BASELINE, width=2), marker=dict(size=4)),
                  row=1, col=1)
    fig.add_trace(go.Scatter(x=rows["timestamp"], y=rows["masked"], mode="lines+markers", name="masked",
                             line=dict(color=MASKED, width=2, dash="dash"), marker=dict(size=4)), row=1, col=1)
    if len(rows):
        fig.add_vline(x=rows["timestamp"].iloc[0], line=dict(color="#bbbbbb", dash="dot"), row=1, col=1)
    colours = [WORSE if v > 0 else BETTER for v in rows["error_change"]]
    fig.add_trace(go.Bar(x=rows["step"], y=rows["error_change"], marker_color=colours, showlegend=False,
                         name="absolute error change", hovertemplate="step %{x}: %{y:.4g}<extra></extra>"),
                  row=1, col=2)
    fig.add_hline(y=0, line=dict(color="#888888", width=1), row=1, col=2)
    fig.update_yaxes(title_text=column, row=1, col=1)
    fig.update_xaxes(title_text="horizon step", dtick=1 if len(rows) <= 12 else None, row=1, col=2)
    fig.update_yaxes(title_text=f"Δ |error| ({column})", row=1, col=2)
    fig = _layout(fig, title, 420)
    fig.update_annotations(font_size=13)  # the panel titles
    return fig


def future_figure(history: pd.DataFrame, forecast: pd.DataFrame, time_column: str, column: str,
                  title: str) -> go.Figure:
    """Recent history of one column and its forecast. history: timestamp index, columns; forecast: forecast_future."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=history.index, y=history[column], mode="lines", name="history",
                             line=dict(color=TRUTH, width=1.5)))
    # Join the forecast to the last known point so the two lines read as one series.
    x = [history.index[-1], *forecast[time_column]]
    y = [history[column].iloc[-1], *forecast[column]]
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name="forecast", line=dict(color=FORECAST, width=2),
                             marker=dict(size=[0] + [5] * len(forecast))))
    fig.add_vline(x=history.index[-1], line=dict(color="#bbbbbb", dash="dot"))
    fig.update_yaxes(title_text=column)
    return _layout(fig, title, 400)
