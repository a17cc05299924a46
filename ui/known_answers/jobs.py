"""The Known answers screen's background jobs: the self-test and the attention baselines, each once per key (shared
by every tab asking the same question), in a thread that never calls Streamlit."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.heads.faithfulness import attention_baselines
from informer_lab.analysis.planted.selftest import self_test
from informer_lab.analysis.planted.synth import Answer
from informer_lab.ui.jobs import PhaseJob


@st.cache_resource(max_entries=16, show_spinner=False)
def self_test_job(model_key: str, data_key: str, answer_digest: str, seed: int, ig_windows: int,
                  _checkpoint: Checkpoint, _prepared: PreparedData, _frame: SeriesFrame,
                  _answer: Answer) -> PhaseJob:
    return PhaseJob("self-test", lambda say: self_test(_checkpoint.model, _prepared, _frame, _answer, seed=seed,
                                                       ig_windows=ig_windows, progress=say)).start()


@st.cache_resource(max_entries=16, show_spinner=False)
def baselines_job(model_key: str, data_key: str, seed: int, windows: int, draws: int, key_seeds: int,
                  _checkpoint: Checkpoint, _prepared: PreparedData) -> PhaseJob:
    def compute(say):
        return attention_baselines(_checkpoint.model, _prepared, seed=seed, max_windows=windows, draws=draws,
                                   key_seeds=key_seeds, progress=lambda done, total: say(f"pass {done} of {total}"))
    return PhaseJob("uniform and permuted rows", compute).start()
