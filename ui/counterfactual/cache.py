"""The Counterfactual editor's cached call: one window run as it is and edited, under one key sample; kept in a
`ui.lru.SharedLRU` (shared read-only: a hit costs nothing, where `st.cache_data` unpickled both runs' rows)."""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.instruments.counterfactual import Counterfactual, counterfactual
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.instruments.window_edits import Edit, parse_edit
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_RUNS: SharedLRU[Counterfactual] = SharedLRU(32)


def run(model_key: str, data_key: str, split: str, window: int, edit_text: str, table: pd.DataFrame | None,
        seed: int, _checkpoint: Checkpoint, _prepared: PreparedData) -> Counterfactual:
    """edit_text: the edit's CLI text ('table' for a hand edit, whose window is `table`)."""
    edited = None if table is None else hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()

    def make() -> Counterfactual:
        edit = Edit("table", table=table) if edit_text == "table" else parse_edit(edit_text)
        with st.spinner("Running the window as it is and edited…"), one_thread():
            return counterfactual(_checkpoint.model, _prepared, split, window, edit, seed=seed)
    return _RUNS.get_or_make((model_key, data_key, split, window, edit_text, edited, seed), make)
