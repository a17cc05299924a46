"""The Forecast screen's cached call: the pred_len steps after the last row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.comparison import headline_errors
from analysis.data import PreparedData, SeriesFrame
from analysis.forecasting import forecast_future
from ui.second_model import SECOND


@st.cache_data(max_entries=32, show_spinner="Forecasting…")
def future_forecast(model_key: str, data_key: str, seed: int, _checkpoint: Checkpoint,
                    _frame: SeriesFrame) -> pd.DataFrame:
    return forecast_future(_checkpoint, _frame, seed=seed)


@st.cache_data(max_entries=32, show_spinner="Scoring the model and the naive forecasts on the test split…")
def test_errors(model_key: str, data_key: str, seed: int, second_key: str | None, _checkpoint: Checkpoint,
                _prepared: PreparedData, _second: np.ndarray | None) -> pd.DataFrame:
    """MSE / MAE of the model, the last value and the seasonal naive forecast on every test window; with
    `_second` (a second model's forecasts on these windows, in this model's scale; `second_key` names it) that
    model's too, its delta_mse paired against this one."""
    others = {SECOND: _second} if _second is not None else None
    return headline_errors(_checkpoint.model, _prepared, split="test", seed=seed, others=others)
