"""The Query/key map screen's cached calls: the map of one site and head, the points drawn, a window's rows.

Each lives in a `ui.lru.SharedLRU`: shared read-only by every session, and a hit costs nothing (a map of 256
windows at seq_len 1440 holds 737,280 points; `st.cache_data` unpickled a ~45 MB copy on every rerun)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.instruments.counterfactual import Counterfactual, counterfactual
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.instruments.qk_map import QKMap, qk_map
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU
from informer_lab.ui.qk_map.tables import drawn_points

_MAPS: SharedLRU[QKMap] = SharedLRU(6)
_DRAWN: SharedLRU[pd.DataFrame] = SharedLRU(6)
_ROWS: SharedLRU[Counterfactual] = SharedLRU(16)


def the_map(model_key: str, data_key: str, split: str, site: str, head: int, windows: int, seed: int,
            normalise: bool, _checkpoint: Checkpoint, _prepared: PreparedData) -> QKMap:
    def make() -> QKMap:
        with st.spinner("Recording the queries and keys of every window and projecting them…"), one_thread():
            return qk_map(_checkpoint.model, _prepared, split, site, head, windows=windows, seed=seed,
                          normalise=normalise)
    return _MAPS.get_or_make((model_key, data_key, split, site, head, windows, seed, normalise), make)


def points(map_key: tuple, the_map: QKMap, seed: int) -> pd.DataFrame:
    """The points drawn of `the_map` (identified by `map_key`, the_map's arguments): `tables.drawn_points`."""
    return _DRAWN.get_or_make((*map_key, seed), lambda: drawn_points(the_map, seed))


def window_rows(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
                _prepared: PreparedData) -> Counterfactual:
    """One window run as it is (the "none" edit records both runs identically): its sites' rows and selections."""
    def make() -> Counterfactual:
        with st.spinner("Recording the window's attention rows…"), one_thread():
            return counterfactual(_checkpoint.model, _prepared, split, window, "none", seed=seed)
    return _ROWS.get_or_make((model_key, data_key, split, window, seed), make)
