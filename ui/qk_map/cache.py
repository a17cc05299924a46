"""The Query/key map screen's cached calls: the map of one site and head, and one window's attention rows."""
from __future__ import annotations

import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.counterfactual import Counterfactual, counterfactual
from analysis.data import PreparedData
from analysis.qk_map import QKMap, qk_map


@st.cache_data(max_entries=8, show_spinner="Recording the queries and keys of every window and projecting them…")
def the_map(model_key: str, data_key: str, split: str, site: str, head: int, windows: int, seed: int,
            normalise: bool, _checkpoint: Checkpoint, _prepared: PreparedData) -> QKMap:
    return qk_map(_checkpoint.model, _prepared, split, site, head, windows=windows, seed=seed, normalise=normalise)


@st.cache_data(max_entries=16, show_spinner="Recording the window's attention rows…")
def window_rows(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
                _prepared: PreparedData) -> Counterfactual:
    """One window run as it is (the "none" edit records both runs identically): its sites' rows and selections."""
    return counterfactual(_checkpoint.model, _prepared, split, window, "none", seed=seed)
