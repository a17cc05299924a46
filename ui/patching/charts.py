"""Figures of the Activation patching screen: the heads × horizon heatmap and one patch's forecasts."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import DIVERGING, layout

CLEAN, CORRUPT, PATCHED = "#2ca02c", "#d62728", "#1f77b4"


def restored_heatmap(z: np.ndarray, labels: list[str], steps: list[int], title: str) -> go.Figure:
    """Restored share per patch (rows) and horizon step (columns): 0 is the corrupted forecast, 1 the clean one
    (colours clipped to −1 … 1, white at 0; the hover and the cells show the value)."""
    text = np.where(np.isnan(z), "", np.vectorize(lambda v: f"{v:.2f}")(np.nan_to_num(z)))
    cells = go.Heatmap(z=z, x=steps, y=labels, colorscale=DIVERGING, zmin=-1, zmax=1, ygap=1,
                       text=text, texttemplate="%{text}" if z.size <= 600 else None,
                       colorbar=dict(title=dict(text="restored"), thickness=12),
                       hovertemplate="%{y}, step %{x}: restored %{z:.3f}<extra></extra>")
    return go.Figure([cells], layout(title, max(320, 90 + 22 * len(labels)), legend=False,
                                     xaxis=dict(title=dict(text="horizon step"), dtick=1 if len(steps) <= 24 else None),
                                     yaxis=dict(autorange="reversed", type="category")))


def forecast_figure(rows: pd.DataFrame, label: str, column: str, title: str) -> go.Figure:
    traces = [go.Scatter(x=rows["step"], y=rows["clean"], mode="lines+markers", name="clean (A)",
                         line=dict(color=CLEAN, width=2)),
              go.Scatter(x=rows["step"], y=rows["corrupt"], mode="lines+markers", name="corrupted (B)",
                         line=dict(color=CORRUPT, width=2)),
              go.Scatter(x=rows["step"], y=rows["patched"], mode="lines+markers", name=f"B with {label} from A",
                         line=dict(color=PATCHED, width=2, dash="dash"))]
    return go.Figure(traces, layout(title, 360, hovermode="x unified",
                                    xaxis=dict(title=dict(text="horizon step")),
                                    yaxis=dict(title=dict(text=f"{column} (standardised)"))))
