"""The Features screen's background job: one site's dictionary trained and measured (analysis.features.run), once per
(model, data, site, settings, seed, concepts) for every tab, in a thread that never calls Streamlit."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.features.concepts import Concepts
from informer_lab.analysis.features.run import run_features, windows_for_length
from informer_lab.analysis.features.sae import SAESettings
from informer_lab.ui.jobs import PhaseJob


@st.cache_resource(max_entries=8, show_spinner=False)
def train_job(model_key: str, data_key: str, site: str, k: int, expansion: int, steps: int, seed: int,
              concepts_key: str, _checkpoint: Checkpoint, _prepared: PreparedData,
              _concepts: Concepts | None) -> PhaseJob:
    settings = SAESettings(k=k, expansion=expansion, steps=steps)
    windows = windows_for_length(_checkpoint.model.config.seq_len)
    return PhaseJob("dictionary", lambda say: run_features(_checkpoint.model, _prepared, site, settings, seed=seed,
                                                           concepts=_concepts, say=say, **windows)).start()
