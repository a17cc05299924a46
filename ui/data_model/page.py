"""Data & model: choose the data, see how it parsed (and what a repair changed), train a model in the background,
or load one.

The data half (source.py, data_view.py) is torch-free: on a fresh server it draws before torch loads; the model
half (model_panel.py, training.py) waits for the rerun that loads the model stack (ui/deferred.py).
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.ui import deferred, state
from informer_lab.ui.data_model import data_view, source

st.title("Data & model")
st.caption("The data every page analyses, and the model it analyses it with. Both are per browser tab.")

# ============================================================================================ data
st.header("Data", divider="gray")
refusal = source.draw()
data = None
try:
    data = state.active_data()
except InformerLabError as err:
    st.error(str(err))
if data is not None:
    if refusal is not None:
        st.caption(f"Still showing **{data.ref.name}** (the refused file is not used).")
    data_view.draw(data.frame)

# ============================================================================================ model
# The model half of the page loads checkpoints, and with them torch (2–3 s on two cores). On the first run
# of a fresh server it waits for the rerun that loads the model stack once the browser has drawn the chart
# (ui/deferred.py).
st.header("Model", divider="gray")
if not deferred.model_stack_loaded():
    st.info("Loading PyTorch and the active model (once per server start)…", icon=":material/hourglass_top:")
    state.stop_page()

from informer_lab.ui.data_model import model_panel, training  # noqa: E402  (torch)

model_panel.draw()

# ============================================================================================ training
st.header("Train a new model", divider="gray")
training.draw(data, refusal)
