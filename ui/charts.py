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


def layout(title: str, height: int, *, legend: bool | str = True, hovermode: str = "closest",
           top: int | None = None, **more) -> dict:
    """A figure's layout as one dict: title top left; legend True (one row above the plot), "right" (a column
    right of it) or False; hover on the point under the cursor unless `hovermode` says otherwise ("x unified"
    for time series); `more` adds layout keys (xaxis=..., shapes=[...]).

    The figures are built in one `go.Figure(traces, layout(...))` call: plotly validates a whole dict at once,
    which takes half the time of a chain of add_trace / update_layout / update_xaxes / add_vline calls (7–10 ms
    against 18–20 ms for each of the sparsity explorer's figures), time every re-slicing click pays on the server.
    """
    above = legend is True
    return dict(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)),
        height=height, margin=dict(l=10, r=10, t=top if top is not None else 75 if above else 45, b=10),
        legend=(dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0) if above else
                dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02) if legend == "right" else {}),
        showlegend=bool(legend), hovermode=hovermode, **more)


def vline(x, colour: str = "#bbbbbb", *, dash: str = "dot", xref: str = "x", yref: str = "y domain") -> dict:
    """A vertical line across the whole plot (a layout shape), as fig.add_vline draws it (plotly's 2 px)."""
    return dict(type="line", xref=xref, yref=yref, x0=x, x1=x, y0=0, y1=1, line=dict(color=colour, dash=dash))


def hline(y, colour: str = "#888888", *, dash: str = "solid", width: float = 1, xref: str = "x domain",
          yref: str = "y") -> dict:
    """A horizontal line across the whole plot (a layout shape), as fig.add_hline draws it."""
    return dict(type="line", xref=xref, yref=yref, x0=0, x1=1, y0=y, y1=y, line=dict(color=colour, dash=dash,
                                                                                      width=width))


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


def masking_figure(history: pd.DataFrame, rows: pd.DataFrame, column: str, title: str) -> go.Figure:
    """One target column of a masked window, two panels: left, the encoder history, truth, baseline and masked
    forecast (original units); right, per horizon step, |masked − truth| − |baseline − truth| (positive: the
    mask made it worse). history: timestamp, column, value (the encoder window); rows: the column's window_table.

    One figure, not two: the browser re-creates a chart whenever its figure changes (Streamlit gives a chart
    an identity derived from its spec), and each plotly chart costs a fixed ~0.1 s to create on two cores, so
    switching the column redraws one chart instead of two.
    """
    hist = history[history["column"] == column]
    colours = [WORSE if v > 0 else BETTER for v in rows["error_change"]]
    traces = [
        go.Scatter(x=hist["timestamp"], y=hist["value"], mode="lines", name="history (encoder input)",
                   line=dict(color=HISTORY, width=1.5)),
        go.Scatter(x=rows["timestamp"], y=rows["truth"], mode="lines+markers", name="truth",
                   line=dict(color=TRUTH, width=2), marker=dict(size=4)),
        go.Scatter(x=rows["timestamp"], y=rows["baseline"], mode="lines+markers", name="baseline (all heads on)",
                   line=dict(color=BASELINE, width=2), marker=dict(size=4)),
        go.Scatter(x=rows["timestamp"], y=rows["masked"], mode="lines+markers", name="masked",
                   line=dict(color=MASKED, width=2, dash="dash"), marker=dict(size=4)),
        go.Bar(x=rows["step"], y=rows["error_change"], marker_color=colours, showlegend=False, xaxis="x2",
               yaxis="y2", name="absolute error change", hovertemplate="step %{x}: %{y:.4g}<extra></extra>"),
    ]
    shapes = [hline(0, xref="x2 domain", yref="y2")]
    if len(rows):
        shapes.append(vline(rows["timestamp"].iloc[0]))
    # Two panels side by side: 60 % / 40 % of the width less an 8 % gap (as make_subplots' column_widths).
    return go.Figure(traces, layout(
        title, 420, hovermode="x unified", shapes=shapes,
        xaxis=dict(domain=[0, 0.552], anchor="y"), yaxis=dict(title=dict(text=column), anchor="x"),
        xaxis2=dict(domain=[0.632, 1], anchor="y2", title=dict(text="horizon step"),
                    dtick=1 if len(rows) <= 12 else None),
        yaxis2=dict(anchor="x2", title=dict(text=f"Δ |error| ({column})")),
        annotations=[dict(text="absolute error change per step (masked − baseline)", x=0.816, y=1, xref="paper",
                          yref="paper", xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=13))]))


def future_figure(history: pd.DataFrame, forecast: pd.DataFrame, time_column: str, column: str,
                  title: str) -> go.Figure:
    """Recent history of one column and its forecast. history: timestamp index, columns; forecast: forecast_future."""
    # Join the forecast to the last known point so the two lines read as one series.
    x = [history.index[-1], *forecast[time_column]]
    y = [history[column].iloc[-1], *forecast[column]]
    traces = [go.Scatter(x=history.index, y=history[column], mode="lines", name="history",
                         line=dict(color=TRUTH, width=1.5)),
              go.Scatter(x=x, y=y, mode="lines+markers", name="forecast", line=dict(color=FORECAST, width=2),
                         marker=dict(size=[0] + [5] * len(forecast)))]
    return go.Figure(traces, layout(title, 400, hovermode="x unified", shapes=[vline(history.index[-1])],
                                    yaxis=dict(title=dict(text=column))))
