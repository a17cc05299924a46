"""Figures of the Query/key map screen: the joint map (WebGL) and a clicked point's attention row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts import SEQUENTIAL, WEIGHTS, layout

QUERY, KEY = "#d62728", "#1f77b4"


def map_figure(points: pd.DataFrame, colour: np.ndarray | None, colour_title: str, title: str,
               explained: tuple[float, float]) -> go.Figure:
    """Keys (dots) and queries (diamonds) in one WebGL scatter; the selected queries ringed. `colour`: one value per
    point (None: queries red, keys blue). customdata carries each point's row in the whole map (for clicks)."""
    traces = []
    for kind, symbol, size, base in (("key", "circle", 4, KEY), ("query", "diamond", 5, QUERY)):
        part = points["kind"] == kind
        rows = points[part]
        if colour is None:
            marker = dict(color=base, size=size, opacity=0.55, symbol=symbol)
        else:
            values = colour[part.to_numpy()]
            marker = dict(color=values, colorscale=SEQUENTIAL, size=size, opacity=0.7, symbol=symbol,
                          cmin=float(np.nanmin(colour)) if np.isfinite(colour).any() else None,
                          cmax=float(np.nanmax(colour)) if np.isfinite(colour).any() else None,
                          showscale=kind == "query", colorbar=dict(title=dict(text=colour_title), thickness=12))
        traces.append(go.Scattergl(
            x=rows["x"], y=rows["y"], mode="markers", name="keys" if kind == "key" else "queries", marker=marker,
            customdata=np.stack([rows["point"], rows["window"], rows["position"]], axis=1),
            hovertemplate=f"{kind} · window %{{customdata[1]}} · position %{{customdata[2]}}<extra></extra>"))
    chosen = points[points["selected"]]
    traces.append(go.Scattergl(x=chosen["x"], y=chosen["y"], mode="markers", name="ProbSparse-selected queries",
                               marker=dict(symbol="circle-open", size=7, color="rgba(20, 20, 20, 0.45)",
                                           line=dict(width=0.8)),
                               customdata=np.stack([chosen["point"], chosen["window"], chosen["position"]], axis=1),
                               hovertemplate="selected query · window %{customdata[1]} · position "
                                             "%{customdata[2]}<extra></extra>"))
    return go.Figure(traces, layout(title, 620, legend=True,
                                    xaxis=dict(title=dict(text=f"PC 1 ({explained[0]:.0%} of the variance)")),
                                    yaxis=dict(title=dict(text=f"PC 2 ({explained[1]:.0%})"), scaleanchor="x")))


def row_figure(row: pd.DataFrame, stamps: pd.DatetimeIndex | None, title: str, log: bool) -> go.Figure:
    """One query's attention weights over the keys (both are the recorded row, or its lazy stand-in)."""
    x = stamps if stamps is not None else row["step"]
    y = row["original"].to_numpy(float)
    bars = go.Bar(x=x, y=y, marker_color=np.where(row["computed_original"], "#1f77b4", "#9e9e9e"),
                  hovertemplate="key %{x}: weight %{y:.4g}<extra></extra>")
    return go.Figure([bars], layout(title, 320, legend=False,
                                    yaxis=dict(title=dict(text="weight"), type="log" if log else "linear"),
                                    xaxis=dict(title=dict(text="key"))))


def key_figure(weights: np.ndarray, query_x, title: str) -> go.Figure:
    """How much each computed query row of a window puts on one key."""
    bars = go.Bar(x=query_x, y=weights, marker=dict(color=weights, colorscale=WEIGHTS),
                  hovertemplate="query %{x}: weight %{y:.4g}<extra></extra>")
    return go.Figure([bars], layout(title, 300, legend=False, yaxis=dict(title=dict(text="weight on this key")),
                                    xaxis=dict(title=dict(text="query (computed rows only)"))))
