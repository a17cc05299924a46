"""Above every analysis page: the model's test MSE beside seasonal naive and the linear baseline, and a
plain warning when the model is not better than one of them (analysis.compare.verdict).

Once per (model, data) for the whole server, in a background thread (`CheckJob`) on at most
analysis.compare.verdict.MAX_WINDOWS test windows (and ROWS input rows), so it is cheap at long inputs. The page never waits
for it: `state.require_page` calls `draw`, which starts it and shows "checking…" in a fragment polled every second,
then the verdict once the job has it.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.compare.baselines import LinearBaseline
from informer_lab.analysis.compare.verdict import BaselineCheck, check_against_baselines, chosen_windows
from informer_lab.analysis.learning.windows import WindowDataset
from informer_lab.ui.cache import linear_baseline
from informer_lab.ui.compute import one_thread
from informer_lab.ui.jobs import BackgroundJob
from informer_lab.ui.lru import SharedLRU

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


@st.fragment(run_every=1.0)
def _banner(model_key: str, data_key: str) -> None:
    """The check's progress, then its verdict: a fragment polled every second, each run a moment long. (A parallel
    fragment that waited for the job in a loop held the page's run open until it ended: Streamlit joins parallel
    fragments before a run finishes, so at seq_len 5760 a user's first click waited 20-100 s for the linear fit.)
    After the verdict it goes on drawing it, at the same small cost, until the page next reruns whole."""
    job = _JOBS.get((model_key, data_key))
    with st.container(key="model_check"):  # keyed: a browser test tells this fragment's runs from the page's own
        if job is None:  # evicted by other models' checks: the next visit starts it again
            return
        if job.status == "running":
            st.caption(f":material/hourglass_top: Checking this model against seasonal naive and the linear "
                       f"baseline on {job.windows:,} test windows… ({job.seconds:.0f} s)")
        else:
            draw_result(job)


def draw(model_key: str, data_key: str, checkpoint: Checkpoint, prepared: PreparedData) -> None:
    """The banner. Cheap when the check is known (drawn at once); else the check starts in the background and a
    polling fragment shows it, the page never waiting."""
    job = _JOBS.get((model_key, data_key))
    if job is not None and job.status != "running":
        draw_result(job)
        return
    job_for(model_key, data_key, checkpoint, prepared)
    _banner(model_key, data_key)
