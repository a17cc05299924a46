"""The Forecast screen's cached call: the pred_len steps after the last row."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.data import SeriesFrame
from analysis.forecasting import forecast_future


@st.cache_data(max_entries=32, show_spinner="Forecasting…")
def future_forecast(model_key: str, data_key: str, seed: int, _checkpoint: Checkpoint,
                    _frame: SeriesFrame) -> pd.DataFrame:
    return forecast_future(_checkpoint, _frame, seed=seed)
