"""The Head masking screen's cached call: one window forecast with and without a mask."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.heads.masking import WindowForecast, head_mask, masked_window_forecast
from informer_lab.ui.cache import mean_contexts_for
from informer_lab.ui.compute import one_thread


@st.cache_data(max_entries=256, show_spinner="Running the masked forecast…")
def window_forecast(model_key: str, data_key: str, split: str, window: int, off: tuple[tuple[int, int], ...],
                    mode: str, seed: int, _checkpoint: Checkpoint, _prepared: PreparedData) -> WindowForecast:
    """Baseline and masked forecast of one window; `off` lists the (site index, head) pairs switched off."""
    model = _checkpoint.model
    with one_thread():
        means = mean_contexts_for(model_key, data_key, seed, _checkpoint, _prepared) if mode == "mean" and off \
            else None
        return masked_window_forecast(model, _prepared, split, window, head_mask(model, off, mode, means), seed=seed)
