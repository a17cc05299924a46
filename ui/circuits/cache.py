"""The Circuits screen's computations, kept in `ui.lru.SharedLRU`s keyed by model, data and the choices: the
composition scores of a model (weights only), AtP against exact patching on pairs of windows, path patching."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_COMPOSITION: SharedLRU = SharedLRU(8)
_ATP: SharedLRU = SharedLRU(8)
_PATHS: SharedLRU = SharedLRU(16)


def composition(model_key: str, seed: int, _checkpoint: Checkpoint):
    from informer_lab.analysis.circuits.composition import composition_scores

    def make():
        with st.spinner("Composition scores and their random baselines…"), one_thread():
            return composition_scores(_checkpoint.model, seed=seed)
    return _COMPOSITION.get_or_make((model_key, seed), make)


def atp(model_key: str, data_key: str, split: str, pairs: int, seed: int, _checkpoint: Checkpoint,
        _prepared: PreparedData):
    from informer_lab.analysis.circuits.attribution import atp_vs_exact

    def make():
        with st.spinner(f"AtP and exact patching on {pairs} pairs of windows…"), one_thread():
            return atp_vs_exact(_checkpoint.model, _prepared, split, pairs=pairs, seed=seed)
    return _ATP.get_or_make((model_key, data_key, split, pairs, seed), make)


def atp_done(model_key: str, data_key: str, split: str, pairs: int, seed: int):
    return _ATP.get((model_key, data_key, split, pairs, seed))


def path(model_key: str, data_key: str, split: str, sender: str, receivers: tuple, pairs: int, seed: int,
         _checkpoint: Checkpoint, _prepared: PreparedData):
    from informer_lab.analysis.circuits.paths import path_patching

    def make():
        with st.spinner(f"Path patching on {pairs} pairs of windows…"), one_thread():
            return path_patching(_checkpoint.model, _prepared, split, sender, list(receivers), pairs=pairs,
                                 seed=seed)
    return _PATHS.get_or_make((model_key, data_key, split, sender, receivers, pairs, seed), make)
