"""The Distilling pyramid screen's cached call: one window's pyramid report, kept in a `ui.lru.SharedLRU` (shared
read-only; a hit costs nothing, where `st.cache_data` unpickled a copy of every layer's rows on each rerun)."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
import pandas as pd

from informer_lab.analysis.attention.pyramid import PyramidReport, pyramid_report
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU
from informer_lab.ui.pyramid.tables import pyramid_cells

_REPORTS: SharedLRU[PyramidReport] = SharedLRU(32)
_CELLS: SharedLRU[pd.DataFrame] = SharedLRU(32)


def pyramid(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
            _prepared: PreparedData) -> PyramidReport:
    def make() -> PyramidReport:
        with st.spinner("Recording the encoder pyramid…"), one_thread():
            return pyramid_report(_checkpoint.model, _prepared, split, window, seed=seed)
    return _REPORTS.get_or_make((model_key, data_key, split, window, seed), make)


def cells(model_key: str, data_key: str, split: str, window: int, seed: int, report: PyramidReport,
          seq_len: int) -> pd.DataFrame:
    """The picture's cells of `report` (that window's, identified by the keys): `tables.pyramid_cells`, once."""
    return _CELLS.get_or_make((model_key, data_key, split, window, seed),
                              lambda: pyramid_cells(report.spans, report.norms, report.lengths, seq_len))
