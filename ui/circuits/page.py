"""Circuits: which heads work together. Composition scores from the weights alone (against random matrices of the
same shapes), attribution patching checked head by head against exact patching, and path patching (a sender's patch
along chosen receivers only). Each tab is drawn only while open; the patching runs wait for their button."""
import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.circuits import cache, charts, tables
from informer_lab.analysis.circuits.attribution import independent_pairs
from informer_lab.analysis.circuits.reach import reachable
from informer_lab.ui.tables import file_stem

st.title("Circuits")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("Which heads work together: which encoder heads write what the cross-attention reads, which decoder heads "
           "steer its queries. Composition reads the weights; attribution patching estimates every patch at once "
           "from one backward pass and is checked against exact patching; path patching lets a patch reach only "
           "the receivers chosen, every other head frozen at its value in the corrupted run.")
evidence.note('composition', 'atp', 'path_patching')
stem = file_stem(f"circuits-{model.ref.name}")
PAIR_CHOICES = (16, 64, 128)


def composition_tab() -> None:
    try:
        result = cache.composition(model.key, seed, checkpoint)
    except (InformerLabError, ValueError) as err:
        st.error(f"Composition cannot be scored: {err}")
        return
    table = result.table
    kinds = [k for k in ("Q", "K", "V") if (table["kind"] == k).any()]
    kind = st.radio("Composition", kinds, horizontal=True, key="ci_kind",
                    format_func=lambda k: {"Q": "Q: into the receiver's queries", "K": "K: into its keys",
                                           "V": "V: into its values"}[k])
    widgets.chart(charts.composition_heatmap(table, kind), f"{stem}-composition-{kind}", "ci_composition")
    widgets.table(tables.composition_rows(table), f"{stem}-composition.csv", "ci_composition_table", height=320)
    st.caption(tables.composition_note(result))


def atp_tab() -> None:
    c = st.columns([1, 1.2, 3], vertical_alignment="bottom")
    split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="ci_split")
    pairs = c[1].selectbox("Pairs of windows", PAIR_CHOICES, index=1, key="ci_pairs")
    done = cache.atp_done(model.key, data.key, split, pairs, seed)
    if done is None and not c[2].button(f"Run AtP and exact patching on {pairs} pairs", key="ci_atp_run",
                                        type="primary"):
        st.info("Each pair patches window A into window B half the split later; AtP needs one forward and one "
                "backward pass of B, exact patching one run of B per head.")
        return
    try:
        result = done or cache.atp(model.key, data.key, split, pairs, seed, checkpoint, prepared)
    except (InformerLabError, ValueError) as err:
        st.error(f"Attribution patching cannot be run: {err}")
        return
    st.markdown(tables.atp_summary(result))
    widgets.chart(charts.atp_scatter(result.table), f"{stem}-atp-{split}-{pairs}", "ci_atp_scatter")
    widgets.table(tables.atp_heads(result.heads), f"{stem}-atp-heads.csv", "ci_atp_heads")
    widgets.lazy_csv_download(lambda: result.table, f"{stem}-atp", "ci_atp_csv",
                              "Download every pair and head: AtP and exact (atp.csv)")
    widgets.lazy_csv_download(lambda: result.positions, f"{stem}-atp-positions", "ci_atp_positions_csv",
                              "Download AtP per head and query position (CSV)")


def path_tab() -> None:
    heads = [f"{site.name}:{h}" for site in checkpoint.model.sites for h in range(config.n_heads)]
    c = st.columns([1.2, 2.6, 1], vertical_alignment="bottom")
    sender = c[0].selectbox("Sender", heads, key="ci_sender")
    sender_site = next(s for s in checkpoint.model.sites if s.name == sender.rpartition(":")[0])
    options = [f"{s.name}:{h}:{w}" for s, w in reachable(checkpoint.model, sender_site) for h in range(config.n_heads)]
    receivers = c[1].multiselect("Receivers (head:input)", options, key="ci_receivers",
                                 help="The heads a path from the sender reaches (later on its way to the forecast): "
                                      "a receiver's queries, keys, values or whole output take what the sender's "
                                      "patch makes of them; every other head stays at its value in run B.")
    if not options:
        st.info(f"No path from {sender} reaches another head: the heads after it read the forecast's own stream "
                "only. Choose an earlier sender.")
        return
    independent = independent_pairs(prepared, "test")
    pairs = c[2].selectbox("Pairs", sorted({independent, 16, 32}), key="ci_path_pairs",
                           help=f"{independent} pairs lie one seq_len + pred_len apart (independent stretches: an "
                                "interval exists); more pairs overlap and may show none.")
    if not receivers:
        st.info("Choose receivers: with none, the patch reaches nothing and the forecast is B's.")
        return
    try:
        result = cache.path(model.key, data.key, "test", sender, tuple(receivers), pairs, seed, checkpoint, prepared)
    except (InformerLabError, ValueError) as err:
        st.error(f"Path patching cannot be run: {err}")
        return
    widgets.chart(charts.path_figure(result.table), f"{stem}-path", "ci_path")
    widgets.table(result.table, f"{stem}-path.csv", "ci_path_table", height=280)


TABS = {"Composition": composition_tab, "Attribution patching": atp_tab, "Path patching": path_tab}
widgets.lazy_tabs(TABS, "ci_tab")
