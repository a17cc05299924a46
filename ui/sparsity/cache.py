"""The Sparsity explorer's cached calls: one window's recording, then the parts of its report a view shows.

`recording` runs the window once (every site recorded, the key sample of the seed); `queries` scores one site exactly
(the site on screen), `agreement` one site over the key-sample seeds (the "Exact vs sampled" tab, or the grid when it
is coloured by agreement). Each lives in a `ui.lru.SharedLRU`: shared read-only by every session, a hit costs
nothing (no unpickled copy of a recording), a miss draws its spinner. `sparsity` (the whole report of
`analysis.attention.sparsity`) serves the side-by-side view, which compares every site of two models.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.attention.sparsity import SparsityReport, sparsity_report
from informer_lab.analysis.attention.sparsity_sites import WindowRecord, record_window, site_agreement, site_exact, site_queries
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_RECORDS: SharedLRU[WindowRecord] = SharedLRU(16)
_QUERIES: SharedLRU[pd.DataFrame] = SharedLRU(64)
_AGREEMENT: SharedLRU[pd.DataFrame] = SharedLRU(64)
_EXACT: SharedLRU[dict] = SharedLRU(8)


def _made(cache: SharedLRU, key: tuple, what: str, make):
    def compute():
        with st.spinner(what), one_thread():
            return make()
    return cache.get_or_make(key, compute)


def recording(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
              _prepared: PreparedData) -> WindowRecord:
    """One forward pass of the window with every attention site recorded (key sample: `seed`)."""
    return _made(_RECORDS, (model_key, data_key, split, window, seed), "Recording every attention site…",
                 lambda: record_window(_checkpoint.model, _prepared, split, window, seed=seed))


def exact(model_key: str, data_key: str, record: WindowRecord, site: str, _checkpoint: Checkpoint) -> dict:
    """The exact M of one site of `record` (the recording of model_key, data_key): scored once for both tabs (at
    seq_len 5760 a first layer's is 133 million scores)."""
    return _made(_EXACT, (model_key, data_key, record.split, record.window, record.seed, site),
                 f"Scoring the exact sparsity of {site}…", lambda: site_exact(_checkpoint.model, record, site))


def queries(model_key: str, data_key: str, record: WindowRecord, site: str, _checkpoint: Checkpoint,
            _prepared: PreparedData) -> pd.DataFrame:
    """The queries table of one site of `record`: exact M beside sampled M̄."""
    scored = exact(model_key, data_key, record, site, _checkpoint)
    return _made(_QUERIES, (model_key, data_key, record.split, record.window, record.seed, site),
                 f"Tabulating the queries of {site}…",
                 lambda: site_queries(_checkpoint.model, _prepared, record, site, exact=scored))


def agreement(model_key: str, data_key: str, record: WindowRecord, seeds: int, site: str,
              _checkpoint: Checkpoint, _prepared: PreparedData) -> pd.DataFrame:
    """Top-u agreement of one site of `record`'s window over key-sample seeds record.seed … + seeds − 1."""
    scored = exact(model_key, data_key, record, site, _checkpoint)
    return _made(_AGREEMENT, (model_key, data_key, record.split, record.window, record.seed, seeds, site),
                 f"Scoring {site} over {seeds} key-sample seeds…",
                 lambda: site_agreement(_checkpoint.model, _prepared, record.split, record.window, site,
                                        seed=record.seed, seeds=seeds, record=record, exact=scored))


@st.cache_data(max_entries=8, show_spinner="Recording every attention site and scoring exact vs sampled sparsity…")
def sparsity(model_key: str, data_key: str, split: str, window: int, seed: int, seeds: int,
             _checkpoint: Checkpoint, _prepared: PreparedData) -> SparsityReport:
    """The whole report of one window (every site; the key sample of seeds seed … seed + seeds − 1)."""
    with one_thread():
        return sparsity_report(_checkpoint.model, _prepared, split, [window], seed=seed, seeds=seeds)
