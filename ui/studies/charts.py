"""Figures of the Studies screen: the role × seed matrix (clickable), and a finding over seeds with its interval."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from informer_lab.ui.charts import layout

ROLE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                "#17becf"]


TEXT_COLUMNS = 12  # more seeds than this: role names only on hover, colours in the legend


def role_figure(codes: np.ndarray, labels: Sequence[str], seeds: Sequence[str], roles: Sequence[str],
                heads: np.ndarray, title: str) -> go.Figure:
    """Rows: heads matched across seeds (named by the first seed's head); columns: seeds; colour: the head's role
    there (named in each cell up to TEXT_COLUMNS seeds, in the legend always). Each cell carries its own marker, so a
    click opens that head of that run."""
    n, k = codes.shape
    scale = [[i / max(1, len(roles) - 1), ROLE_COLOURS[i % len(ROLE_COLOURS)]] for i in range(len(roles))] \
        if len(roles) > 1 else [[0, ROLE_COLOURS[0]], [1, ROLE_COLOURS[0]]]
    text = np.array([[roles[int(c)] if np.isfinite(c) else "" for c in row] for row in codes])
    heatmap = go.Heatmap(z=codes, x=list(seeds), y=list(labels), text=text,
                         texttemplate="%{text}" if k <= TEXT_COLUMNS else None, colorscale=scale, zmin=0,
                         zmax=max(1, len(roles) - 1), showscale=False, hoverinfo="skip", xgap=1 if k > 30 else 2,
                         ygap=2, showlegend=False)
    rows, cols = np.indices((n, k))
    cell = max(8, min(30, 900 // max(1, k)))
    markers = go.Scatter(
        x=[seeds[c] for c in cols.ravel()], y=[labels[r] for r in rows.ravel()], mode="markers",
        marker=dict(symbol="square", size=cell, color="#000000", opacity=0.01),
        selected=dict(marker=dict(opacity=0.01)), unselected=dict(marker=dict(opacity=0.01)),
        customdata=np.stack([rows.ravel(), cols.ravel(), heads.ravel()], axis=1), showlegend=False,
        text=[f"{labels[r]} → {seeds[c]}: head {heads[r, c]}, {text[r, c]}" for r, c in zip(rows.ravel(), cols.ravel())],
        hovertemplate="%{text}<br><i>click to open this head of this run</i><extra></extra>")
    legend = [go.Scatter(x=[None], y=[None], mode="markers", name=role, hoverinfo="skip",
                         marker=dict(symbol="square", size=12, color=ROLE_COLOURS[i % len(ROLE_COLOURS)]))
              for i, role in enumerate(roles)]
    return go.Figure([heatmap, markers, *legend], layout(
        title, 150 + 26 * n, legend="right", top=95, hoverdistance=-1, clickmode="event+select", dragmode=False,
        xaxis=dict(side="top", fixedrange=True, tickangle=-90 if k > 20 else 0), yaxis=dict(
            autorange="reversed", fixedrange=True, type="category")))


def interval_bars(labels: Sequence[str], values: np.ndarray, lo: np.ndarray, hi: np.ndarray, title: str,
                  axis: str) -> go.Figure:
    """A value per label with its interval as an error bar."""
    values, lo, hi = (np.asarray(a, dtype=np.float64) for a in (values, lo, hi))
    bars = go.Bar(x=list(labels), y=values, error_y=dict(type="data", symmetric=False, array=hi - values,
                                                         arrayminus=values - lo, color="#444444"),
                  marker_color="#1f77b4", hovertemplate="%{x}: %{y:.4g}<extra></extra>")
    return go.Figure([bars], layout(title, 320, legend=False, yaxis=dict(title=dict(text=axis))))
