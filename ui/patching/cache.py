"""The Activation patching screen's cached call, kept in a `ui.lru.SharedLRU` (shared read-only, no copies)."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.instruments.patching import PatchResult, activation_patching
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_RESULTS: SharedLRU[PatchResult] = SharedLRU(16)


def patch(model_key: str, data_key: str, split: str, clean: int, corrupt: int | None, corrupt_edit: str | None,
          point: str, seed: int, _checkpoint: Checkpoint, _prepared: PreparedData) -> PatchResult:
    def make() -> PatchResult:
        with st.spinner("Patching every head of the clean run into the corrupted one…"), one_thread():
            return activation_patching(_checkpoint.model, _prepared, split, clean, corrupt, corrupt_edit=corrupt_edit,
                                       seed=seed, patch=point)
    return _RESULTS.get_or_make((model_key, data_key, split, clean, corrupt, corrupt_edit, point, seed), make)
