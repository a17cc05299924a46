"""The Anatomy screen's figures, each built in one `go.Figure(traces, layout(...))` call."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import HISTORY, TRUTH, layout

PART_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                "#bcbd22", "#7f7f7f")


def pyramid_figure(titles: list[str], z: np.ndarray, timestamps, method: str) -> go.Figure:
    """Layers × input steps: each encoder position's relevance over the steps it tiles; the input steps at the bottom.
    x holds the steps' timestamps (the input chart's axis; not minute-resolution text, which would merge the steps of
    second-resolution data) and the hover's lag is a number grid, not text: at seq_len 1440 a text label per cell was
    200 kB of the chart's 270 kB, sent again on every re-slice."""
    L = z.shape[1]
    lags = np.broadcast_to((L - np.arange(L)).astype(np.int16 if L < 2 ** 15 else np.int32), z.shape)
    trace = go.Heatmap(z=z.astype(np.float32), x=pd.DatetimeIndex(timestamps), y=titles, colorscale="Viridis",
                       customdata=np.ascontiguousarray(lags), name="relevance", colorbar=dict(title="share"),
                       hovertemplate="%{y}<br>lag %{customdata} · %{x}<br>relevance %{z:.4f}<extra></extra>")
    return go.Figure([trace], layout(f"Rollout through the pyramid ({method}): where the forecast's relevance sits",
                                     90 + 40 * len(titles), legend=False,
                                     xaxis=dict(title="input step (its timestamp)"),
                                     yaxis=dict(autorange="reversed")))


def input_figure(frame: pd.DataFrame, column: str) -> go.Figure:
    """The input window (target column) with the relevance of each step as bars (rollout) and a line (flow)."""
    # a filled line, not bars: thousands of steps draw at once either way, and a bar each costs the browser more
    traces = [go.Scatter(x=frame["timestamp"], y=frame["rollout"], name="rollout relevance", fill="tozeroy",
                         mode="lines", line=dict(color="#9ecae1", shape="hvh"), yaxis="y2",
                         hovertemplate="%{x}<br>rollout %{y:.4f}<extra></extra>")]
    if "flow" in frame:
        traces.append(go.Scatter(x=frame["timestamp"], y=frame["flow"], name="flow relevance", yaxis="y2",
                                 line=dict(color="#fd8d3c"), hovertemplate="%{x}<br>flow %{y:.4f}<extra></extra>"))
    traces.append(go.Scatter(x=frame["timestamp"], y=frame["value"], name=column, line=dict(color=HISTORY)))
    return go.Figure(traces, layout(f"The input window shaded by relevance ({column})", 330, hovermode="x unified",
                                    yaxis=dict(title=column),
                                    yaxis2=dict(title="relevance", overlaying="y", side="right", showgrid=False)))


def lens_figure(frame: pd.DataFrame, history: pd.DataFrame, column: str) -> go.Figure:
    """Each layer's lens forecast of one window against the truth. frame: lens, layer, timestamp, forecast, truth."""
    traces = [go.Scatter(x=history["timestamp"], y=history["value"], name="input", line=dict(color=HISTORY))]
    truth = frame.drop_duplicates("timestamp")
    traces.append(go.Scatter(x=truth["timestamp"], y=truth["truth"], name="truth", line=dict(color=TRUTH, width=2)))
    last = frame.groupby("lens")["layer"].max()
    for i, ((lens, layer), part) in enumerate(frame.groupby(["lens", "layer"], sort=False)):
        final = lens != "encoder_tuned" and layer == last[lens]
        traces.append(go.Scatter(x=part["timestamp"], y=part["forecast"],
                                 name=f"{lens} {layer}" + (" (the forecast)" if final else ""),
                                 line=dict(color=PART_COLOURS[i % len(PART_COLOURS)], dash="dot" if lens != "decoder"
                                           else "solid")))
    return go.Figure(traces, layout(f"Forecast lens: what each layer would forecast ({column})", 360,
                                    hovermode="x unified", yaxis=dict(title=column)))


def shares_figure(parts: pd.DataFrame, column: str, remainder: bool) -> go.Figure:
    """Stacked bars per horizon step: each head's direct share (and the remainder: then the forecast as a line, the
    bars summing to it)."""
    traces = []
    body = parts[(parts["part"] != "forecast") & (remainder | (parts["part"] != "remainder"))]
    names = list(dict.fromkeys(body["part"]))
    for i, name in enumerate(names):
        part = body[body["part"] == name]
        traces.append(go.Bar(x=part["step"], y=part["value"], name=name,
                             marker_color="#cccccc" if name == "remainder" else PART_COLOURS[i % len(PART_COLOURS)],
                             hovertemplate=f"{name}<br>step %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    if remainder:
        forecast = parts[parts["part"] == "forecast"]
        traces.append(go.Scatter(x=forecast["step"], y=forecast["value"], name="forecast", mode="lines+markers",
                                 line=dict(color=TRUTH)))
    title = "the heads and the remainder sum to the forecast" if remainder else "the remainder not drawn"
    return go.Figure(traces, layout(f"Each decoder head's direct share of the forecast ({column}, data units; "
                                    f"{title})", 380,
                                    legend="right", barmode="relative", xaxis=dict(title="horizon step"),
                                    yaxis=dict(title=column)))
