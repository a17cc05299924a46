"""Figures of the Query/key map screen: the joint map (WebGL) and a clicked point's attention row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import SEQUENTIAL, WEIGHTS, layout
from informer_lab.ui.qk_map.tables import traces_of

QUERY, KEY = "#d62728", "#1f77b4"
NO_VALUE = "rgba(150, 150, 150, 0.35)"  # points a colouring has no value for
# A click selects its point; plotly would dim every other point, and redraw the whole map to do it (seconds in a
# browser without a GPU). The clicked point is named below the map instead.
def still(opacity: float) -> dict:
    return dict(selected=dict(marker=dict(opacity=opacity)), unselected=dict(marker=dict(opacity=opacity)))


def map_figure(points: pd.DataFrame, colourings: dict[str, np.ndarray | None], titles: dict[str, str], title: str,
               explained: tuple[float, float]) -> go.Figure:
    """Keys (dots) and queries (diamonds) in one WebGL scatter; the selected queries ringed (traces in the order of
    `tables.traces_of`, which maps a click back to its point). Coordinates go as float32 and the hover's window and
    position as int32: binary arrays of 16 bytes a point, not text.

    `colourings`: name → one value per point (None: queries red, keys blue), drawn first by the first; the chart's
    own buttons (`titles` name them) recolour it in the browser, with no rerun of the page and no figure sent again:
    a recolouring sent as a new figure took 3.3 s in Chromium at 12,000 points, a restyle in place 0.6 s."""
    keys, queries, chosen = traces_of(points)
    is_key = (points["kind"] == "key").to_numpy()
    styles = {name: _marker_style(values, is_key, titles[name]) for name, values in colourings.items()}
    first = next(iter(styles.values()))
    traces = []
    for i, (kind, rows, symbol, size) in enumerate((("key", keys, "circle", 4), ("query", queries, "diamond", 5))):
        marker = dict(size=size, symbol=symbol, colorscale=SEQUENTIAL, colorbar=dict(thickness=12),
                      **{name: value[i] for name, value in first.items()})
        traces.append(go.Scattergl(
            x=rows["x"].to_numpy(np.float32), y=rows["y"].to_numpy(np.float32), mode="markers",
            name="keys" if kind == "key" else "queries", marker=marker, customdata=_where(rows), **still(0.6),
            hovertemplate=f"{kind} · window %{{customdata[0]}} · position %{{customdata[1]}}<extra></extra>"))
    traces.append(go.Scattergl(x=chosen["x"].to_numpy(np.float32), y=chosen["y"].to_numpy(np.float32),
                               mode="markers", name="ProbSparse-selected queries",
                               marker=dict(symbol="circle-open", size=7, color="rgba(20, 20, 20, 0.45)",
                                           line=dict(width=0.8)),
                               customdata=_where(chosen), **still(1.0),
                               hovertemplate="selected query · window %{customdata[0]} · position "
                                             "%{customdata[1]}<extra></extra>"))
    buttons = [dict(label=titles[name], method="restyle", args=[{f"marker.{k}": v for k, v in style.items()}, [0, 1]])
               for name, style in styles.items()]
    menu = dict(type="buttons", direction="right", buttons=buttons, active=0, showactive=True, x=0.085,
                xanchor="left", y=1.0, yanchor="bottom", pad=dict(t=4, b=6), font=dict(size=11), bgcolor="#f4f4f4")
    label = dict(text="Colour by", x=0, xref="paper", xanchor="left", y=1.0, yref="paper", yanchor="bottom",
                 yshift=12, showarrow=False, font=dict(size=12))
    legend = dict(orientation="h", x=0, xanchor="left", y=1.08, yanchor="bottom", font=dict(size=11))
    return go.Figure(traces, layout(title, 660, top=125, updatemenus=[menu], annotations=[label], legend=legend,
                                    xaxis=dict(title=dict(text=f"PC 1 ({explained[0]:.0%} of the variance)")),
                                    yaxis=dict(title=dict(text=f"PC 2 ({explained[1]:.0%})"), scaleanchor="x")))


def _marker_style(values: np.ndarray | None, is_key: np.ndarray, title: str) -> dict[str, list]:
    """A colouring as per-trace marker settings [keys, queries] (the restyle arguments of its button). Values go as
    short numbers (integers, or 4 significant digits): the buttons carry every colouring as JSON. Points without a
    value (keys under M̄) are grey."""
    if values is None:
        return dict(color=[KEY, QUERY], opacity=[0.55, 0.55], showscale=[False, False])
    finite = values[np.isfinite(values)]
    lo, hi = float(finite.min()), float(finite.max())
    parts = []
    for rows in (is_key, ~is_key):
        v = values[rows]
        if not np.isfinite(v).any():
            parts.append(NO_VALUE)
        elif np.all(v == np.round(v)):
            parts.append(v.astype(np.int64).tolist())
        else:
            parts.append([float(f"{x:.4g}") if np.isfinite(x) else None for x in v.tolist()])
    return dict(color=parts, opacity=[0.7, 0.7], showscale=[False, True], cmin=[lo, lo], cmax=[hi, hi],
                **{"colorbar.title.text": [title, title]})


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
