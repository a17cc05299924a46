"""Head masking: switch attention heads off and see one window's forecast change.

The mask is a per-call input (analysis.heads.masking.head_mask); the shared model is never touched. The
checkboxes live in this tab's session state, so two tabs can hold different masks.
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.heads.names import head_name
from informer_lab.ui import evidence, second_model, state, widgets
from informer_lab.ui.cache import mean_windows
from informer_lab.ui.head_masking import cache, charts, tables
from informer_lab.ui.tables import file_stem

st.title("Head masking")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("A switched-off head is silenced on every row of its per-head context, after the ProbSparse lazy "
           "fill and before the output projection: *zero* sets its context to 0, *mean* replaces it with its "
           f"mean context per position over up to {mean_windows(config.seq_len)} train windows.")
evidence.note('ablation')

sites = checkpoint.model.sites
H = config.n_heads

# ------------------------------------------------------------------------------------------ controls
c = st.columns([1, 1, 3.8, 1.6], gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="hm_split", persist_state="session")
mode = c[1].radio("Ablation", ["zero", "mean"], horizontal=True, key="hm_mode", persist_state="session")
n = state.require_windows(prepared, data, split)
window = state.window_slider(c[2], n, split, "hm", state.forecast_starts(prepared, split, n))
second = second_model.picker(model, data, c[3])
targets = list(checkpoint.schema.target_columns)

# ------------------------------------------------------------------------------------------ head grid
keys = {(s.index, h): tables.head_key(model.key, s.index, h) for s in sites for h in range(H)}
for key in keys.values():
    st.session_state.setdefault(key, True)


def _all_on() -> None:
    for key in keys.values():
        st.session_state[key] = True


head_title, head_button = st.columns([5, 1], vertical_alignment="bottom")
head_title.subheader("Heads (checked = on)")
head_button.button("All heads on", on_click=_all_on, key="hm_all_on", width="stretch")

kinds = [(kind, title, [s for s in sites if s.kind == kind]) for kind, title in tables.SITE_KINDS]
kinds = [k for k in kinds if k[2]]
blocks = st.columns(len(kinds), border=True) if H <= 8 else [st.container(border=True) for _ in kinds]
off: list[tuple[int, int]] = []
for block, (kind, title, kind_sites) in zip(blocks, kinds):
    with block:
        st.markdown(f"**{title}**")
        spec = [2.2] + [1] * H
        header = st.columns(spec, vertical_alignment="center", gap="xsmall")
        for h in range(H):
            header[h + 1].caption(f"h{h}")
        for site in kind_sites:
            row = st.columns(spec, vertical_alignment="center", gap="xsmall")
            row[0].markdown(tables.layer_label(site))
            for h in range(H):
                if not row[h + 1].checkbox(head_name(site.name, h), key=keys[(site.index, h)],
                                           persist_state="session", label_visibility="collapsed"):
                    off.append((site.index, h))
if config.mix:
    where = "every attention site" if config.mix_sites == "all" else "the decoder self-attention"
    st.caption(f"This model mixes heads and time in {where} (`mix=True`, as its source code did); the gate acts on "
               "each head's context before the mixing, so a masked head still contributes nothing.")
st.markdown(f"**Off ({len(off)} of {len(keys)}):** {tables.off_description(off, sites)}")

# ------------------------------------------------------------------------------------------ result
result = cache.window_forecast(model.key, data.key, split, window, tuple(sorted(off)), mode, seed, checkpoint,
                               prepared)


@st.fragment
def result_section() -> None:
    """The masked forecast of the column chosen here (and, with a second model, the same mask on it). A fragment:
    choosing the column slices the cached forecasts and reruns only this part, not the head grid."""
    pick, about = st.columns([1.3, 5], gap="medium", vertical_alignment="bottom")
    column = pick.selectbox("Plotted column", targets, index=len(targets) - 1, key="hm_column",
                            persist_state="session") if len(targets) > 1 else targets[0]
    rows = tables.window_table(result.table, column)
    history_start = result.history["timestamp"].iloc[0]
    about.caption(f"Window {window} of the {split} split: encoder input {history_start} → "
                  f"{result.history['timestamp'].iloc[-1]} ({config.seq_len} steps), forecast "
                  f"{rows['timestamp'].iloc[0]} → {rows['timestamp'].iloc[-1]} ({config.pred_len} steps). "
                  f"Original units · seed {seed}.")

    base_mae, masked_mae = rows["baseline_error"].mean(), rows["masked_error"].mean()
    m = st.columns(4)
    m[0].metric(f"MAE baseline ({column})", f"{base_mae:.4g}")
    m[1].metric(f"MAE masked ({column})", f"{masked_mae:.4g}",
                delta=f"{masked_mae - base_mae:+.4g}" if off else None, delta_color="inverse")
    m[2].metric("Max |masked − baseline|", f"{(rows['masked'] - rows['baseline']).abs().max():.4g}")
    m[3].metric("Steps made worse", f"{int((rows['error_change'] > 0).sum())} of {len(rows)}")

    stem = f"head-mask-{file_stem(model.ref.name)}-{split}-w{window}-{column}"
    widgets.chart(charts.masking_figure(result.history, rows, column, f"{column}: window {window}, forecast with "
                                        "and without the mask"), f"{stem}-forecast", "hm_forecast")
    if not off:
        st.caption("All heads are on, so the masked forecast is the baseline: uncheck heads above.")

    st.subheader(f"Numbers ({column}, original units)")
    widgets.table(rows, stem, "hm_table",
                  column_config={k: st.column_config.NumberColumn(format="%.4f")
                                 for k in ("truth", "baseline", "masked", "baseline_error", "masked_error",
                                           "error_change")})
    if len(targets) > 1:
        st.download_button(f"Download all {len(targets)} target columns (CSV)", lambda: widgets.csv_bytes(result.table),
                           file_name=f"{stem.rsplit('-', 1)[0]}-all-columns.csv", mime="text/csv",
                           key="dl_csv_hm_all", on_click="ignore", icon=":material/download:")
    if second is not None:
        second_section(column)



def second_section(column: str) -> None:
    """The same mask on the second model, on the window whose forecast starts at the same row."""
    st.header(f"Side by side with {second.name}", divider="gray")
    j = second_model.window_of(second, prepared, split, window)
    if j is None:
        st.info(second_model.no_window_note(second, split, window))
        return
    other = second.model.checkpoint
    off_b, missing = tables.mask_for_other(off, sites, other.model.sites, other.config.n_heads)
    result_b = cache.window_forecast(second.model.key, data.key, split, j, tuple(sorted(off_b)), mode, seed, other,
                                     second.prepared)
    if column not in set(result_b.table["column"]):
        st.info(f"{second.name} does not forecast {column}.")
        return
    rows_a = tables.window_table(result.table, column)
    rows_b = tables.window_table(result_b.table, column)
    st.caption(f"The same heads off in {second.name} (matched by site name and head), {mode} ablation, its "
               f"window {j} of the {split} split (the forecast starts at the same row), key-sample seed {seed}." +
               (f" It has no {', '.join(missing)}: those stay on." if missing else ""))
    m = st.columns(4)
    for cell, (name, rows) in zip(m[:2], ((model.ref.name, rows_a), (second.name, rows_b))):
        base, masked = rows["baseline_error"].mean(), rows["masked_error"].mean()
        cell.metric(f"MAE change · {name} ({column})", f"{masked - base:+.4g}",
                    help=f"MAE {base:.4g} with every head on, {masked:.4g} masked.")
    paired = tables.paired_effect(rows_a, rows_b, (model.ref.name, second.name))
    m[2].metric("Steps with opposite effects", f"{int(paired['opposite'].sum())} of {len(paired)}",
                help="Steps where the mask lowers one model's error and raises the other's.")
    apart = (rows_a.set_index("timestamp")["baseline"] - rows_b.set_index("timestamp")["baseline"]).abs().max()
    m[3].metric("Max |baseline A − B|", f"{float(apart):.4g}",
                help="The two models' forecasts with every head on, on the steps both forecast.")
    widgets.chart(charts.masking_figure(result_b.history, rows_b, column, f"{column}: {second.name}, window {j}, "
                                        "forecast with and without the same mask"),
                  f"head-mask-{file_stem(second.name)}-{split}-w{j}-{column}", "hm_forecast_second")
    st.markdown("**Both models, step by step** (*opposite*: the mask helps one and hurts the other)")
    stem = f"head-mask-{file_stem(model.ref.name)}-vs-{file_stem(second.name)}-{split}-w{window}-{column}"
    widgets.table(paired, stem, "hm_pair_table",
                  column_config={k: st.column_config.NumberColumn(format="%+.4f") for k in paired.columns if " · " in k})


result_section()
