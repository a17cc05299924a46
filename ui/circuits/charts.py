"""The Circuits screen's figures, each built in one `go.Figure(traces, layout(...))` call."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import layout

SITE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def atp_scatter(table: pd.DataFrame) -> go.Figure:
    """AtP against exact patching, one point per (pair, head), a colour per site; the diagonal y = x."""
    traces = []
    for i, (site, part) in enumerate(table.groupby("site", sort=False)):
        traces.append(go.Scattergl(x=part["exact"], y=part["atp"], mode="markers", name=site,
                                   marker=dict(size=5, color=SITE_COLOURS[i % len(SITE_COLOURS)], opacity=0.7),
                                   customdata=np.stack([part["head"], part["pair"]], axis=1),
                                   hovertemplate=f"{site}:%{{customdata[0]}} · pair %{{customdata[1]}}<br>exact "
                                                 "%{x:.4g}<br>AtP %{y:.4g}<extra></extra>"))
    low = float(min(table["exact"].min(), table["atp"].min()))
    high = float(max(table["exact"].max(), table["atp"].max()))
    traces.append(go.Scatter(x=[low, high], y=[low, high], mode="lines", name="AtP = exact",
                             line=dict(color="#999999", dash="dot")))
    return go.Figure(traces, layout("Attribution patching against exact patching (restored share per pair and head)",
                                    420, legend="right", xaxis=dict(title="exact patch"),
                                    yaxis=dict(title="AtP estimate")))


def composition_heatmap(table: pd.DataFrame, kind: str) -> go.Figure:
    """Senders × receivers of one composition kind: the score over the random baseline's 95 % quantile."""
    part = table[table["kind"] == kind]
    grid = part.pivot_table(index="sender", columns="receiver", values="score", sort=False)
    q95 = part.pivot_table(index="sender", columns="receiver", values="random_q95", sort=False)
    ratio = (grid / q95).reindex_like(grid)
    return go.Figure([go.Heatmap(z=ratio.to_numpy(), x=list(grid.columns), y=list(grid.index), colorscale="RdBu",
                                 zmid=1.0, customdata=grid.to_numpy(), colorbar=dict(title="score / q95"),
                                 hovertemplate="%{y} → %{x}<br>score %{customdata:.4f}<br>over the random 95 % "
                                               "quantile ×%{z:.2f}<extra></extra>")],
                     layout(f"{kind}-composition: score over random matrices' 95 % quantile (above 1: beyond "
                            "chance)", 140 + 18 * len(grid.index), legend=False, yaxis=dict(autorange="reversed")))


def path_figure(table: pd.DataFrame) -> go.Figure:
    """The forecast change per horizon step along the chosen path, with its interval."""
    traces = []
    for i, ((sender, receiver), part) in enumerate(table.groupby(["sender", "receiver"], sort=False)):
        colour = SITE_COLOURS[i % len(SITE_COLOURS)]
        traces.append(go.Scatter(x=part["step"], y=part["delta"], mode="lines+markers", name=f"{sender} → {receiver}",
                                 line=dict(color=colour),
                                 error_y=dict(type="data", symmetric=False, array=part["high"] - part["delta"],
                                              arrayminus=part["delta"] - part["low"], color=colour)))
    return go.Figure(traces, layout("Path patching: the forecast change per horizon step (standardised, 95 % "
                                    "interval over pairs)", 360, xaxis=dict(title="horizon step"),
                                    yaxis=dict(title="change")))
