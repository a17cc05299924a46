"""Figures of the Distilling pyramid screen: the stack picture and per-level heatmaps."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import SEQUENTIAL, layout
from informer_lab.ui.pyramid.tables import steps_text

HIGHLIGHT = "#ff7f0e"
REPLICA_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


def pyramid_figure(cells: pd.DataFrame, input_stamps: Sequence[str], seq_len: int,
                   chosen: tuple[int, int, int] | None, output: pd.DataFrame | None) -> go.Figure:
    """The encoder stack: one row per (replica, layer), each position a unit cell coloured by its output norm,
    centred over the input steps its replica reads. The bottom row is the encoder input window (seq_len steps); the
    chosen position is joined to the input span it tiles (filled band) and its conv/pool receptive field (dashed).

    The cells are one heatmap on a half-step grid (a layer may sit half a step off: TSL's padding), drawn as one
    picture however many there are, and carry their own hover and clicks: each grid cell's customdata is its
    (replica, layer, position) as numbers. (Invisible WebGL markers with per-cell text used to carry them: at
    seq_len 1440 building and serialising their text took 0.5 s of every click on the server.)"""
    traces, shapes = [], []
    n_rows = int(cells["row"].max()) + 1 + (output is not None)
    columns = 2 * seq_len + 2  # half steps from 0 to seq_len + 1
    grid_x = np.arange(columns) / 2 + 0.25  # centre of each half step

    def layer_grid(rows: np.ndarray, x0: np.ndarray, values: np.ndarray) -> np.ndarray:
        """[n_rows, columns] (or [n_rows, columns, k] for k values a cell) of `values` placed on the grid, NaN
        where no cell is."""
        z = np.full((n_rows, columns) + values.shape[1:], np.nan, dtype=np.float32)
        left = np.rint(2 * x0).astype(np.int64)  # a unit cell covers two half steps
        for half in (0, 1):
            inside = (left + half >= 0) & (left + half < columns)
            z[rows[inside], left[inside] + half] = values[inside]
        return z

    steps = np.arange(seq_len)  # the input window, its own grey row with each step's time in the hover
    input_row = np.full((1, columns), np.nan, dtype=np.float32)
    input_row[0, 2 * steps] = input_row[0, 2 * steps + 1] = steps
    times = np.full(columns, "", dtype=object)
    times[2 * steps] = times[2 * steps + 1] = np.asarray(input_stamps, dtype=object)
    traces.append(go.Heatmap(z=np.where(np.isnan(input_row), np.nan, 0).astype(np.float32), x=grid_x, y=[0],
                             customdata=input_row, text=[times.tolist()], ygap=16, showscale=False,
                             colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], hoverongaps=False, name="input",
                             hovertemplate="input step %{customdata} · %{text}<extra></extra>"))
    rows, x0 = cells["row"].to_numpy(), cells["x0"].to_numpy(float)
    where = cells[["replica", "level", "position"]].to_numpy(np.float32)
    traces.append(go.Heatmap(
        z=layer_grid(rows, x0, cells["norm"].to_numpy(np.float32)), x=grid_x, y=np.arange(n_rows),
        customdata=layer_grid(rows, x0, where), colorscale=SEQUENTIAL, ygap=16, name="positions",
        hoverongaps=False, colorbar=dict(title=dict(text="output ‖x‖₂"), thickness=12),
        hovertemplate="replica %{customdata[0]} · layer %{customdata[1]} · position %{customdata[2]}"
                      "<br>input step ≈ %{x:.0f} · output norm %{z:.4g}<br>click: the input steps it tiles and "
                      "its conv/pool reach<extra></extra>"))
    if output is not None:
        top = n_rows - 1
        palette = [REPLICA_COLOURS[r % len(REPLICA_COLOURS)] for r in range(int(output["replica"].max()) + 1)]
        scale = [[i / max(1, len(palette) - 1), c] for i, c in enumerate(palette)] if len(palette) > 1 else \
            [[0, palette[0]], [1, palette[0]]]
        on_top = np.full(len(output), top)
        out_x0 = output["x0"].to_numpy(float)
        traces.append(go.Heatmap(
            z=layer_grid(on_top, out_x0, output["replica"].to_numpy(np.float32)), x=grid_x, y=np.arange(n_rows),
            customdata=layer_grid(on_top, out_x0, np.c_[output[["replica", "position", "index"]].to_numpy(np.float32),
                                                        np.full(len(output), np.nan, np.float32)]),  # 4: no cell
            colorscale=scale, zmin=0, zmax=max(1, len(palette) - 1), showscale=False, ygap=16, hoverongaps=False,
            hovertemplate="encoder output position %{customdata[2]}<br>= replica %{customdata[0]}, last layer, "
                          "position %{customdata[1]}<extra></extra>"))
        for r in sorted(output["replica"].unique()):
            traces.append(go.Bar(x=[None], y=[None], orientation="h", name=f"output of replica {r}",
                                 marker_color=REPLICA_COLOURS[r % len(REPLICA_COLOURS)], hoverinfo="skip"))
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
        dragmode=False, hoverdistance=8,
        yaxis=dict(tickvals=list(range(n_rows)), ticktext=titles, range=[-0.6, n_rows - 0.4], fixedrange=True,
                   showgrid=False, zeroline=False),
        xaxis=dict(title=dict(text="input step of the encoder window (cells: one per position, width = length)"),
                   range=[-1, seq_len + 1], showgrid=False, zeroline=False)))


def level_heatmap(z: np.ndarray, titles: Sequence[str], spans: np.ndarray | None, title: str, colour: str,
                  x_title: str, zmin: float | None = None, zmax: float | None = None,
                  colorscale=SEQUENTIAL) -> go.Figure:
    """Rows of different lengths (NaN-padded), one per level or pooling step; `spans` ([rows, width, 2], from
    `tables.level_spans`): the input steps each position tiles, in the hover."""
    heatmap = go.Heatmap(
        z=z.astype(np.float32), x=np.arange(z.shape[1]), y=list(titles), customdata=spans, colorscale=colorscale,
        zmin=zmin, zmax=zmax, ygap=3, colorbar=dict(title=dict(text=colour), thickness=12), hoverongaps=False,
        hovertemplate="%{y} · position %{x}" + ("<br>tiles input steps %{customdata[0]}–%{customdata[1]}"
                                                if spans is not None else "")
                      + f"<br>{colour} %{{z:.4g}}<extra></extra>")
    return go.Figure([heatmap], layout(title, max(230, 130 + 42 * len(titles)), legend=False,
                                       yaxis=dict(autorange="reversed", type="category"),
                                       xaxis=dict(title=dict(text=x_title))))
