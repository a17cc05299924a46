"""The Compare screen's cached calls.

`comparison` is an `st.cache_resource`: `analysis.comparison.Comparison` holds its forecasts in a
read-only mapping (not picklable, so not `st.cache_data`) of arrays flagged read-only, so sharing the
one object between sessions is safe.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.comparison import Comparison, compare_forecasts, window_overlay
from analysis.data import PreparedData
from model import Informer
from ui.second_model import SECOND


@st.cache_resource(max_entries=8, show_spinner="Forecasting every window with each model and baseline…")
def comparison(model_key: str, data_key: str, split: str, seed: int, twin_key: str | None, second_key: str | None,
               _checkpoint: Checkpoint, _prepared: PreparedData, _twin: Informer | None,
               _second: np.ndarray | None) -> Comparison:
    """`twin_key` identifies `_twin` (a full-attention model trained in this tab), None without one;
    `second_key` identifies `_second`, a second checkpoint's forecasts on these windows in this model's scale."""
    others = {SECOND: _second} if _second is not None else None
    return compare_forecasts(_checkpoint.model, _prepared, full_model=_twin, seed=seed, split=split, others=others)


@st.cache_data(max_entries=64, show_spinner=False)
def overlay(model_key: str, data_key: str, split: str, seed: int, twin_key: str | None, second_key: str | None,
            window: int,
            _comparison: Comparison, _prepared: PreparedData) -> pd.DataFrame:
    """One window of `comparison` (identified by the keys before `window`) in original units, long format."""
    return window_overlay(_comparison, _prepared, window)
