"""The Forecast screen's figure: recent history and the forecast."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import FORECAST, TRUTH, layout, thin, vline


SECOND_COLOUR = "#9467bd"


def future_figure(history: pd.DataFrame, forecast: pd.DataFrame, time_column: str, column: str,
                  title: str, second: tuple[str, pd.DataFrame] | None = None) -> go.Figure:
    """Recent history of one column and its forecast. history: timestamp index, columns; forecast: forecast_future.
    second: (name, its forecast_future table), drawn dashed beside the first."""
    # Join the forecast to the last known point so the two lines read as one series.
    x = [history.index[-1], *forecast[time_column]]
    y = [history[column].iloc[-1], *forecast[column]]
    drawn = thin(history[column])  # at most two points per pixel
    traces = [go.Scatter(x=drawn.index, y=drawn, mode="lines", name="history",
                         line=dict(color=TRUTH, width=1.5)),
              go.Scatter(x=x, y=y, mode="lines+markers", name="forecast", line=dict(color=FORECAST, width=2),
                         marker=dict(size=[0] + [5] * len(forecast)))]
    if second is not None and column in second[1].columns:
        name, other = second
        traces.append(go.Scatter(x=[history.index[-1], *other[time_column]],
                                 y=[history[column].iloc[-1], *other[column]], mode="lines+markers",
                                 name=f"{name} (second model)", line=dict(color=SECOND_COLOUR, width=2, dash="dash"),
                                 marker=dict(size=[0] + [5] * len(other), symbol="diamond")))
    return go.Figure(traces, layout(title, 400, hovermode="x unified", shapes=[vline(history.index[-1])],
                                    yaxis=dict(title=dict(text=column))))
