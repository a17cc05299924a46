"""Counterfactual editor: edit one encoder window (a preset or by hand) and see both runs side by side.

`analysis.instruments.counterfactual.counterfactual` runs the window as it is and edited with the same key-sample seed, so
every difference is the edit's: the forecast, M̄ per query and head, the top-u sets (which queries entered and
left), and the attention rows. One window is cheap (tens of milliseconds), so the page runs on every change.
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.instruments.window_edits import window_frame
from informer_lab.source import command
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.charts import stamps
from informer_lab.ui.counterfactual import cache, charts, tables
from informer_lab.ui.tables import file_stem
from informer_lab.analysis.heads.names import head_name

st.title("Counterfactual editor")
st.caption("Edit the encoder window, then compare the model's run on the window as it is and edited, with the "
           "**same key sample**: every difference below is the edit's. Sizes are in units of the column's training "
           "standard deviation unless *absolute* is chosen. The decoder's known part is the end of the encoder "
           "window, so an edit there reaches the model twice, as it would in data.")
evidence.note('counterfactual')

model, data, prepared, seed, checkpoint, config = state.require_page()
columns = list(prepared.columns)
target = checkpoint.schema.spec.target
L = config.seq_len

c = st.columns([1, 4], gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="cf_split", persist_state="session")
n = state.require_windows(prepared, data, split)
window = state.window_slider(c[1], n, split, "cf", state.forecast_starts(prepared, split, n))

# ------------------------------------------------------------------------------------------ the edit
with st.container(border=True):
    p = st.columns([1.6, 1, 1, 1, 1.2], vertical_alignment="bottom")
    kind = p[0].selectbox("Edit", list(tables.PRESETS), format_func=tables.PRESETS.get, key="cf_kind",
                          persist_state="session")
    values: dict = {}
    default_column = columns.index(target) if target in columns else len(columns) - 1
    if kind in ("spike", "shift", "scale", "trend", "zero", "paste"):
        values["t"] = p[1].number_input("t (step in the window)", 0, L - 1, min(L - 1, 3 * L // 4), key="cf_t")
    if kind in ("spike", "shift"):
        values["size"] = p[2].number_input("size", value=3.0 if kind == "spike" else -1.0, step=0.5, key="cf_size")
    if kind == "scale":
        values["factor"] = p[2].number_input("factor", value=1.5, step=0.1, key="cf_factor")
    if kind == "trend":
        values["slope"] = p[2].number_input("slope per step", value=0.05, step=0.01, format="%.3f", key="cf_slope")
    if kind in ("spike", "shift", "scale", "trend", "zero", "shuffle"):
        values["column"] = p[3].selectbox("column", columns, index=default_column, key="cf_column")
    if kind in ("spike", "shift", "trend"):
        values["units"] = "abs" if p[4].toggle("absolute units", key="cf_abs") else None
    if kind == "shuffle":
        values["seed"] = int(p[1].number_input("shuffle seed", 0, 2**31 - 1, 0, key="cf_shuffle_seed"))
    if kind == "paste":
        values["window"] = int(p[2].number_input("from window", 0, n - 1, min(n - 1, window + L), key="cf_from"))
        values["length"] = int(p[3].number_input("rows", 1, L, min(L, 12), key="cf_length"))
        pasted = p[4].selectbox("column", ["every column", *columns], key="cf_paste_column")
        values["column"] = None if pasted == "every column" else pasted
    table = None
    if kind == "table":
        st.caption("Edit any cell of the encoder window below (original units); the edits apply as you leave a cell.")
        frame = window_frame(prepared, split, window)
        table = st.data_editor(frame, key=f"cf_table_{split}_{window}", hide_index=True, height=320,
                               disabled=[frame.columns[0]])
try:
    edit = tables.build_edit(kind, {k: (int(v) if k == "t" else v) for k, v in values.items()}) \
        if kind != "table" else None
    edit_text = edit.describe() if edit is not None else "table"
    result = cache.run(model.key, data.key, split, window, edit_text, table, seed, checkpoint, prepared)
except InformerLabError as err:
    st.error(f"The edit cannot be applied: {err}")
    state.stop_page()

stem = f"counterfactual-{file_stem(model.ref.name)}-{split}-w{window}-{file_stem(result.edit)}-seed{seed}"
moved = tables.moved_heads(result.selection)
changed_cells = int(result.inputs["changed"].sum())
m = st.columns(3)
m[0].metric("Input cells changed", f"{changed_cells:,}")
m[1].metric("Max |forecast change|", f"{result.max_abs_difference:.4g}", help="Original units, any column.")
m[2].metric("Heads whose top-u moved", f"{int((moved['jaccard'] < 1).sum())} of {len(moved)}",
            help="ProbSparse heads whose set of selected queries differs between the two runs.")
st.caption(f"The edit, as the CLI writes it: `{result.edit}` (`{command('counterfactual --edit …')}`).")
if changed_cells == 0:
    st.info("This edit changes no input cell, so both runs are the same computation.")


@st.fragment
def window_and_forecast() -> None:
    column = st.selectbox("Column", columns, index=default_column, key="cf_show_column",
                          persist_state="session") if len(columns) > 1 else columns[0]
    inputs = tables.column_view(result.inputs, column)
    forecast = tables.forecast_view(result.forecast, column) if column in prepared.target_columns else None
    widgets.chart(charts.window_figure(inputs, forecast, column, f"{column}: window {window}, as it is and edited"),
                  f"{stem}-{column}", "cf_window")
    if forecast is not None:
        widgets.table(forecast, f"{stem}-{column}-forecast", "cf_forecast",
                      column_config={k: st.column_config.NumberColumn(format="%.4f")
                                     for k in ("truth", "original", "edited", "difference")})


@st.fragment
def selections() -> None:
    st.subheader("Which queries ProbSparse selects")
    if moved.empty:
        st.info("This model has no ProbSparse site: every query of every head is computed in both runs.")
        return
    st.caption("Per head, the Jaccard of the two top-u sets (1: the same queries), and the query positions that "
               "entered or left it; lowest Jaccard first.")
    widgets.table(moved, f"{stem}-selection", "cf_selection", height=300,
                  column_config={"jaccard": st.column_config.ProgressColumn("jaccard", min_value=0, max_value=1,
                                                                            format="%.2f")})
    labels = [f"{s}:{h}" for s, h in zip(moved["site"], moved["head"])]
    c = st.columns([2, 2, 1], vertical_alignment="bottom")
    choice = c[0].selectbox("Head (most moved first)", labels, key="cf_head")
    site, head = choice.rsplit(":", 1)
    rows = tables.head_scores(result.scores, site, int(head))
    at = result.site(site)
    x = stamps(prepared.split(split).timestamps[window + rows["step"].clip(lower=0).to_numpy()]) \
        if (rows["step"] >= 0).all() else rows["position"]
    widgets.chart(charts.scores_figure(rows, x, f"{head_name(site, head)}: M̄ per query, as it is and edited"),
                  f"{stem}-{site}-h{head}-mbar", "cf_scores")
    query = c[1].number_input("Attention row of query", 0, len(at.query_steps) - 1,
                              int(rows["position"][rows["selected_edited"]].iloc[0]) if rows["selected_edited"].any()
                              else 0, key=f"cf_query_{site}")
    log = c[2].toggle("log scale", key="cf_log", value=len(at.key_steps) > 200)
    row = result.attention_row(site, int(head), int(query))
    keys_x = stamps(prepared.split(split).timestamps[window + row["step"].clip(lower=0).to_numpy()]) \
        if (row["step"] >= 0).all() else row["key"]
    widgets.chart(charts.row_figure(row, keys_x, f"{head_name(site, head)}, query {query}: attention row", log),
                  f"{stem}-{site}-h{head}-q{query}-row", "cf_row")


window_and_forecast()
selections()
widgets.csv_download(result.scores, f"{stem}-scores", "cf_scores_all", "Download M̄ and top-u of every query (CSV)")
