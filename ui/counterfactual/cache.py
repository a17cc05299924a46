"""The Counterfactual editor's cached call: one window run as it is and edited, under one key sample."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.counterfactual import Counterfactual, counterfactual
from analysis.data import PreparedData
from analysis.window_edits import Edit, parse_edit


@st.cache_data(max_entries=32, show_spinner="Running the window as it is and edited…")
def run(model_key: str, data_key: str, split: str, window: int, edit_text: str, table: pd.DataFrame | None,
        seed: int, _checkpoint: Checkpoint, _prepared: PreparedData) -> Counterfactual:
    """edit_text: the edit's CLI text ('table' for a hand edit, whose window is `table`)."""
    edit = Edit("table", table=table) if edit_text == "table" else parse_edit(edit_text)
    return counterfactual(_checkpoint.model, _prepared, split, window, edit, seed=seed)
