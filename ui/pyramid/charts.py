"""Figures of the Distilling pyramid screen: the stack picture and per-level heatmaps."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts import SEQUENTIAL, layout
from ui.pyramid.tables import steps_text

HIGHLIGHT = "#ff7f0e"
REPLICA_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


def pyramid_figure(cells: pd.DataFrame, input_stamps: Sequence[str], seq_len: int,
                   chosen: tuple[int, int, int] | None, output: pd.DataFrame | None) -> go.Figure:
    """The encoder stack: one row per (replica, layer), each position a unit cell coloured by its output norm,
    centred over the input steps its replica reads. The bottom row is the encoder input window (seq_len steps); the
    chosen position is joined to the input span it tiles (filled band) and its conv/pool receptive field (dashed).

    The cells are one heatmap on a half-step grid (a layer may sit half a step off: TSL's padding), drawn as one
    picture however many there are (a seq_len-1440 stack has 2,520 cells: as bars, 2,520 SVG shapes the browser
    redrew on every click); over it one invisible WebGL marker per cell carries its hover and its click."""
    traces, shapes = [], []
    n_rows = int(cells["row"].max()) + 1 + (output is not None)
    columns = 2 * seq_len + 2  # half steps from 0 to seq_len + 1
    grid_x = np.arange(columns) / 2 + 0.25  # centre of each half step

    def layer_grid(rows: np.ndarray, x0: np.ndarray, values: np.ndarray) -> np.ndarray:
        z = np.full((n_rows, columns), np.nan, dtype=np.float32)
        left = np.rint(2 * x0).astype(np.int64)  # a unit cell covers two half steps
        for half in (0, 1):
            inside = (left + half >= 0) & (left + half < columns)
            z[rows[inside], left[inside] + half] = values[inside]
        return z

    traces.append(go.Bar(base=[0], x=[seq_len], y=[0], orientation="h", width=0.7, marker=dict(color="#d9d9d9"),
                         hoverinfo="skip", showlegend=False))  # the input window, one bar
    traces.append(go.Heatmap(
        z=layer_grid(cells["row"].to_numpy(), cells["x0"].to_numpy(float), cells["norm"].to_numpy(np.float32)),
        x=grid_x, y=np.arange(n_rows), colorscale=SEQUENTIAL, hoverinfo="skip", ygap=16, name="positions",
        colorbar=dict(title=dict(text="output ‖x‖₂"), thickness=12)))
    if output is not None:
        top = n_rows - 1
        palette = [REPLICA_COLOURS[r % len(REPLICA_COLOURS)] for r in range(int(output["replica"].max()) + 1)]
        scale = [[i / max(1, len(palette) - 1), c] for i, c in enumerate(palette)] if len(palette) > 1 else \
            [[0, palette[0]], [1, palette[0]]]
        traces.append(go.Heatmap(
            z=layer_grid(np.full(len(output), top), output["x0"].to_numpy(float), output["replica"].to_numpy(float)),
            x=grid_x, y=np.arange(n_rows), colorscale=scale, zmin=0, zmax=max(1, len(palette) - 1), showscale=False,
            hoverinfo="skip", ygap=16))
        traces.append(_points(output["x0"] + 0.5, np.full(len(output), top),
                              np.stack([output["replica"], output["position"], output["index"]], axis=1),
                              "encoder output position %{customdata[2]}<br>= replica %{customdata[0]}, "
                              "last layer, position %{customdata[1]}"))
        for r in sorted(output["replica"].unique()):
            traces.append(go.Bar(x=[None], y=[None], orientation="h", name=f"output of replica {r}",
                                 marker_color=REPLICA_COLOURS[r % len(REPLICA_COLOURS)], hoverinfo="skip"))
    traces.append(_points(np.arange(seq_len) + 0.5, np.zeros(seq_len),
                          np.stack([np.arange(seq_len), np.asarray(input_stamps)], axis=1),
                          "input step %{customdata[0]} · %{customdata[1]}"))
    traces.append(_points(
        cells["x0"] + 0.5, cells["row"],
        np.stack([cells["replica"], cells["level"], cells["position"], cells["span_start"], cells["span_end"],
                  cells["span_text"], cells["receptive_start"], cells["receptive_end"],
                  np.where(cells["wraps"], " (wraps round: circular padding)", ""), cells["norm"]], axis=1),
        "replica %{customdata[0]} · layer %{customdata[1]} · position %{customdata[2]}"
        "<br>tiles input steps %{customdata[3]}–%{customdata[4]}: %{customdata[5]}"
        "<br>conv/pool reach: steps %{customdata[6]}–%{customdata[7]}%{customdata[8]}"
        "<br>output norm %{customdata[9]:.4g}", name="positions"))
    if chosen is not None:
        r, level, p = chosen
        hit = cells[(cells["replica"] == r) & (cells["level"] == level) & (cells["position"] == p)]
        if len(hit):
            c = hit.iloc[0]
            y_top, y_bottom = c["row"] - 0.35, 0.35
            traces.append(go.Scatter(
                x=[c["x0"], c["x0"] + 1, c["span_end"] + 1, c["span_start"], c["x0"]],
                y=[y_top, y_top, y_bottom, y_bottom, y_top], fill="toself", mode="lines",
                fillcolor="rgba(255,127,14,0.25)", line=dict(color=HIGHLIGHT, width=1.5), hoverinfo="skip",
                name=f"position {p} tiles input {steps_text(c['span_start'], c['span_end'])}"))
            shapes.append(dict(type="rect", x0=c["receptive_start"], x1=c["receptive_end"] + 1, y0=-0.45, y1=0.45,
                               line=dict(color=HIGHLIGHT, width=2, dash="dash")))
            traces.append(go.Scatter(x=[None], y=[None], mode="lines", hoverinfo="skip",
                                     line=dict(color=HIGHLIGHT, width=2, dash="dash"),
                                     name=f"conv/pool reach: {steps_text(c['receptive_start'], c['receptive_end'])}"))
            shapes.append(dict(type="rect", x0=c["x0"], x1=c["x0"] + 1, y0=c["row"] - 0.45, y1=c["row"] + 0.45,
                               line=dict(color=HIGHLIGHT, width=3)))
    titles = ["input window"] + list(cells.drop_duplicates("row").sort_values("row")["row_title"])
    if output is not None:
        titles.append(f"encoder output (L = {len(output)})")
    return go.Figure(traces, layout(
        "The encoder pyramid of this window", 160 + 56 * n_rows, shapes=shapes, barmode="overlay", bargap=0.3,
        clickmode="event+select", dragmode=False, hoverdistance=8,
        yaxis=dict(tickvals=list(range(n_rows)), ticktext=titles, range=[-0.6, n_rows - 0.4], fixedrange=True,
                   showgrid=False, zeroline=False),
        xaxis=dict(title=dict(text="input step of the encoder window (cells: one per position, width = length)"),
                   range=[-1, seq_len + 1], showgrid=False, zeroline=False)))


def _points(x, y, customdata: np.ndarray, hover: str, name: str = "") -> go.Scattergl:
    """Invisible WebGL markers at the cells' centres: their hover, and the clicks Streamlit hands to the page."""
    return go.Scattergl(x=np.asarray(x, dtype=np.float32), y=np.asarray(y, dtype=np.float32), mode="markers",
                        marker=dict(size=9, color="#000000", opacity=0.01), customdata=customdata, name=name,
                        selected=dict(marker=dict(opacity=0.01)), unselected=dict(marker=dict(opacity=0.01)),
                        hovertemplate=hover + "<extra></extra>", showlegend=False)


def level_heatmap(z: np.ndarray, titles: Sequence[str], custom: np.ndarray | None, title: str, colour: str,
                  x_title: str, zmin: float | None = None, zmax: float | None = None,
                  colorscale=SEQUENTIAL) -> go.Figure:
    """Rows of different lengths (NaN-padded), one per level or pooling step."""
    heatmap = go.Heatmap(
        z=z, x=list(range(z.shape[1])), y=list(titles), customdata=custom, colorscale=colorscale, zmin=zmin,
        zmax=zmax, ygap=3, colorbar=dict(title=dict(text=colour), thickness=12),
        hovertemplate="%{y} · position %{x}" + ("<br>%{customdata}" if custom is not None else "")
                      + f"<br>{colour} %{{z:.4g}}<extra></extra>")
    return go.Figure([heatmap], layout(title, max(230, 130 + 42 * len(titles)), legend=False,
                                       yaxis=dict(autorange="reversed", type="category"),
                                       xaxis=dict(title=dict(text=x_title))))
