"""The figure layout every chart uses, the shared palette and colour scales, and timestamp labels.

Each screen's figures live in its own folder (`ui/<screen>/charts.py`); they build every figure in one
`go.Figure(traces, charts.layout(...))` call.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

HISTORY = "#8c8c8c"
TRUTH = "#222222"
BASELINE = "#1f77b4"
MASKED = "#ff7f0e"
FORECAST = "#d62728"
WORSE = "#d62728"
BETTER = "#2ca02c"
TRAIN = "#1f77b4"
VAL = "#d62728"


def layout(title: str, height: int, *, legend: bool | str | dict = True, hovermode: str = "closest",
           top: int | None = None, **more) -> dict:
    """A figure's layout as one dict: title top left; legend True (one row above the plot), "right" (a column
    right of it), a legend dict of its own, or False; hover on the point under the cursor unless `hovermode` says
    otherwise ("x unified" for time series); `more` adds layout keys (xaxis=..., shapes=[...]).

    The figures are built in one `go.Figure(traces, layout(...))` call: plotly validates a whole dict at once,
    which takes half the time of a chain of add_trace / update_layout / update_xaxes / add_vline calls (7–10 ms
    against 18–20 ms for each of the sparsity explorer's figures), time every re-slicing click pays on the server.
    """
    above = legend is True
    return dict(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)),
        height=height, margin=dict(l=10, r=10, t=top if top is not None else 75 if above else 45, b=10),
        legend=(dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0) if above else
                dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02) if legend == "right" else
                legend if isinstance(legend, dict) else {}),
        showlegend=bool(legend), hovermode=hovermode, **more)


def vline(x, colour: str = "#bbbbbb", *, dash: str = "dot", xref: str = "x", yref: str = "y domain") -> dict:
    """A vertical line across the whole plot (a layout shape), as fig.add_vline draws it (plotly's 2 px)."""
    return dict(type="line", xref=xref, yref=yref, x0=x, x1=x, y0=0, y1=1, line=dict(color=colour, dash=dash))


def hline(y, colour: str = "#888888", *, dash: str = "solid", width: float = 1, xref: str = "x domain",
          yref: str = "y") -> dict:
    """A horizontal line across the whole plot (a layout shape), as fig.add_hline draws it."""
    return dict(type="line", xref=xref, yref=yref, x0=0, x1=1, y0=y, y1=y, line=dict(color=colour, dash=dash,
                                                                                      width=width))


SEQUENTIAL = "Viridis"
WEIGHTS = "Blues"
DIVERGING = "RdBu_r"
STAMP = "%Y-%m-%d %H:%M"


def recent(history: pd.DataFrame, pred_len: int) -> pd.DataFrame:
    """The last steps of an encoder history worth drawing beside a pred_len forecast: at most max(4·pred_len, 96)
    (a 1,440-step history beside 96 forecast steps squeezes the forecast into a strip; zoom out for the rest)."""
    keep = max(4 * pred_len, 96)
    stamps_ = history["timestamp"].drop_duplicates()
    return history if len(stamps_) <= keep else history[history["timestamp"] >= stamps_.iloc[-keep]]


MAX_LINE_POINTS = 2_400  # points of a drawn line: two per pixel of the widest chart (1,200 px)


def thin(series: pd.Series, limit: int = MAX_LINE_POINTS) -> pd.Series:
    """A long line cut to at most ~`limit` points that draw the same picture: the minimum and the maximum of each of
    limit/2 consecutive buckets (in time order), the first and last points kept. Shorter series come back whole.
    A 11,520-step history in a 1,200-px chart sends 20× the points it can show."""
    n = len(series)
    if n <= limit:
        return series
    buckets = np.linspace(0, n, limit // 2 + 1).astype(np.int64)
    values = series.to_numpy(dtype=np.float64)
    keep = {0, n - 1}
    for a, b in zip(buckets[:-1], buckets[1:]):
        part = values[a:b]
        if b > a and np.isfinite(part).any():
            keep.update((a + int(np.nanargmin(part)), a + int(np.nanargmax(part))))
    return series.iloc[sorted(keep)]


SCATTER_CELLS = (120, 80)  # a scatter's plot area (≤ ~500 × 330 px in the page) in cells of ~4 px, half a marker:
# one drawn point a cell


def one_per_cell(x: np.ndarray, y: np.ndarray, x_range: tuple[float, float], y_range: tuple[float, float],
                 cells: tuple[int, int] = SCATTER_CELLS) -> np.ndarray:
    """Indices (ascending) of the first point in each occupied cell of a `cells` grid over the ranges: a dense
    scatter drawn this way looks the same (the other points of a cell sit under the drawn one's marker) and sends
    at most cells_x · cells_y points. Non-finite points are left out."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    (x0, x1), (y0, y1), (nx, ny) = x_range, y_range, cells
    cx = np.clip(((x[finite] - x0) / ((x1 - x0) or 1.0) * nx).astype(np.int64), 0, nx - 1)
    cy = np.clip(((y[finite] - y0) / ((y1 - y0) or 1.0) * ny).astype(np.int64), 0, ny - 1)
    _, first = np.unique(cx * ny + cy, return_index=True)
    return np.sort(finite[first])


def stamps(values) -> np.ndarray:
    """Timestamps as short strings for hover text."""
    return pd.DatetimeIndex(values).strftime(STAMP).to_numpy()
