"""The Features screen's cached calls on a trained dictionary, kept in `ui.lru.SharedLRU`s keyed by the dictionary's
key and the choices: a feature scaled or ablated (a forward pass per batch of test windows) and the heads writing it."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.features.effects import feature_heads, intervene
from informer_lab.analysis.features.run import FeatureRun
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_INTERVENTIONS: SharedLRU = SharedLRU(32)
_HEADS: SharedLRU = SharedLRU(32)
WINDOWS = 64
AUTO_ROWS = 20_000  # WINDOWS × seq_len up to which a feature's causal check runs as soon as the feature is shown


def intervention(key: tuple, feature: int, scale: float, _checkpoint: Checkpoint, _prepared: PreparedData,
                 _run: FeatureRun):
    def make():
        with st.spinner(f"The forecast with feature {feature} × {scale:g} on {WINDOWS} test windows…"), one_thread():
            return intervene(_checkpoint.model, _prepared, _run.trained.sae, _run.site, feature, scale=scale,
                             windows=WINDOWS, seed=_run.seed)
    return _INTERVENTIONS.get_or_make((*key, feature, scale), make)


def heads(key: tuple, feature: int, _checkpoint: Checkpoint, _prepared: PreparedData, _run: FeatureRun):
    def make():
        with st.spinner(f"Splitting feature {feature}'s pre-activation into the heads' writes…"), one_thread():
            return feature_heads(_checkpoint.model, _prepared, _run.trained.sae, _run.site, feature, windows=WINDOWS,
                                 seed=_run.seed)
    return _HEADS.get_or_make((*key, feature), make)
