"""Figures of the Query/key map screen: the joint map (WebGL) and a clicked point's attention row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts import SEQUENTIAL, WEIGHTS, layout
from ui.qk_map.tables import traces_of

QUERY, KEY = "#d62728", "#1f77b4"
# A click selects its point; plotly would dim every other point, and redraw the whole map to do it (seconds in a
# browser without a GPU). The clicked point is named below the map instead.
def still(opacity: float) -> dict:
    return dict(selected=dict(marker=dict(opacity=opacity)), unselected=dict(marker=dict(opacity=opacity)))


def map_figure(points: pd.DataFrame, colour: np.ndarray | None, colour_title: str, title: str,
               explained: tuple[float, float]) -> go.Figure:
    """Keys (dots) and queries (diamonds) in one WebGL scatter; the selected queries ringed (traces in the order of
    `tables.traces_of`, which maps a click back to its point). `colour`: one value per point (None: queries red, keys
    blue). Coordinates and colours go as float32 and the hover's window and position as int32: the browser gets
    binary arrays of 16 bytes a point, not text (60,000 points: 1.3 MB of page)."""
    keys, queries, chosen = traces_of(points)
    finite = colour is not None and np.isfinite(colour).any()
    traces = []
    for kind, rows, symbol, size, base in (("key", keys, "circle", 4, KEY), ("query", queries, "diamond", 5, QUERY)):
        if colour is None:
            marker = dict(color=base, size=size, opacity=0.55, symbol=symbol)
        else:
            values = colour[(points["kind"] == kind).to_numpy()].astype(np.float32)
            marker = dict(color=values, colorscale=SEQUENTIAL, size=size, opacity=0.7, symbol=symbol,
                          cmin=float(np.nanmin(colour)) if finite else None,
                          cmax=float(np.nanmax(colour)) if finite else None,
                          showscale=kind == "query", colorbar=dict(title=dict(text=colour_title), thickness=12))
        traces.append(go.Scattergl(
            x=rows["x"].to_numpy(np.float32), y=rows["y"].to_numpy(np.float32), mode="markers",
            name="keys" if kind == "key" else "queries", marker=marker, customdata=_where(rows),
            **still(marker["opacity"]),
            hovertemplate=f"{kind} · window %{{customdata[0]}} · position %{{customdata[1]}}<extra></extra>"))
    traces.append(go.Scattergl(x=chosen["x"].to_numpy(np.float32), y=chosen["y"].to_numpy(np.float32),
                               mode="markers", name="ProbSparse-selected queries",
                               marker=dict(symbol="circle-open", size=7, color="rgba(20, 20, 20, 0.45)",
                                           line=dict(width=0.8)),
                               customdata=_where(chosen), **still(1.0),
                               hovertemplate="selected query · window %{customdata[0]} · position "
                                             "%{customdata[1]}<extra></extra>"))
    return go.Figure(traces, layout(title, 620, legend=True,
                                    xaxis=dict(title=dict(text=f"PC 1 ({explained[0]:.0%} of the variance)")),
                                    yaxis=dict(title=dict(text=f"PC 2 ({explained[1]:.0%})"), scaleanchor="x")))


def _where(rows: pd.DataFrame) -> np.ndarray:
    """[n, 2] int32: each point's window and position, for the hover."""
    return np.stack([rows["window"].to_numpy(np.int32), rows["position"].to_numpy(np.int32)], axis=1)


def row_figure(row: pd.DataFrame, stamps: pd.DatetimeIndex | None, title: str, log: bool) -> go.Figure:
    """One query's attention weights over the keys (both are the recorded row, or its lazy stand-in, grey).

    One filled step line, not a bar per key: at seq_len 1440 the bars were 1,440 SVG shapes drawn on every click
    (5,760 at 5760), the line is one path. Markers show the keys of short rows."""
    x = stamps if stamps is not None else row["step"]
    y = row["original"].to_numpy(np.float32)
    colour = "#1f77b4" if bool(row["computed_original"].all()) else "#9e9e9e"
    line = go.Scatter(x=x, y=y, mode="lines+markers" if len(y) <= 100 else "lines",
                      line=dict(color=colour, width=1, shape="hvh"), marker=dict(size=4, color=colour),
                      fill=None if log else "tozeroy", hovertemplate="key %{x}: weight %{y:.4g}<extra></extra>")
    return go.Figure([line], layout(title, 320, legend=False,
                                    yaxis=dict(title=dict(text="weight"), type="log" if log else "linear"),
                                    xaxis=dict(title=dict(text="key"))))


def key_figure(weights: np.ndarray, query_x, title: str) -> go.Figure:
    """How much each computed query row of a window puts on one key."""
    bars = go.Bar(x=query_x, y=weights, marker=dict(color=weights, colorscale=WEIGHTS),
                  hovertemplate="query %{x}: weight %{y:.4g}<extra></extra>")
    return go.Figure([bars], layout(title, 300, legend=False, yaxis=dict(title=dict(text="weight on this key")),
                                    xaxis=dict(title=dict(text="query (computed rows only)"))))
