"""Figures of the Attribution screen: the time × feature map and the per-step totals."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import DIVERGING, TRUTH, layout


def attribution_heatmap(z: np.ndarray, times: pd.Index, features: Sequence[str], title: str,
                        target_time=None) -> go.Figure:
    """Attributions, time (x) × input feature (y), on a diverging scale centred at 0."""
    limit = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() and np.nanmax(np.abs(z)) > 0 else 1.0
    heatmap = go.Heatmap(
        z=z, x=pd.DatetimeIndex(times), y=list(features), colorscale=DIVERGING, zmid=0, zmin=-limit, zmax=limit,
        colorbar=dict(title=dict(text="attribution"), thickness=12), ygap=2,
        hovertemplate="%{y} at %{x}<br>attribution %{z:.4g}<extra></extra>")
    return go.Figure([heatmap], layout(title, 150 + 40 * len(features), legend=False,
                                       xaxis=dict(title=dict(text="encoder input timestamp")),
                                       yaxis=dict(autorange="reversed")))


def attribution_time_figure(z: np.ndarray, times: pd.Index, series: pd.Series | None, column: str,
                            title: str) -> go.Figure:
    """Σ over features of the attribution per input step (bars), and the target column's input (line)."""
    total = np.nansum(z, axis=0)
    traces = [go.Bar(x=pd.DatetimeIndex(times), y=total, name="Σ attribution over features (red +, blue −)",
                     marker_color=np.where(total >= 0, "#b2182b", "#2166ac"), showlegend=False,
                     hovertemplate="%{x}<br>Σ attribution %{y:.4g}<extra></extra>")]
    if series is not None:
        traces.append(go.Scatter(x=series.index, y=series.to_numpy(), mode="lines", name=f"{column} (input)",
                                 line=dict(color=TRUTH, width=1.5), yaxis="y2"))
    # A second y axis on the right for the series (as make_subplots' secondary_y, without its update chain).
    return go.Figure(traces, layout(
        title, 320, xaxis=dict(domain=[0, 0.94]), yaxis=dict(title=dict(text="Σ attribution (red +, blue −)")),
        yaxis2=dict(title=dict(text=column), overlaying="y", side="right", anchor="x", showgrid=False)))
