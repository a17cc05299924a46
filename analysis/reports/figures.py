"""The study report's figures: plain plotly figures built from analysis tables (bars with 95 % intervals, heatmaps).

Kept simple on purpose: a report is read offline, long after the run, so each figure shows one table's numbers
with their intervals and nothing that needs the app. Each figure is built in one `go.Figure(traces, layout)` call.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

HEIGHT = 420


def _layout(title: str, y_title: str, *, height: int = HEIGHT, yaxis: dict | None = None, **more) -> dict:
    return dict(title={"text": title, "x": 0.01, "xanchor": "left"}, height=height, template="plotly_white",
                margin={"l": 70, "r": 20, "t": 60, "b": 90}, yaxis={"title": {"text": y_title}, **(yaxis or {})},
                legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"}, **more)


def _error_bars(values: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> dict | None:
    """Plotly's asymmetric error bars of an interval [lo, hi] around `values` (None when there is no interval)."""
    if lo is None or hi is None:
        return None
    return {"type": "data", "symmetric": False, "array": np.nan_to_num(hi - values),
            "arrayminus": np.nan_to_num(values - lo), "thickness": 1.2}


def interval_bars(labels: Sequence[str], values, lo=None, hi=None, *, title: str, y_title: str) -> go.Figure:
    """One bar per label, with the interval [lo, hi] as error bars when given."""
    values = np.asarray(values, dtype=np.float64)
    lo = None if lo is None else np.asarray(lo, dtype=np.float64)
    hi = None if hi is None else np.asarray(hi, dtype=np.float64)
    bar = go.Bar(x=[str(label) for label in labels], y=values, error_y=_error_bars(values, lo, hi),
                 marker={"color": "#1f77b4"}, showlegend=False)
    return go.Figure([bar], _layout(title, y_title, xaxis={"type": "category"}))


def grouped_bars(table: pd.DataFrame, x: str, group: str, value: str, lo: str | None = None, hi: str | None = None,
                 *, title: str, y_title: str) -> go.Figure:
    """Bars of `value` over `x`, one coloured series per value of `group`, with [lo, hi] error bars when given."""
    traces = []
    for name, part in table.groupby(group, sort=False):
        values = part[value].to_numpy(dtype=np.float64)
        bars = _error_bars(values, part[lo].to_numpy(dtype=np.float64) if lo else None,
                           part[hi].to_numpy(dtype=np.float64) if hi else None)
        traces.append(go.Bar(x=[str(v) for v in part[x]], y=values, name=str(name), error_y=bars))
    return go.Figure(traces, _layout(title, y_title, barmode="group", xaxis={"type": "category"}))


def series_bars(labels: Sequence[str], series: dict[str, Sequence[float]], *, title: str, y_title: str) -> go.Figure:
    """Grouped bars: one series per entry of `series`, over the same labels."""
    x = [str(label) for label in labels]
    traces = [go.Bar(x=x, y=np.asarray(values, dtype=np.float64), name=name) for name, values in series.items()]
    return go.Figure(traces, _layout(title, y_title, barmode="group", xaxis={"type": "category"}))


def heatmap(z, x: Sequence[str], y: Sequence[str], *, title: str, colorbar: str | None, text=None,
            colorscale: str = "Viridis") -> go.Figure:
    """A heatmap of z [len(y), len(x)] with `text` (same shape) written in the cells when given; no colour scale
    when `colorbar` is None (z are category codes, the cells' text names them)."""
    trace = go.Heatmap(z=np.asarray(z, dtype=np.float64), x=[str(v) for v in x], y=[str(v) for v in y],
                       colorscale=colorscale, showscale=colorbar is not None,
                       colorbar={"title": {"text": colorbar or ""}},
                       text=text, texttemplate="%{text}" if text is not None else None, hoverongaps=False)
    height = max(260, 60 + 28 * len(y))
    return go.Figure([trace], _layout(title, "", height=height, xaxis={"type": "category"},
                                      yaxis={"type": "category", "autorange": "reversed"}))


__all__ = ["grouped_bars", "heatmap", "interval_bars", "series_bars"]
