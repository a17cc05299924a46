"""Forecast page: pred_len steps after the last row, the table as forecast_future returns it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.data import load_csv
from analysis.forecasting import forecast_future
from tests.ui.helpers import FORECAST_PAGE, array, charts, table
from tests.conftest import SAMPLE_CSV


def test_forecast_table_chart_and_download(open_app, tiny_trained):
    at = open_app(FORECAST_PAGE)
    forecast = table(at)
    assert list(forecast.columns) == ["date", "temperature", "humidity", "price", "load"]
    assert len(forecast) == 12
    dates = pd.to_datetime(forecast["date"])
    assert dates.iloc[0] == pd.Timestamp("2024-12-31 00:00:00") and (dates.diff().dropna() == pd.Timedelta("1h")).all()
    expected = forecast_future(tiny_trained[0], load_csv(SAMPLE_CSV), seed=0)
    np.testing.assert_allclose(forecast[["temperature", "humidity", "price", "load"]],
                               expected[["temperature", "humidity", "price", "load"]], rtol=1e-5)
    figure = charts(at)[0]
    np.testing.assert_allclose(array(figure["data"][1]["y"])[1:], forecast["load"])
    assert len(array(figure["data"][0]["y"])) == 48  # the model's encoder window by default
    labels = [b.label for b in at.get("download_button")]
    assert "Download forecast (CSV)" in labels and "Download chart (HTML)" in labels


def test_plotted_column_and_history_length(open_app):
    at = open_app(FORECAST_PAGE)
    at.selectbox(key="fc_column").set_value("price").run()
    at.slider(key="fc_history").set_value(100).run()
    assert not at.exception
    figure = charts(at)[0]
    assert len(array(figure["data"][0]["y"])) == 100
    np.testing.assert_allclose(array(figure["data"][1]["y"])[1:], table(at)["price"])
