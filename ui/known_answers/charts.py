"""The Known answers screen's figures."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from informer_lab.analysis.heads.faithfulness import Faithfulness
from informer_lab.ui import charts


def baselines_figure(result: Faithfulness) -> go.Figure:
    """Per head: the forecast change under uniform and permuted rows (95 % intervals), and the key-sample floor."""
    t = result.table
    traces = []
    for name, column, symbol in (("uniform rows", "uniform_change", "circle"),
                                 ("permuted rows (median draw)", "permuted_change", "diamond")):
        est = t[column].to_numpy()
        traces.append(go.Scatter(
            x=t["label"], y=est, mode="markers", name=name, marker=dict(symbol=symbol, size=9),
            error_y=dict(type="data", symmetric=False, array=np.maximum(t[f"{column}_hi"].to_numpy() - est, 0),
                         arrayminus=np.maximum(est - t[f"{column}_lo"].to_numpy(), 0))))
    traces.append(go.Scatter(x=t["label"], y=np.full(len(t), result.floor_hi), mode="lines", name="key-sample floor "
                             "(upper bound)", line=dict(dash="dash", color="grey")))
    layout = charts.layout(title="Forecast change when a head's rows are replaced (mean squared, standardised)",
                           height=420, yaxis=dict(type="log", title="mean squared change"))
    return go.Figure(traces, layout)
