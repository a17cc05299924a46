"""The cached layer of the analysis pages (sparsity, pyramid, attribution, compare).

Same rules as `ui.cache`: keys are `model_key` / `data_key` plus the widget values passed in;
"_"-prefixed arguments are not hashed (each is fully identified by the key arguments next to it);
widgets are never read in here; the shared checkpoint is never mutated (seeds are per call).

Each report is computed once per (model, data, split, window, seed[, seeds]) and the pages slice it:
switching the layer, head, level or position shown never calls these functions with new arguments.

`comparison` is an `st.cache_resource`: `analysis.comparison.Comparison` holds its forecasts in a
read-only mapping (not picklable, so not `st.cache_data`) of arrays flagged read-only, so sharing the
one object between sessions is safe.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.attribution import Attribution, input_attribution
from analysis.checkpoint import Checkpoint
from analysis.comparison import Comparison, compare_forecasts, window_overlay
from analysis.data import PreparedData
from analysis.pyramid import PyramidReport, pyramid_report
from analysis.sparsity import SparsityReport, sparsity_report
from model import Informer


@st.cache_data(max_entries=32, show_spinner="Recording every attention site and scoring exact vs sampled sparsity…")
def sparsity(model_key: str, data_key: str, split: str, window: int, seed: int, seeds: int,
             _checkpoint: Checkpoint, _prepared: PreparedData) -> SparsityReport:
    """Sampled vs exact sparsity of one window; the key sample of seeds seed … seed + seeds − 1."""
    return sparsity_report(_checkpoint.model, _prepared, split, [window], seed=seed, seeds=seeds)


@st.cache_data(max_entries=32, show_spinner="Recording the encoder pyramid…")
def pyramid(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
            _prepared: PreparedData) -> PyramidReport:
    return pyramid_report(_checkpoint.model, _prepared, split, window, seed=seed)


@st.cache_data(max_entries=64, show_spinner="Integrating gradients along the path from the baseline…")
def attribution(model_key: str, data_key: str, split: str, window: int, step: int, column: str, baseline: str,
                n_steps: int, attention: str | None, seed: int, _checkpoint: Checkpoint,
                _prepared: PreparedData) -> Attribution:
    return input_attribution(_checkpoint.model, _prepared, split, window, step=step, target_column=column,
                             baseline=baseline, n_steps=n_steps, seed=seed, attention=attention)


@st.cache_resource(max_entries=8, show_spinner="Forecasting every window with each model and baseline…")
def comparison(model_key: str, data_key: str, split: str, seed: int, twin_key: str | None,
               _checkpoint: Checkpoint, _prepared: PreparedData, _twin: Informer | None) -> Comparison:
    """`twin_key` identifies `_twin` (a full-attention model trained in this tab), None without one."""
    return compare_forecasts(_checkpoint.model, _prepared, full_model=_twin, seed=seed, split=split)


@st.cache_data(max_entries=64, show_spinner=False)
def overlay(model_key: str, data_key: str, split: str, seed: int, twin_key: str | None, window: int,
            _comparison: Comparison, _prepared: PreparedData) -> pd.DataFrame:
    """One window of `comparison` (identified by the keys before `window`) in original units, long format."""
    return window_overlay(_comparison, _prepared, window)
