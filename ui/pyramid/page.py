"""Distilling pyramid: the encoder stack of one window — lengths, what each position covers, what
max-pooling keeps, feature norms, and each encoder layer's attention rows.

The report (analysis.attention.pyramid.pyramid_report) is computed once per (model, data, split, window, seed)
and cached; choosing a layer, a position or a head only slices it, and reruns only its fragment (the stack,
or the attention rows). The details below the picture are lazy tabs: only the open one is drawn.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.compare.pairing import side_by_side
from informer_lab.ui import attention_rows as attention_rows_view, evidence, second_model, state, widgets
from informer_lab.ui.charts import stamps
from informer_lab.ui.pyramid import cache, charts, tables as views
from informer_lab.ui.tables import file_stem
from informer_lab.ui.widgets import clickable_chart, lazy_csv_download

PICTURE_KEY = "py_picture"
ROW_KEY = "py_row"

st.title("Distilling pyramid")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("Between encoder layers, distilling (Conv1d k=3 circular → BatchNorm → ELU → MaxPool k=3, s=2, p=1) "
           + ("maps length L to ⌊(L − 1)/2⌋ + 1. " if config.distil_padding == 1 else
              f"with this model's conv padding {config.distil_padding} (Time-Series-Library) maps length L to "
              "⌊(L + 1)/2⌋ + 1 (L + 2 conv outputs; the paper's padding 1 gives ⌊(L − 1)/2⌋ + 1). ")
           + "In an encoder stack, replica r reads only the last seq_len / 2^r input steps and has one layer fewer; "
             "the replicas' outputs are joined along time.")
evidence.note('pyramid')
H = config.n_heads

c = st.columns([1, 3.4, 1.6], gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="py_split", persist_state="session")
n = state.require_windows(prepared, data, split)
window = state.window_slider(c[1], n, split, "py", state.forecast_starts(prepared, split, n))
second = second_model.picker(model, data, c[2])
try:
    report = cache.pyramid(model.key, data.key, split, window, seed, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The pyramid cannot be recorded: {err}")
    state.stop_page()

split_stamps = prepared.split(split).timestamps[window:window + config.seq_len]
step_stamps = stamps(split_stamps)
stem = f"pyramid-{file_stem(model.ref.name)}-{split}-w{window}"
stacked = len(config.e_layers) > 1
encoder = f"stack {','.join(map(str, config.e_layers))}" if stacked else f"{config.e_layers[0]} layers"
st.caption(f"Window {window} of the {split} split: encoder input {split_stamps[0]} → {split_stamps[-1]} "
           f"({config.seq_len} steps) · encoder {encoder}"
           f"{', distilling on' if config.distil else ', distilling off'} · key-sample seed {seed} · "
           + ("every recorded length matches the formula ✓." if report.lengths_match else
              "**a recorded length differs from the formula ✗** (see Lengths below)."))

# ------------------------------------------------------------------------------------------ the picture
cells = cache.cells(model.key, data.key, split, window, seed, report, config.seq_len)
rows = cells.drop_duplicates("row").sort_values("row")
row_ids = [f"{r}:{lv}" for r, lv in zip(rows["replica"], rows["level"])]
row_titles = dict(zip(row_ids, rows["row_title"]))
row_length = {f"{r}:{lv}": int(k) for (r, lv), k in cells.groupby(["replica", "level"]).size().items()}
if st.session_state.get(ROW_KEY) not in row_ids:
    st.session_state[ROW_KEY] = row_ids[-1]


def _position_key(row_id: str) -> str:
    return f"py_position_{row_id}"


def _pick_cell() -> None:
    picked = views.pyramid_pick(widgets.clicked(PICTURE_KEY))
    if picked is None:
        return
    row_id = f"{picked[0]}:{picked[1]}"
    if row_id in row_ids and 0 <= picked[2] < row_length[row_id]:
        st.session_state[ROW_KEY] = row_id
        st.session_state[_position_key(row_id)] = picked[2]


@st.fragment
def the_stack() -> None:
    """The picture and the chosen cell. A fragment: a click or a pick reruns only this part, on the cached
    report, not the tables and charts below (they do not depend on the chosen cell)."""
    st.subheader("The stack")
    pick = st.columns([2, 3], gap="medium")
    row_id = pick[0].selectbox("Layer", row_ids, key=ROW_KEY, format_func=row_titles.get, persist_state="session")
    length = row_length[row_id]
    position_key = _position_key(row_id)
    if st.session_state.get(position_key, 0) >= length:
        st.session_state[position_key] = 0
    position = pick[1].slider(f"Position (0 … {length - 1})", 0, length - 1, key=position_key,
                              persist_state="session") if length > 1 else 0
    replica, level = (int(x) for x in row_id.split(":"))
    output = views.output_cells(cells, config.seq_len) if stacked else None
    clickable_chart(charts.pyramid_figure(cells, step_stamps, config.seq_len, (replica, level, position), output),
                    f"{stem}-picture", PICTURE_KEY, _pick_cell)
    chosen = cells[(cells["replica"] == replica) & (cells["level"] == level) & (cells["position"] == position)].iloc[0]
    st.markdown(f"**{row_titles[row_id]}, position {position}** tiles input "
                f"{views.steps_text(chosen['span_start'], chosen['span_end'])} ({chosen['span_text']}); "
                f"its conv/pool path reaches {views.steps_text(chosen['receptive_start'], chosen['receptive_end'])}"
                f"{' and wraps round (circular padding)' if chosen['wraps'] else ''}. "
                f"Output norm {chosen['norm']:.4g}.")
    st.caption("Click a cell (or pick the layer and position above) to link it to the input steps it covers. Bars are "
               "one unit per position, so a bar is as long as its layer's sequence; each sits centred over the input "
               "steps its replica reads. The reach counts the distilling convolutions and max-pools only: attention "
               "mixes every position, and the value embedding has its own k=3 convolution.")


the_stack()

lazy_csv_download(lambda: cells.drop(columns=["row", "x0"]), f"{stem}-positions", "py_positions",
                  "Download every position: span, reach, timestamps, norm (CSV)")


# ------------------------------------------------------------------------------------------ the details, in lazy tabs
# Only the open tab is drawn: each plotly chart costs the browser ~0.15-0.3 s to redraw inside a Streamlit page on two
# cores, and a window change redraws everything drawn (with the survival, norm and rows charts all on the
# page, a window change at seq_len 1440 took 1.5 s). Markdown tables, and the long per-position table only when asked
# for (an st.dataframe grid costs the browser ~0.3 s to draw).
def lengths_tab() -> None:
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.subheader("Lengths")
        widgets.small_table(views.lengths_view(report.lengths), f"{stem}-lengths", "py_lengths")
        analytic, recorded = report.encoder_output_length
        verdict = "✓ every recorded length matches the formula" if report.lengths_match else \
            "✗ a recorded length differs from the formula"
        st.markdown(f"{verdict} (layers, distilling outputs, pool indices, replica outputs). Joined encoder output: "
                    f"analytic {analytic}, recorded {recorded} {'✓' if analytic == recorded else '✗'}.")
    with right:
        st.subheader("Which pool input won")
        st.caption("Per output position i of each distilling step: the fraction of channels whose max came from "
                   "input 2i − 1, 2i or 2i + 1 (they sum to 1). Below: their mean over the positions of each step.")
        kept = views.kept_view(report.kept)
        if not stacked:
            kept = kept.drop(columns="replica")
        shares = [c for c in kept.columns if c.startswith("from")]
        steps = [c for c in ("replica", "step") if c in kept.columns]
        widgets.small_table(kept.groupby(steps, as_index=False)[shares].mean(), f"{stem}-pool-winners-mean",
                            "py_kept_mean", formats={c: "{:.3f}" for c in shares})
        every = st.expander(f"Every output position ({len(kept):,} rows)", key="py_kept_open", on_change="rerun")
        if every.open:
            with every:
                widgets.table(kept, f"{stem}-pool-winners", "py_kept", height=260,
                              column_config={c: st.column_config.NumberColumn(format="%.3f") for c in shares})


SPANS = ["replica", "level", "position", "span_start", "span_end"]


def survival_tab() -> None:
    if not len(report.survival):
        st.info("No distilling step in this model (distilling off, or one encoder layer per replica).")
        return
    survival = report.survival.merge(report.spans[SPANS], left_on=["replica", "step", "input_position"],
                                     right_on=["replica", "level", "position"], how="left")
    z, keys = views.level_matrix(survival, ["replica", "step"], "input_position", "survived")
    lengths_of = report.lengths.set_index(["replica", "level"])["analytic_length"]
    titles = [(f"replica {r} · " if stacked else "") +
              f"pool {s}: layer {s} (L = {lengths_of[(r, s)]}) → {lengths_of[(r, s + 1)]}" for r, s in keys]
    widgets.chart(charts.level_heatmap(z, titles, views.level_spans(survival, ["replica", "step"], "input_position"),
                                       "Max-pool survival: fraction of channels in which the position won at least "
                                       "one pool window", "survived", "position in the layer before pooling",
                                       zmin=0, zmax=1),
                  f"{stem}-survival", "py_survival")
    lazy_csv_download(lambda: report.survival, f"{stem}-survival", "py_survival_table",
                      "Download survival table (CSV)")


def norms_tab() -> None:
    norms = report.norms.merge(report.spans[SPANS], on=["replica", "level", "position"], how="left")
    z, keys = views.level_matrix(norms, ["replica", "level"], "position", "norm")
    titles = [views.row_title(r, lv, int(np.isfinite(row).sum()), stacked) for (r, lv), row in zip(keys, z)]
    widgets.chart(charts.level_heatmap(z, titles, views.level_spans(norms, ["replica", "level"], "position"),
                                       "Feature norm ‖x‖₂ over d_model of each layer's output", "‖x‖₂",
                                       "position in the layer"),
                  f"{stem}-norms", "py_norms")


@st.fragment
def attention_rows() -> None:
    """One encoder layer's softmax rows for one head. A fragment: choosing the layer or the head reruns only
    this part (it slices the cached report), not the picture above."""
    site_names = [r.site for r in report.attention]
    by_site = {r.site: r for r in report.attention}
    a, b = st.columns([2, 1], gap="medium")
    site_name = a.selectbox("Encoder layer", site_names, key="py_site", persist_state="session",
                            format_func=lambda s: f"{s} · " + views.row_title(by_site[s].replica, by_site[s].layer,
                                                                              len(by_site[s].query_steps), stacked))
    head = b.selectbox("Head", list(range(H)), key="py_head", format_func=lambda h: f"head {h}",
                       persist_state="session")
    attention_rows_view.draw(by_site[site_name], head, step_stamps, stem, "py_rows")


TABS = {"Lengths and pool winners": lengths_tab, "Max-pool survival": survival_tab, "Feature norms": norms_tab,
        "Attention rows per encoder layer": attention_rows}


@st.fragment
def details() -> None:
    """The lazy tabs. A fragment: opening another tab reruns only this part, not the picture above (a redraw of the
    picture at seq_len 1440 costs the browser a few tenths of a second)."""
    widgets.lazy_tabs(TABS, "py_tab")


details()


# ------------------------------------------------------------------------------------------ side by side
def second_section() -> None:
    """The second model's pyramid on the window whose forecast starts at the same row, same key-sample seed:
    its lengths beside these, and where its pools keep other positions."""
    st.header(f"Side by side with {second.name}", divider="gray")
    j = second_model.window_of(second, prepared, split, window)
    if j is None:
        st.info(second_model.no_window_note(second, split, window))
        return
    other_config = second.model.checkpoint.config
    try:
        other = cache.pyramid(second.model.key, data.key, split, j, seed, second.model.checkpoint, second.prepared)
    except (InformerLabError, ValueError) as err:
        st.error(f"The second model's pyramid cannot be recorded: {err}")
        return
    lengths = side_by_side(report.lengths, other.lengths, ["replica", "level"], ["input_length", "recorded_length"])
    lengths = lengths.rename(columns=lambda col: col.replace("_a", f" · {model.ref.name}").replace(
        "_b", f" · {second.name}") if col.endswith(("_a", "_b")) else col)
    st.caption(f"Its window {j} of the {split} split (the same forecast start as window {window}), key-sample seed "
               f"{seed}: encoder {','.join(map(str, other_config.e_layers))}, seq_len {other_config.seq_len}, "
               f"distilling {'on' if other_config.distil else 'off'}. *differs*: a layer only one model has, or "
               f"other lengths ({int(lengths['differs'].sum())} of {len(lengths)} rows).")
    widgets.small_table(lengths, f"{stem}-vs-{file_stem(second.name)}-lengths", "py_pair_lengths")
    same_shape = (other_config.seq_len, other_config.e_layers, other_config.distil, other_config.distil_padding) == \
        (config.seq_len, config.e_layers, config.distil, config.distil_padding)
    if not len(report.survival) or not len(other.survival):
        return
    if not same_shape:
        st.info("The two encoders read windows of different shapes, so their pool positions are not the same input "
                "steps: compare the lengths above.")
        return
    diff = views.survival_difference(report.survival, other.survival)
    z, keys = views.level_matrix(diff, ["replica", "step"], "input_position", "difference")
    titles = [(f"replica {r} · " if stacked else "") + f"pool {s}" for r, s in keys]
    widgets.chart(charts.level_heatmap(z, titles, None, f"Max-pool survival, {second.name} − {model.ref.name}: red, "
                                       "kept more often by the second model", "Δ survived", "position in the layer "
                                       "before pooling", zmin=-1, zmax=1, colorscale="RdBu_r"),
                  f"{stem}-vs-{file_stem(second.name)}-survival", "py_pair_survival")


if second is not None:
    second_section()
