"""The Variants screen's figures."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.analysis.instruments.variants import Variants
from informer_lab.ui import charts


def accuracy_figure(result: Variants) -> go.Figure:
    """ΔMSE against the model's own attention (95 % intervals) beside the share of full attention's weight kept."""
    t = result.table
    est = t["delta_mse"].to_numpy()
    traces = [
        go.Scatter(x=t["kind"], y=est, mode="markers", name="ΔMSE vs own attention", marker=dict(size=10),
                   error_y=dict(type="data", symmetric=False,
                                array=np.nan_to_num(np.maximum(t["delta_mse_hi"].to_numpy() - est, 0)),
                                arrayminus=np.nan_to_num(np.maximum(est - t["delta_mse_lo"].to_numpy(), 0)))),
        go.Bar(x=t["kind"], y=t["mass_kept"], name="mass kept (share of full attention's weight)", yaxis="y2",
               opacity=0.35, marker_color="#7f7f7f")]
    layout = charts.layout(title="Same weights, another attention: test ΔMSE and the attention weight each keeps",
                           height=440, yaxis=dict(title="ΔMSE (standardised)", zeroline=True),
                           yaxis2=dict(title="mass kept", overlaying="y", side="right", range=[0, 1.05],
                                       showgrid=False, tickmode="linear", tick0=0, dtick=0.2))
    return go.Figure(traces, layout)


def heads_figure(matrix: pd.DataFrame) -> go.Figure:
    """Per kind, site and head: the share of full attention's weight kept (a heatmap)."""
    trace = go.Heatmap(z=matrix.to_numpy(), x=list(matrix.columns), y=list(matrix.index), zmin=0, zmax=1,
                       colorscale="Viridis", colorbar=dict(title="mass kept"),
                       hovertemplate="%{y} · %{x}: %{z:.3f}<extra></extra>")
    layout = charts.layout(title="Share of full attention's weight kept, per site and head", legend=False,
                           height=max(320, 34 * len(matrix) + 140))
    return go.Figure([trace], layout)


def sweep_figure(sweep: pd.DataFrame) -> go.Figure:
    """Each kind's time per call over SDPA's, by length (log–log)."""
    traces = [go.Scatter(x=part["length"], y=part["ratio"], mode="lines+markers", name=kind)
              for kind, part in sweep.groupby("kind", sort=False)]
    layout = charts.layout(title="Time per call ÷ SDPA's (same process, interleaved rounds; below 1 is faster)",
                           height=420, xaxis=dict(type="log", title="sequence length L"),
                           yaxis=dict(type="log", title="× SDPA"), shapes=[charts.hline(1, dash="dash")])
    return go.Figure(traces, layout)
