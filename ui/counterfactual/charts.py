"""Figures of the Counterfactual editor: the window and forecast as they are and edited, M̄ per query, one row."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import HISTORY, TRUTH, layout, vline

ORIGINAL, EDITED = "#1f77b4", "#d62728"


def window_figure(inputs: pd.DataFrame, forecast: pd.DataFrame | None, column: str, title: str) -> go.Figure:
    """The input column as it is and edited (edited cells marked), then, if it is forecast, truth and both
    forecasts."""
    traces = [go.Scatter(x=inputs["timestamp"], y=inputs["original"], mode="lines", name="input as it is",
                         line=dict(color=HISTORY, width=1.5)),
              go.Scatter(x=inputs["timestamp"], y=inputs["edited"], mode="lines", name="input edited",
                         line=dict(color=EDITED, width=1.5, dash="dot"))]
    changed = inputs[inputs["changed"]]
    traces.append(go.Scatter(x=changed["timestamp"], y=changed["edited"], mode="markers", name="edited cells",
                             marker=dict(color=EDITED, size=6)))
    shapes = []
    if forecast is not None and len(forecast):
        traces += [go.Scatter(x=forecast["timestamp"], y=forecast["truth"], mode="lines+markers", name="truth",
                              line=dict(color=TRUTH, width=2), marker=dict(size=4)),
                   go.Scatter(x=forecast["timestamp"], y=forecast["original"], mode="lines", name="forecast as it is",
                              line=dict(color=ORIGINAL, width=2)),
                   go.Scatter(x=forecast["timestamp"], y=forecast["edited"], mode="lines", name="forecast edited",
                              line=dict(color=EDITED, width=2, dash="dash"))]
        shapes.append(vline(forecast["timestamp"].iloc[0]))
    return go.Figure(traces, layout(title, 420, hovermode="x unified", shapes=shapes,
                                    yaxis=dict(title=dict(text=column))))


def scores_figure(rows: pd.DataFrame, x, title: str) -> go.Figure:
    """M̄ per query in both runs; the top-u of each ringed (circles: as it is, diamonds: edited)."""
    traces = [go.Scatter(x=x, y=rows["mbar_original"], mode="lines", name="M̄ as it is",
                         line=dict(color=ORIGINAL, width=1.5)),
              go.Scatter(x=x, y=rows["mbar_edited"], mode="lines", name="M̄ edited",
                         line=dict(color=EDITED, width=1.5, dash="dot"))]
    for column, name, colour, symbol in (("original", "selected as it is", ORIGINAL, "circle-open"),
                                         ("edited", "selected edited", EDITED, "diamond-open")):
        chosen = rows[f"selected_{column}"].to_numpy()
        traces.append(go.Scatter(x=pd.Series(list(x))[chosen], y=rows.loc[chosen, f"mbar_{column}"], mode="markers",
                                 name=name, marker=dict(color=colour, size=10, symbol=symbol, line=dict(width=2))))
    return go.Figure(traces, layout(title, 360, legend="right", yaxis=dict(title=dict(text="sampled M̄"))))


def row_figure(row: pd.DataFrame, x, title: str, log: bool) -> go.Figure:
    """One query's attention row in both runs (a lazy query: the row its stand-in implies, dotted)."""
    traces = []
    for column, name, colour in (("original", "as it is", ORIGINAL), ("edited", "edited", EDITED)):
        computed = bool(row[f"computed_{column}"].iloc[0])
        traces.append(go.Scatter(x=x, y=row[column], mode="lines", name=name + ("" if computed else " (lazy)"),
                                 line=dict(color=colour, width=1.8, dash="solid" if computed else "dot")))
    return go.Figure(traces, layout(title, 320, hovermode="x unified",
                                    yaxis=dict(title=dict(text="weight"), type="log" if log else "linear")))
