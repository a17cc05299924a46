"""The sidebar shared by every page: the active model, the analysis seed, and running training jobs.

It loads the active model, and with it torch; until some run of this process has loaded the model stack,
lab.py draws `ui.deferred.draw_sidebar` instead (the cold start).
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.model import pick_device

from . import screen_report, state, widgets
from .jobs import TrainJob
from .tables import config_rows

DEVICE_NAMES = {"cuda": "CUDA (training steps in bf16, every analysis in float32)",
                "mps": "MPS (training steps in fp16, every analysis in float32)", "cpu": "CPU"}


def adopt(job: TrainJob) -> bool:
    """Make a finished user run the tab's active model (once). True when the app must rerun."""
    if job.adopted or job.status not in ("done", "stopped"):
        return False
    job.adopted = True
    state.set_model(state.folder_ref(job.out))
    return True


def _user_job() -> TrainJob | None:
    return st.session_state.get(state.JOB_KEY)


def _draw_job(user: TrainJob | None) -> None:
    if user is not None and not user.adopted:
        widgets.job_progress(user.view())


@st.fragment(run_every=1.0)
def _live_job() -> None:
    user = _user_job()
    _draw_job(user)
    if user is None or user.view().finished:
        if user is not None:
            adopt(user)
        st.rerun()  # stop polling: the full run draws the final state


def draw() -> None:
    with st.sidebar:
        _draw_model()
        widgets.seed_input()
        _report_button()
        widgets.lab_home_caption()
        user = _user_job()
        if user is not None and not user.view().finished:
            _live_job()
        else:
            if user is not None and adopt(user):
                st.rerun()


def _report_button() -> None:
    """This screen as an HTML report, when it drew something and the model and data are at hand."""
    try:
        model, data = state.active_model(), state.active_data()
    except InformerLabError:
        return
    if model is not None:
        screen_report.download_button(model, data, state.seed())


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

