"""The Distilling pyramid screen's cached call: one window's pyramid report."""
from __future__ import annotations

import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.data import PreparedData
from analysis.pyramid import PyramidReport, pyramid_report


@st.cache_data(max_entries=32, show_spinner="Recording the encoder pyramid…")
def pyramid(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
            _prepared: PreparedData) -> PyramidReport:
    return pyramid_report(_checkpoint.model, _prepared, split, window, seed=seed)
