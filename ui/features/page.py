"""Features: a sparse dictionary (TopK SAE) of one residual site, trained on demand in a background thread; the table
of all its features, a page per feature (what it reads, what it does to the forecast, which heads write it, its
neighbours) and a search by concept (a label file, or the planted answer of a generated series)."""
from __future__ import annotations

import hashlib

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.features import profile
from informer_lab.analysis.features.concepts import read_concepts, search
from informer_lab.analysis.features.run import windows_for_length
from informer_lab.analysis.features.seeds import answer_concepts
from informer_lab.analysis.features.sites import DEFAULT_SITE, residual_sites
from informer_lab.analysis.instruments.window_edits import window_frame
from informer_lab.source import command
from informer_lab.ui import state, widgets
from informer_lab.ui.data_model.known_answer import answer_of
from informer_lab.ui.features import cache, charts, jobs, tables
from informer_lab.ui.tables import file_stem

st.title("Features")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("A sparse autoencoder (TopK, Gao et al. 2024) learns a dictionary of directions of one residual site from "
           "its activations on train windows; each position is rebuilt from the k features that fire there. A "
           "feature often reads as one concept where a single coordinate does not — or explains little: the figures "
           f"below say which. CLI: `{command('sae …')}`.")

sites = residual_sites(checkpoint.model)
c = st.columns([2.2, 0.8, 0.9, 0.9, 1.6], vertical_alignment="bottom")
site = c[0].selectbox("Site", sites, index=sites.index(DEFAULT_SITE), key="fe_site",
                      help="encoder.out is the memory the decoder's cross-attention reads")
k = int(c[1].number_input("k", 1, 512, 16, key="fe_k", help="features firing per position (the L0 bound)"))
expansion = int(c[2].number_input("Expansion", 1, 32, 4, key="fe_expansion", help="features per d_model dimension"))
steps = int(c[3].number_input("Steps", 100, 20_000, 2_000, step=100, key="fe_steps"))
train = c[4].button("Train the dictionary", type="primary", icon=":material/play_arrow:", key="fe_run")

upload = st.file_uploader("Concepts (optional): a CSV of the data's time column and label columns — holidays, "
                          "outages, regimes; never an input of the model", type=["csv"], key="fe_concepts")
answer = answer_of(data.ref)
concepts, concepts_key, validated = None, "", False
try:
    if upload is not None:
        concepts = read_concepts(upload.getvalue())
        concepts_key = hashlib.sha256(upload.getvalue()).hexdigest()[:16]
    elif answer is not None and (answer.regime_of_row or any(e.get("what") == "spike" for e in answer.events)):
        concepts, validated = answer_concepts(data.frame.timestamps, answer), True
        concepts_key = f"planted-{answer.kind}-{answer.spec.get('seed')}"
        st.caption("This data was generated with planted " + ", ".join(concepts.columns) + ": they are scored as "
                   "concepts (validated evidence).")
except InformerLabError as err:
    st.error(f"{upload.name if upload else 'The planted answer'}: {err}")

key = (model.key, data.key, site, k, expansion, steps, seed, concepts_key)
asked = st.session_state.setdefault("fe_asked", [])
if train and key not in asked:
    asked.append(key)
if key not in asked:
    windows = windows_for_length(config.seq_len)
    st.info(f"Press **Train the dictionary**: {expansion * config.d_model} features of `{site}` on up to "
            f"{windows['train_windows']:,} train windows, then measured on {windows['test_windows']:,} test windows "
            "(as many input rows at any length; a minute or less on a CPU for the sample model).",
            icon=":material/play_circle:")
    state.stop_page()
run = widgets.phase_job_result(jobs.train_job(*key, checkpoint, prepared, concepts))
if run is None:
    state.stop_page()

st.markdown(tables.summary(run))
st.caption(tables.EVIDENCE["causal"].replace("the feature ablated or scaled", "the reconstruction spliced in")
           + " " + tables.EVIDENCE["descriptive"])
stem = file_stem(f"features-{model.ref.name}-{site}")
codes, acts = run.evaluation.codes, run.evaluation.activations


def all_tab() -> None:
    st.caption("One row per feature; click a header to sort. Density: the share of test positions it fires at; "
               "direct effect: the RMS of its direct effect on the forecast (data units); ablation: the RMS change of "
               f"the forecast (standardised) with it ablated on {run.ablation_windows} test windows.")
    widgets.table(tables.features_view(run.table), f"{stem}-features", "fe_table", height=420)
    if run.direct.reason:
        st.caption(run.direct.reason)


def feature_tab() -> None:
    default = int(run.table.ablation_rms.idxmax()) if "ablation_rms" in run.table else 0
    f = int(st.number_input("Feature", 0, run.trained.m - 1, default, key="fe_feature"))
    row = run.table.iloc[f]
    m = st.columns(4)
    m[0].metric("Density", f"{row.density:.2%}")
    m[1].metric("Mean activation", f"{row.mean_activation:.3f}")
    m[2].metric("Ablation ΔMSE", f"{row.ablation_delta_mse:+.5f}")
    m[3].metric("Nearest", f"{int(row.nearest)} ({row.nearest_cosine:.2f})")
    hist = profile.histogram(codes, f)
    if hist.empty:
        st.warning(f"Feature {f} fires on none of the {codes.positions:,} test positions (dead here).")
    else:
        widgets.chart(charts.histogram_figure(hist, f), f"{stem}-f{f}-histogram", "fe_hist")
    top = profile.top_activations(codes, acts, prepared, f, n=10)
    st.subheader("Where it fires most", divider="gray")
    st.caption(tables.EVIDENCE["descriptive"] + " Each window at its strongest position, with the input steps that "
               "position reads through the distilling pyramid.")
    widgets.table(tables.top_view(top), f"{stem}-f{f}-top", "fe_top")
    if not top.empty:
        column = st.selectbox("Column drawn", list(prepared.target_columns), key="fe_column") \
            if len(prepared.target_columns) > 1 else prepared.target_columns[0]
        rank = int(st.selectbox("Window", list(top["rank"]), key="fe_rank",
                                format_func=lambda r: f"#{r}: window {int(top.window[r - 1])}"))
        window = int(top.window[rank - 1])
        row_of = int(list(acts.windows).index(window))
        widgets.chart(charts.window_figure(window_frame(prepared, acts.split, window),
                                           profile.window_profile(codes, acts, prepared, f, row_of), column, f,
                                           window), f"{stem}-f{f}-window", "fe_window")
    st.subheader("What it does to the forecast", divider="gray")
    rows = cache.WINDOWS * config.seq_len
    measure = st.toggle(f"Measure it: the forecast with the feature scaled, and the heads that write it "
                        f"({cache.WINDOWS} test windows, {rows:,} input rows)", value=rows <= cache.AUTO_ROWS,
                        key=f"fe_measure_{rows <= cache.AUTO_ROWS}",
                        help="On at once for short windows; for long ones it runs forward passes over every window "
                             "each time the feature or its scale changes, so it waits to be asked.")
    if not measure:
        st.caption("Off: the feature's page above is what the model computed; switch it on for the causal check.")
        return
    scale = st.select_slider("Feature × ", [0.0, 0.5, 2.0, 3.0], value=0.0, key="fe_scale",
                             format_func=lambda s: "0 (ablated)" if s == 0 else f"{s:g}")
    try:
        iv = cache.intervention(key, f, float(scale), checkpoint, prepared, run)
    except (InformerLabError, ValueError) as err:
        st.error(f"The intervention cannot be run: {err}")
        return
    per_step = run.direct.per_step(f) if run.direct.values is not None else None
    column = prepared.target_columns[0] if len(prepared.target_columns) == 1 else \
        st.session_state.get("fe_column", prepared.target_columns[0])
    what = "ablated" if scale == 0 else f"× {scale:g}"
    widgets.chart(charts.effect_figure(tables.effect_frame(per_step, iv, column), column, f, what),
                  f"{stem}-f{f}-effect", "fe_effect")
    st.markdown(tables.intervention_line(iv))
    st.caption("Both curves are what the feature adds to the forecast: the direct effect along the residual path, and "
               "the forecast's change under the intervention divided by the change of the feature, Δ / (α − 1) (an "
               "ablation: f(x) − f(x without it)). Where they differ, the feature acts through the FFNs, the "
               "attention patterns or the norms' scales, which the direct path holds fixed.")
    st.caption(tables.EVIDENCE["causal"] + " " + (tables.EVIDENCE["direct"] if per_step is not None
                                                  else run.direct.reason))
    st.subheader("Heads that write it", divider="gray")
    heads = cache.heads(key, f, checkpoint, prepared, run)
    if heads.empty:
        st.info(f"Feature {f} fires on none of the {cache.WINDOWS} test windows the split is read on.")
    else:
        widgets.table(heads, f"{stem}-f{f}-heads", "fe_heads")
        st.caption(tables.EVIDENCE["heads"] + " Attribution: the mean over the positions where it fires; share: of "
                   "its mean pre-activation there.")
    st.subheader("Nearest features", divider="gray")
    widgets.table(profile.nearest(run.trained.sae, f), f"{stem}-f{f}-nearest", "fe_nearest")


def concepts_tab() -> None:
    if run.concepts is None:
        st.info("Upload a concept file above (or generate a series with planted regimes or spikes on Data & model) "
                "and train again: every label value is then scored against every feature.",
                icon=":material/label:")
        return
    st.caption(tables.EVIDENCE["validated" if validated else "concepts"] + " Position level: the label of the steps a "
               f"position reads; window level: the label of the window's last {run.concepts.stretch} steps, the "
               "feature's maximum over the positions reading them. The best single neuron (either sign) beside it.")
    widgets.table(tables.concept_view(run.concepts.table), f"{stem}-concepts", "fe_concepts_table")
    table = run.concepts.table
    c = st.columns(3)
    concept = c[0].selectbox("Concept", sorted(set(table.concept)), key="fe_concept")
    value = c[1].selectbox("Value", sorted(set(table.value[table.concept == concept])), key="fe_value")
    level = c[2].radio("Level", ["position", "window"], horizontal=True, key="fe_level")
    widgets.table(search(run.concepts, concept, value, level), f"{stem}-search", "fe_search")


TABS = {"All features": all_tab, "Feature": feature_tab, "Concepts": concepts_tab}


@st.fragment
def details() -> None:
    """The lazy tabs. A fragment: another tab, feature, window or scale reruns only this part, on the trained
    dictionary, not the controls above."""
    widgets.lazy_tabs(TABS, "fe_tab")


details()
