"""The Attribution screen's cached call: Integrated Gradients of one forecast value."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.instruments.attribution import Attribution, input_attribution
from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.ui.compute import one_thread


@st.cache_data(max_entries=64, show_spinner="Integrating gradients along the path from the baseline…")
def attribution(model_key: str, data_key: str, split: str, window: int, step: int, column: str, baseline: str,
                n_steps: int, attention: str | None, seed: int, _checkpoint: Checkpoint,
                _prepared: PreparedData) -> Attribution:
    with one_thread():
        return input_attribution(_checkpoint.model, _prepared, split, window, step=step, target_column=column,
                                 baseline=baseline, n_steps=n_steps, seed=seed, attention=attention)
