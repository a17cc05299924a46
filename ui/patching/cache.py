"""The Activation patching screen's cached call."""
from __future__ import annotations

import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.data import PreparedData
from analysis.patching import PatchResult, activation_patching


@st.cache_data(max_entries=16, show_spinner="Patching every head of the clean run into the corrupted one…")
def patch(model_key: str, data_key: str, split: str, clean: int, corrupt: int | None, corrupt_edit: str | None,
          point: str, seed: int, _checkpoint: Checkpoint, _prepared: PreparedData) -> PatchResult:
    return activation_patching(_checkpoint.model, _prepared, split, clean, corrupt, corrupt_edit=corrupt_edit,
                               seed=seed, patch=point)
