"""The Forecast screen's figure: recent history and the forecast."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.charts import FORECAST, TRUTH, layout, vline


def future_figure(history: pd.DataFrame, forecast: pd.DataFrame, time_column: str, column: str,
                  title: str) -> go.Figure:
    """Recent history of one column and its forecast. history: timestamp index, columns; forecast: forecast_future."""
    # Join the forecast to the last known point so the two lines read as one series.
    x = [history.index[-1], *forecast[time_column]]
    y = [history[column].iloc[-1], *forecast[column]]
    traces = [go.Scatter(x=history.index, y=history[column], mode="lines", name="history",
                         line=dict(color=TRUTH, width=1.5)),
              go.Scatter(x=x, y=y, mode="lines+markers", name="forecast", line=dict(color=FORECAST, width=2),
                         marker=dict(size=[0] + [5] * len(forecast)))]
    return go.Figure(traces, layout(title, 400, hovermode="x unified", shapes=[vline(history.index[-1])],
                                    yaxis=dict(title=dict(text=column))))
