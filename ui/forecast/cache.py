"""The Forecast screen's cached calls: the pred_len steps after the last row, and the test errors.

`test_errors` lives in a `ui.lru.SharedLRU` (shared by every session, free to draw its progress bar on a miss); the
page asks `known_test_errors` first, so a long scoring starts only on its button (or when it is short)."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.compare.comparison import headline_errors
from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.learning.forecasting import forecast_future
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU
from informer_lab.ui.second_model import SECOND

_ERRORS: SharedLRU[pd.DataFrame] = SharedLRU(32)


@st.cache_data(max_entries=32, show_spinner="Forecasting…")
def future_forecast(model_key: str, data_key: str, seed: int, _checkpoint: Checkpoint,
                    _frame: SeriesFrame) -> pd.DataFrame:
    with one_thread():
        return forecast_future(_checkpoint, _frame, seed=seed)


def known_test_errors(key: tuple) -> pd.DataFrame | None:
    """The test errors of `test_errors`'s key when they have been computed (by any tab), else None."""
    return _ERRORS.get(key)


def test_errors(key: tuple, checkpoint: Checkpoint, prepared: PreparedData, second: np.ndarray | None,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """MSE / MAE of the model, the last value and the seasonal naive forecast on the test windows of `prepared`;
    with `second` (a second model's forecasts on these windows, in this model's scale) that model's too, its
    delta_mse paired against this one. key: (model key, data key, seed, second model's key, windows scored)."""
    others = {SECOND: second} if second is not None else None

    def make() -> pd.DataFrame:
        with one_thread():
            return headline_errors(checkpoint.model, prepared, split="test", seed=key[2], others=others,
                                   progress=progress)
    return _ERRORS.get_or_make(key, make)
