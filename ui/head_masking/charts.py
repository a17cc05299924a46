"""The Head masking screen's figure: one window's forecast with and without the mask."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import BASELINE, BETTER, HISTORY, MASKED, TRUTH, WORSE, hline, layout, recent, vline


def masking_figure(history: pd.DataFrame, rows: pd.DataFrame, column: str, title: str) -> go.Figure:
    """One target column of a masked window, two panels: left, the encoder history, truth, baseline and masked
    forecast (original units); right, per horizon step, |masked − truth| − |baseline − truth| (positive: the
    mask made it worse). history: timestamp, column, value (the encoder window); rows: the column's window_table.

    One figure, not two: the browser re-creates a chart whenever its figure changes (Streamlit gives a chart
    an identity derived from its spec), and each plotly chart costs a fixed ~0.1 s to create on two cores, so
    switching the column redraws one chart instead of two.
    """
    hist = recent(history[history["column"] == column], len(rows))
    colours = [WORSE if v > 0 else BETTER for v in rows["error_change"]]
    traces = [
        go.Scatter(x=hist["timestamp"], y=hist["value"], mode="lines", name="history (encoder input)",
                   line=dict(color=HISTORY, width=1.5)),
        go.Scatter(x=rows["timestamp"], y=rows["truth"], mode="lines+markers", name="truth",
                   line=dict(color=TRUTH, width=2), marker=dict(size=4)),
        go.Scatter(x=rows["timestamp"], y=rows["baseline"], mode="lines+markers", name="baseline (all heads on)",
                   line=dict(color=BASELINE, width=2), marker=dict(size=4)),
        go.Scatter(x=rows["timestamp"], y=rows["masked"], mode="lines+markers", name="masked",
                   line=dict(color=MASKED, width=2, dash="dash"), marker=dict(size=4)),
        go.Bar(x=rows["step"], y=rows["error_change"], marker_color=colours, showlegend=False, xaxis="x2",
               yaxis="y2", name="absolute error change", hovertemplate="step %{x}: %{y:.4g}<extra></extra>"),
    ]
    shapes = [hline(0, xref="x2 domain", yref="y2")]
    if len(rows):
        shapes.append(vline(rows["timestamp"].iloc[0]))
    # Two panels side by side: 60 % / 40 % of the width less an 8 % gap (as make_subplots' column_widths).
    return go.Figure(traces, layout(
        title, 420, hovermode="x unified", shapes=shapes,
        xaxis=dict(domain=[0, 0.552], anchor="y"), yaxis=dict(title=dict(text=column), anchor="x"),
        xaxis2=dict(domain=[0.632, 1], anchor="y2", title=dict(text="horizon step"),
                    dtick=1 if len(rows) <= 12 else None),
        yaxis2=dict(anchor="x2", title=dict(text=f"Δ |error| ({column})")),
        annotations=[dict(text="absolute error change per step (masked − baseline)", x=0.816, y=1, xref="paper",
                          yref="paper", xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=13))]))
