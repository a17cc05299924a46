"""The Features screen's figures, each built in one `go.Figure(traces, layout(...))` call."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import HISTORY, layout

FEATURE = "#d62728"
DIRECT = "#1f77b4"


def histogram_figure(hist: pd.DataFrame, feature: int) -> go.Figure:
    centres = (hist["low"] + hist["high"]) / 2
    trace = go.Bar(x=centres, y=hist["count"], width=hist["high"] - hist["low"], marker_color=FEATURE,
                   hovertemplate="z %{x:.3f}<br>%{y} positions<extra></extra>", name="positions")
    return go.Figure([trace], layout(f"Feature {feature}: activations where it fires", 260, legend=False,
                                     xaxis=dict(title="z_f"), yaxis=dict(title="positions")))


def window_figure(values: pd.DataFrame, profile: pd.DataFrame, column: str, feature: int, window: int) -> go.Figure:
    """The window's input (one column) and the feature's activation over the steps each position reads."""
    steps, heights, text = [], [], []
    for row in profile.itertuples():
        if row.first < 0 or row.first >= len(values):
            continue
        last = min(int(row.last), len(values) - 1)
        steps += [values["timestamp"].iloc[int(row.first)], values["timestamp"].iloc[last], None]
        heights += [row.activation, row.activation, None]
        text += [f"position {row.position}: steps {row.first}–{row.last}"] * 2 + [""]
    traces = [go.Scatter(x=steps, y=heights, name=f"feature {feature}", mode="lines", yaxis="y2", text=text,
                         line=dict(color=FEATURE, width=4),
                         hovertemplate="%{text}<br>z %{y:.3f}<extra></extra>"),
              go.Scatter(x=values["timestamp"], y=values[column], name=column, line=dict(color=HISTORY))]
    return go.Figure(traces, layout(f"Window {window}: where feature {feature} fires, over the steps each position "
                                    "reads", 320, hovermode="x unified", yaxis=dict(title=column),
                                    yaxis2=dict(title="z_f", overlaying="y", side="right", showgrid=False,
                                                rangemode="tozero")))


def _band(x, low, high, colour: str, name: str) -> go.Scatter:
    return go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([high, low[::-1]]), fill="toself",
                      fillcolor=colour, line=dict(width=0), opacity=0.2, name=name, hoverinfo="skip",
                      showlegend=False)


def effect_figure(frame: pd.DataFrame, column: str, feature: int, what: str) -> go.Figure:
    """Per horizon step: the direct effect (mean over windows, band: 95 %) and the feature's contribution measured by
    the intervention, Δ / (α − 1) (error bars: 95 %)."""
    x = frame["step"].to_numpy()
    traces = []
    if "direct" in frame:
        traces += [_band(x, frame["direct_low"].to_numpy(), frame["direct_high"].to_numpy(), DIRECT, "direct 95 %"),
                   go.Scatter(x=x, y=frame["direct"], name="direct effect (frozen norms)", line=dict(color=DIRECT))]
    half_hi = (frame["contribution_high"] - frame["contribution"]).to_numpy()
    half_lo = (frame["contribution"] - frame["contribution_low"]).to_numpy()
    traces.append(go.Scatter(x=x, y=frame["contribution"], name=f"its contribution, measured with the feature {what}",
                             mode="markers+lines",
                             line=dict(color=FEATURE, dash="dot"),
                             error_y=dict(type="data", array=np.nan_to_num(half_hi), arrayminus=np.nan_to_num(half_lo),
                                          visible=bool(np.isfinite(half_hi).any()))))
    return go.Figure(traces, layout(f"Feature {feature}'s effect on the forecast per horizon step ({column})", 320,
                                    xaxis=dict(title="horizon step"), yaxis=dict(title=f"{column} (data units)")))
