"""The Variants screen's background jobs: every kind on the same windows, and the cost sweep, each once per key
(shared by every tab asking the same question), in a thread that never calls Streamlit."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.instruments.attention_cost import cost_sweep
from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.instruments.variants import compare_kinds
from informer_lab.ui.jobs import PhaseJob


@st.cache_resource(max_entries=16, show_spinner=False)
def kinds_job(model_key: str, data_key: str, seed: int, windows: int, kinds: tuple[str, ...],
              _checkpoint: Checkpoint, _prepared: PreparedData) -> PhaseJob:
    def compute(say):
        return compare_kinds(_checkpoint.model, _prepared, kinds=kinds, seed=seed, max_windows=windows,
                             progress=lambda done, total: say(f"step {done} of {total}"))
    return PhaseJob("every kind, same weights", compute).start()


@st.cache_resource(max_entries=8, show_spinner=False)
def sweep_job(heads: int, head_dim: int, kinds: tuple[str, ...], lengths: tuple[int, ...]) -> PhaseJob:
    def compute(say):
        return cost_sweep(kinds, lengths=lengths, heads=heads, head_dim=head_dim, memory=True,
                          progress=lambda done, total: say(f"length {done} of {total}"))
    return PhaseJob("cost sweep", compute).start()
