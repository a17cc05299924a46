"""The Sparsity explorer's cached call: one window's report, computed once and sliced by every control."""
from __future__ import annotations

import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.data import PreparedData
from analysis.sparsity import SparsityReport, sparsity_report


@st.cache_data(max_entries=32, show_spinner="Recording every attention site and scoring exact vs sampled sparsity…")
def sparsity(model_key: str, data_key: str, split: str, window: int, seed: int, seeds: int,
             _checkpoint: Checkpoint, _prepared: PreparedData) -> SparsityReport:
    """Sampled vs exact sparsity of one window; the key sample of seeds seed … seed + seeds − 1."""
    return sparsity_report(_checkpoint.model, _prepared, split, [window], seed=seed, seeds=seeds)
