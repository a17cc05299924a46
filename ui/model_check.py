"""Above every analysis page: the model's test MSE beside seasonal naive and the linear baseline (issue 27), and a
plain warning when the model is not better than one of them (analysis.compare.verdict).

Once per (model, data) for the whole server, in a background thread (`CheckJob`) on at most
analysis.compare.verdict.MAX_WINDOWS test windows (and ROWS input rows), so it is cheap at long inputs. The page never waits
for it: `state.require_page` calls `draw`, a parallel fragment (it runs beside the page's own script) that shows
"checking…" and the verdict once the job has it; a user's rerun meanwhile stops the wait at its next update.
"""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

from analysis.checkpoints.folder import Checkpoint
from analysis.data import PreparedData
from analysis.compare.baselines import LinearBaseline
from analysis.compare.verdict import BaselineCheck, check_against_baselines, chosen_windows
from analysis.learning.windows import WindowDataset
from ui.cache import linear_baseline
from ui.compute import one_thread
from ui.jobs import BackgroundJob
from ui.lru import SharedLRU

WAIT_SECONDS = 120.0  # the fragment waits this long at most; the job goes on, and the next visit shows it
SEED = 0  # key-sample seed of the check (fixed: one verdict per model and data)


class CheckJob(BackgroundJob):
    what = "the check against the baselines"

    def __init__(self, checkpoint: Checkpoint, prepared: PreparedData, linear: Callable[[], LinearBaseline]):
        super().__init__("model-check")
        self._inputs: tuple | None = (checkpoint, prepared, linear)
        self.windows = len(chosen_windows(len(WindowDataset(prepared, "test")), prepared.spec.seq_len))
        self.result: BaselineCheck | None = None

    def work(self) -> None:
        checkpoint, prepared, linear = self._inputs
        with one_thread():
            self.result = check_against_baselines(checkpoint.model, prepared, seed=SEED, linear=linear())
        self.status = "done"

    def release(self) -> None:
        self._inputs = None


_JOBS: SharedLRU[CheckJob] = SharedLRU(16)


def job_for(model_key: str, data_key: str, checkpoint: Checkpoint, prepared: PreparedData) -> CheckJob:
    """The check of this model on this data: started on first use, shared by every session."""
    fit = lambda: linear_baseline(model_key, data_key, prepared)  # noqa: E731  (shared with Compare)
    return _JOBS.get_or_make((model_key, data_key), lambda: CheckJob(checkpoint, prepared, fit).start())


def draw_result(job: CheckJob) -> None:
    if job.status == "failed":
        st.caption(f"The check against seasonal naive and the linear baseline failed: {job.error}")
        return
    check = job.result
    warning = check.warning()
    if warning is not None:
        st.warning(warning, icon=":material/warning:")
        st.caption(check.summary())
    else:
        st.caption(f":material/check_circle: Better than seasonal naive and the linear baseline. {check.summary()}")


@st.fragment(parallel=True)
def _banner(model_key: str, data_key: str, _checkpoint: Checkpoint, _prepared: PreparedData) -> None:
    job = job_for(model_key, data_key, _checkpoint, _prepared)
    slot = st.container(key="model_check").empty()  # keyed: a browser test tells this wait from the page's own run
    started = time.monotonic()
    while job.status == "running" and time.monotonic() - started < WAIT_SECONDS:
        waited = time.monotonic() - started
        slot.caption(f":material/hourglass_top: Checking this model against seasonal naive and the linear baseline "
                     f"on {job.windows:,} test windows… ({waited:.0f} s)")  # each update lets a rerun stop the wait
        time.sleep(0.5)
    with slot.container():
        if job.status == "running":
            st.caption("Still checking this model against the baselines; the verdict shows on the next visit.")
        else:
            draw_result(job)


def draw(model_key: str, data_key: str, checkpoint: Checkpoint, prepared: PreparedData) -> None:
    """The banner. Cheap when the check is known (drawn at once), else a wait beside the page."""
    job = _JOBS.get((model_key, data_key))
    if job is not None and job.status != "running":
        draw_result(job)
        return
    _banner(model_key, data_key, checkpoint, prepared)
