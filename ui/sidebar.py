"""The sidebar shared by every page: the active model, the analysis seed, and running training jobs.

It loads the active model, and with it torch; until some run of this process has loaded the model stack,
informer_lab.py draws `ui.deferred.draw_sidebar` instead (the cold start).
"""
from __future__ import annotations

import streamlit as st

from analysis.errors import InformerLabError
from model import pick_device

from . import cache, settings, state, widgets
from .jobs import TrainJob
from .tables import config_rows

DEVICE_NAMES = {"cuda": "CUDA", "mps": "MPS", "cpu": "CPU"}


def sample_job() -> TrainJob | None:
    """The first-start job while runs/sample has no checkpoint (started once per process), else None."""
    runs = settings.runs_dir()
    manifest = runs / settings.SAMPLE_RUN / "manifest.json"
    if manifest.is_file():
        return None
    job = cache.sample_training(str(runs), settings.quick_train())
    if job.status in ("done", "stopped"):
        if manifest.is_file():  # it finished between the two checks
            return None
        cache.sample_training.clear()  # it finished, yet the folder is gone (deleted since): train again
        job = cache.sample_training(str(runs), settings.quick_train())
    return job


def adopt(job: TrainJob) -> bool:
    """Make a finished user run the tab's active model (once). True when the app must rerun."""
    if job.adopted or job.status not in ("done", "stopped"):
        return False
    job.adopted = True
    state.set_model(state.folder_ref(job.out))
    return True


def _user_job() -> TrainJob | None:
    return st.session_state.get(state.JOB_KEY)


def _draw_jobs(sample: TrainJob | None, user: TrainJob | None) -> None:
    if sample is not None:
        st.markdown("**First start:** training the sample model on `sample.csv`")
        widgets.job_progress(sample.view())
        if sample.status == "failed" and st.button("Retry", key="retry_sample"):
            cache.sample_training.clear()
            st.rerun()
    if user is not None and not user.adopted:
        widgets.job_progress(user.view())


@st.fragment(run_every=1.0)
def _live_jobs() -> None:
    sample, user = sample_job(), _user_job()
    _draw_jobs(sample, user)
    sample_finished = sample is None or sample.view().finished
    user_finished = user is None or user.view().finished
    if user is not None and user_finished and adopt(user):
        st.rerun()
    if sample_finished and user_finished:
        st.rerun()  # stop polling: the full run draws the final state


def draw() -> None:
    with st.sidebar:
        _draw_model()
        widgets.seed_input()
        sample, user = sample_job(), _user_job()
        if (sample and not sample.view().finished) or (user and not user.view().finished):
            _live_jobs()
        else:
            if user is not None and adopt(user):
                st.rerun()
            _draw_jobs(sample, None)


def _draw_model() -> None:
    device = pick_device()
    st.markdown(f"**Device:** {DEVICE_NAMES.get(device.type, device.type)}")
    try:
        model = state.active_model()
    except InformerLabError as err:
        st.error(str(err))
        return
    if model is None:
        st.markdown("**Model:** none yet")
        return
    config, schema = model.checkpoint.config, model.checkpoint.schema
    st.markdown(widgets.model_line(model.ref))
    st.caption("  \n".join(f"{label}: {value}" for label, value in config_rows(config, schema)))
    st.caption(f"active data: {state.data_ref().name}")

