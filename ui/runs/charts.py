"""Figures of the Runs screen: every chosen run's training and validation curves on one chart."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import layout

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]


def curves_figure(curves: pd.DataFrame, title: str = "Training (dotted) and validation (solid) loss per epoch"
                  ) -> go.Figure:
    """One colour per run; validation solid, training dotted; standardised MSE on a log axis (losses of different
    runs differ by orders of magnitude)."""
    traces = []
    for i, (run, part) in enumerate(curves.groupby("run", sort=False)):
        colour = COLOURS[i % len(COLOURS)]
        for split, dash in (("val", "solid"), ("train", "dot")):
            rows = part[part["split"] == split].sort_values("epoch")
            if rows.empty:
                continue
            traces.append(go.Scatter(
                x=rows["epoch"], y=rows["loss"], mode="lines+markers", name=f"{run} · {split}",
                legendgroup=run, line=dict(color=colour, dash=dash), marker=dict(size=5),
                hovertemplate=f"{run}, {split}<br>epoch %{{x}}: %{{y:.4g}}<extra></extra>"))
    return go.Figure(traces, layout(title, 420, legend="right", xaxis=dict(title="epoch", dtick=1),
                                    yaxis=dict(title="loss (standardised MSE)", type="log")))
