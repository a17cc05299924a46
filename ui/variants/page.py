"""Variants: the trained model's self-attention swapped for every other kind, same weights (analysis.instruments.variants): what
it would forecast, how much of full attention's weight each kind keeps, per head, and what a call costs against SDPA
(analysis.instruments.attention_cost). Both run in background threads behind their buttons, once per settings for every tab."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.instruments.attention_cost import LENGTHS
from informer_lab.analysis.instruments.variants import KINDS, LEARNED
from informer_lab.source import command
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.tables import file_stem
from informer_lab.ui.variants import charts, jobs, tables

st.title("Attention variants")
st.caption("The model's encoder and decoder self-attention replaced by each efficient attention of the Informer "
           "paper's comparison and the survey (LogSparse, the Sparse Transformer's strided and fixed patterns, "
           "Longformer windows, blockwise, local + memory-compressed, Reformer LSH, adaptive span), **same "
           "weights**, same test windows and key samples: what this model would forecast with it, and which share "
           "of full attention's weight the pairs it reads hold. Cross-attention keeps its own. To train with a "
           f"kind: `{command('train --attention KIND')}`; a study compares trained kinds over seeds "
           f"(`--grid attention=prob,logsparse,lsh`). CLI: `{command('variants …')}`.")
evidence.note('variants')
model, data, prepared, seed, checkpoint, config = state.require_page()

c = st.columns([3, 1, 1], vertical_alignment="bottom")
kinds = c[0].multiselect("Kinds", KINDS, default=list(KINDS), key="va_kinds")
windows = c[1].number_input("Windows", 8, 2048, 128, key="va_windows", help="Test windows, spread evenly")
run = c[2].button("Run every kind", type="primary", icon=":material/play_arrow:", key="va_run",
                  disabled=not kinds)
key = (model.key, data.key, seed, int(windows), tuple(kinds))
asked = st.session_state.setdefault("va_asked", [])
if run and key not in asked:
    asked.append(key)
stem = file_stem(data.ref.name)
if key in asked:
    result = widgets.phase_job_result(jobs.kinds_job(*key, checkpoint, prepared))
    if result is not None:
        st.markdown(f"The model's own attention (encoder / decoder self / cross): **{result.own}**.")
        widgets.chart(charts.accuracy_figure(result), f"{stem}-variants", "va_chart")
        widgets.table(tables.kinds_table(result), f"{stem}-variants", "va_table")
        if tables.missing_intervals(result):
            st.caption(tables.missing_intervals(result))
        matrix = tables.heads_matrix(result)
        widgets.chart(charts.heads_figure(matrix), f"{stem}-variants-heads", "va_heads_chart")
        st.caption(" · ".join(result.notes) + ". Learned parts a kind has when trained with it, absent in a swap: "
                   + "; ".join(f"{k}: {v}" for k, v in LEARNED.items()) + ".")
elif kinds:
    st.info("Press **Run every kind**: one pass over the windows per kind, one recorded pass of full attention, "
            "and one timed call of each kind.", icon=":material/play_circle:")

st.header("Cost against SDPA, L = 96 … 8192", divider="gray")
st.caption("One non-causal call on [1, H, L, D] random inputs at this model's heads and head width, one torch "
           "thread, each kind timed round by round with `scaled_dot_product_attention` in the same process; peak "
           "memory from a fresh child process per call.")
lengths = st.multiselect("Lengths", LENGTHS, default=list(LENGTHS), key="va_lengths")
sweep_kinds = tuple(k for k in kinds if k != "full")
sweep_key = (config.n_heads, config.head_dim, sweep_kinds, tuple(sorted(lengths)))
if st.button("Run the cost sweep", icon=":material/speed:", key="va_sweep", disabled=not (sweep_kinds and lengths)):
    st.session_state.setdefault("va_sweeps", []).append(sweep_key)
if sweep_key in st.session_state.get("va_sweeps", []):
    sweep = widgets.phase_job_result(jobs.sweep_job(*sweep_key))
    if sweep is not None:
        widgets.chart(charts.sweep_figure(sweep), f"{stem}-attention-cost", "va_sweep_chart")
        widgets.table(sweep.round(4), f"{stem}-attention-cost", "va_sweep_table")
