"""Activation patching: which heads carry what makes a clean window's forecast differ from a corrupted one.

`analysis.instruments.patching.activation_patching` runs clean window A and corrupted input B (another window, or A with an
edit) under one key sample, then B again with one head's per-head context taken from A, for every head in one
batched pass, and reports the share of the forecast difference each patch restores per horizon step.
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.instruments.patching import PATCH_POINTS
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.patching import cache, charts, tables
from informer_lab.ui.tables import file_stem

POINTS = {"heads": "each head's context (one at a time, then all at once)",
          "embeddings": "both embedded inputs (a check: gives A exactly)",
          "memory": "the encoder output and the decoder input (a check: gives A exactly)"}

st.title("Activation patching")
st.caption("Run a clean window **A** and a corrupted input **B**, then run B again with one head's context (after "
           "the lazy fill, where a head mask acts) taken from A. *Restored* per horizon step = the patch's effect "
           "along the direction from B's forecast to A's, as a share of that direction: 0 is B, 1 is A. All runs "
           "share one key sample, so the patch is the only difference.")
evidence.note('patching')

model, data, prepared, seed, checkpoint, config = state.require_page()
# RevIN and per-window scaling map the forecast back with B's own statistics, a path around every hook site: there a
# patch of the embeddings or the memory gives A's normalised forecast at B's level, not A.
rescaled = bool(getattr(config, "revin", False)) or getattr(config, "instance_scaling", "none") != "none"
if rescaled:
    POINTS = {**POINTS, "embeddings": "both embedded inputs", "memory": "the encoder output and the decoder input"}

c = st.columns([1, 2.4, 1.2, 2.4], gap="medium", vertical_alignment="bottom")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="pt_split", persist_state="session")
n = state.require_windows(prepared, data, split)
clean = state.window_slider(c[1], n, split, "pt_clean", state.forecast_starts(prepared, split, n))
how = c[2].radio("B is", ["another window", "A edited"], key="pt_how", persist_state="session")
corrupt, edit = None, None
if how == "another window":
    corrupt = int(c[3].number_input(f"Window B (0 … {n - 1})", 0, n - 1, min(n - 1, clean + config.seq_len),
                                    key=f"pt_corrupt_{split}", persist_state="session"))
else:
    edit = c[3].text_input("Edit of A (as in the Counterfactual editor's CLI form)",
                           f"spike:t={3 * config.seq_len // 4},size=3", key="pt_edit", persist_state="session",
                           help="spike:t=40,size=3 · shift:t=60,size=-1 · scale:factor=1.5 · trend:slope=0.1 · "
                                "zero:column=NAME · shuffle:column=NAME · paste:window=N,t=..,length=..")
point = st.radio("Patch", list(PATCH_POINTS), format_func=POINTS.get, horizontal=True, key="pt_point",
                 persist_state="session")
try:
    result = cache.patch(model.key, data.key, split, clean, corrupt, edit, point, seed, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The patching cannot be run: {err}")
    state.stop_page()

stem = f"patching-{file_stem(model.ref.name)}-{split}-A{clean}-B{result.corrupt_window}-" \
       f"{file_stem(result.corrupt_edit)}-{point}-seed{seed}"
st.caption(f"A: window {clean}; B: window {result.corrupt_window}" +
           (f" edited ({result.corrupt_edit})" if result.corrupt_edit != "none" else "") +
           f"; key-sample seed {seed}; standardised forecasts. Steps where A and B differ by less than "
           f"{result.min_gap:g} (RMS over columns) have no share (blank).")
z, labels, steps = tables.head_matrix(result)
widgets.chart(charts.restored_heatmap(z, labels, steps, "Share of the forecast difference restored, per patch and "
                                      "horizon step"), f"{stem}-heatmap", "pt_heatmap")
if point == "heads":
    distance = result.all_heads_distance
    st.markdown(f"**Patching every head at once does not give A**: its forecast stays "
                f"{distance:.2f} × ‖A − B‖ from A{' (it reaches A here)' if result.all_heads_reach_clean else ''}. "
                "The embeddings reach every layer through the residual connections, around the heads, so the "
                "heads' shares need not add up to 1. " +
                ("This model rescales its forecast by each window's own statistics (RevIN or per-window scaling), "
                 "a path around every hook site, so no patch point gives A exactly here." if rescaled else
                 "Patch the embeddings or the memory to check that the machinery itself restores A exactly."))
else:
    gap = float(abs(result.patched[0] - result.clean).max())
    why = ("not 0: this model maps its forecast back with B's own statistics (RevIN or per-window scaling), a path "
           "around every hook site" if rescaled else
           "0 up to float rounding: this point carries everything the forecast depends on")
    st.markdown(f"**{POINTS[point].split(' (')[0].capitalize()} from A**: the largest difference from A's forecast is "
                f"{gap:.2e} ({why}).")

left, right = st.columns([2, 3], gap="large")
with left:
    st.subheader("Ranking")
    widgets.table(tables.ranking(result), f"{stem}-ranking", "pt_ranking", height=360,
                  column_config={"restored": st.column_config.NumberColumn(format="%.3f"),
                                 "max_abs_effect": st.column_config.NumberColumn(format="%.4f")})
with right:
    targets = list(prepared.target_columns)
    pick = st.columns(2)
    chosen = pick[0].selectbox("Patch", range(len(labels)), format_func=lambda i: labels[i], key="pt_patch")
    column = pick[1].selectbox("Column", targets, index=len(targets) - 1, key="pt_column") \
        if len(targets) > 1 else targets[0]
    rows = tables.forecasts(result, int(chosen), targets, column)
    widgets.chart(charts.forecast_figure(rows, labels[int(chosen)], column, f"{column}: A, B and B patched"),
                  f"{stem}-{column}-forecasts", "pt_forecast")
widgets.csv_download(result.table, f"{stem}-table", "pt_table", "Download restored share per patch and step (CSV)")
