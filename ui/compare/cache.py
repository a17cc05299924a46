"""The Compare screen's cached calls.

`comparison` is kept in a `ui.lru.SharedLRU` (shared by every session, as `st.cache_resource` would, but free to
draw its own progress bar on a miss): `analysis.compare.comparison.Comparison` holds its forecasts in a read-only
mapping of arrays flagged read-only, so sharing the one object between sessions is safe.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.compare.comparison import Comparison, compare_forecasts, window_overlay
from informer_lab.analysis.data import PreparedData
from informer_lab.model import Informer
from informer_lab.ui.cache import keep_linear_baseline, known_linear_baseline
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU
from informer_lab.ui.second_model import SECOND


WORKERS = max(1, min(4, os.cpu_count() or 1))  # threads the passes share (one torch thread each)
_COMPARISONS: SharedLRU[Comparison] = SharedLRU(8)


def known(key: tuple) -> bool:
    """Whether the comparison of `comparison`'s key (model_key … second_key) is kept (computed by any tab)."""
    return _COMPARISONS.get(key) is not None


def comparison(model_key: str, data_key: str, split: str, windows: int | None, seed: int, twin_key: str | None,
               second_key: str | None, _checkpoint: Checkpoint, _prepared: PreparedData, _twin: Informer | None,
               _second: np.ndarray | None, _progress=None) -> Comparison:
    """`_prepared`: the data cut to the first `windows` windows of the split (None: all); `twin_key` identifies
    `_twin` (a full-attention model trained in this tab), None without one; `second_key` identifies `_second`, a
    second checkpoint's forecasts on these windows in this model's scale; `_progress(fraction, text)`. The linear
    baseline, fitted on the train split (whatever the windows scored), is kept per model and data.

    The model passes and the linear fit share the machine's cores in threads (`analysis.learning.passes`), each on one
    torch thread (`ui.compute`)."""
    others = {SECOND: _second} if _second is not None else None
    key = (model_key, data_key, split, windows, seed, twin_key, second_key)

    def make() -> Comparison:
        linear = known_linear_baseline(model_key, data_key)  # the model check's, when it has fitted (or is fitting) it
        with one_thread():
            made = compare_forecasts(_checkpoint.model, _prepared, full_model=_twin, seed=seed, split=split,
                                     others=others, progress=_progress, workers=WORKERS, linear=linear)
        if linear is None:
            keep_linear_baseline(model_key, data_key, made.linear)
        return made
    return _COMPARISONS.get_or_make(key, make)


@st.cache_data(max_entries=64, show_spinner=False)
def overlay(model_key: str, data_key: str, split: str, windows: int | None, seed: int, twin_key: str | None,
            second_key: str | None, window: int,
            _comparison: Comparison, _prepared: PreparedData) -> pd.DataFrame:
    """One window of `comparison` (identified by the keys before `window`) in original units, long format."""
    return window_overlay(_comparison, _prepared, window)
