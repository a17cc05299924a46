"""The Known answers screen's background jobs: the self-test and the attention baselines, each once per key (shared
by every tab asking the same question), in a thread that never calls Streamlit."""
from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from analysis.checkpoint import Checkpoint
from analysis.data import PreparedData, SeriesFrame
from analysis.faithfulness import attention_baselines
from analysis.selftest import self_test
from analysis.synth import Answer
from ui.compute import one_thread
from ui.jobs import BackgroundJob


class Job(BackgroundJob):
    """`compute(say)` in a thread; `say(phase)` reports what it is doing."""

    def __init__(self, title: str, compute: Callable[[Callable[[str], None]], Any]):
        super().__init__(f"known-answers-{title}")
        self.title = self.what = title
        self._compute = compute
        self.phase = "starting"
        self.result = None

    def _say(self, phase: str) -> None:
        with self._lock:
            self.phase = phase

    def work(self) -> None:
        with one_thread():
            result = self._compute(self._say)
        with self._lock:
            self.result, self.status = result, "done"

    def release(self) -> None:
        self._compute = None


@st.cache_resource(max_entries=16, show_spinner=False)
def self_test_job(model_key: str, data_key: str, answer_digest: str, seed: int, ig_windows: int,
                  _checkpoint: Checkpoint, _prepared: PreparedData, _frame: SeriesFrame, _answer: Answer) -> Job:
    return Job("self-test", lambda say: self_test(_checkpoint.model, _prepared, _frame, _answer, seed=seed,
                                                  ig_windows=ig_windows, progress=say)).start()


@st.cache_resource(max_entries=16, show_spinner=False)
def baselines_job(model_key: str, data_key: str, seed: int, windows: int, draws: int, key_seeds: int,
                  _checkpoint: Checkpoint, _prepared: PreparedData) -> Job:
    def compute(say):
        return attention_baselines(_checkpoint.model, _prepared, seed=seed, max_windows=windows, draws=draws,
                                   key_seeds=key_seeds, progress=lambda done, total: say(f"pass {done} of {total}"))
    return Job("uniform and permuted rows", compute).start()
