"""Compare: the Informer's forecasts next to its full-attention counterfactual and simple baselines.

`analysis.compare.comparison.compare_forecasts` forecasts every window of a split with each model, so it runs on
"Run comparison" and is cached by (model, data, split, seed, twin). The optional full-attention twin is
trained on demand in a background thread of this tab (ui/compare/twin.py) and kept in memory only.
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.intervals import METHOD
from informer_lab.analysis.learning.training import TrainSettings
from informer_lab.analysis.learning.windows import limit_windows
from informer_lab.ui import second_model, state, widgets
from informer_lab.ui.compare import cache, charts, tables as views
from informer_lab.ui.cache import n_windows
from informer_lab.ui.tables import file_stem
from informer_lab.ui.compare.twin import TwinJob
from informer_lab.ui.widgets import csv_download

PARAMS_KEY = "cp_params"
WINDOW_CHOICES = (512, 2048, None)  # None: every window of the split
LEARNING_RATES = [1e-2, 3e-3, 1e-3, 3e-4, 1e-4]
METRICS = {"mse": "MSE", "mae": "MAE"}
SCALES = {"standardised": "standardised", "original": "original units"}

st.title("Compare")
st.caption("Every window of a split, forecast by the Informer as trained, by the same weights with full attention "
           "at every site (the counterfactual), by an optional separately trained full-attention twin, and by three "
           "baselines: the last value, the seasonal naive forecast and a DLinear-style linear model fitted in "
           "closed form on the train windows.")

model, data, prepared, seed, checkpoint, config = state.require_page()
twin_state_key = f"cp_twin::{model.key}::{data.key}"
twin: TwinJob | None = st.session_state.get(twin_state_key)
twin_ready = twin is not None and twin.status == "done" and twin.model is not None
if twin_ready and st.session_state.get("cp_twin_offered") != twin.key:
    st.session_state["cp_with_twin"] = True  # tick "include the twin" once, when a new twin is ready
    st.session_state["cp_twin_offered"] = twin.key

# ------------------------------------------------------------------------------------------ run
second = second_model.picker(model, data, st.columns([2, 3])[0])
with st.form("cp_form", border=True):
    c = st.columns([1.2, 2.2, 2.2, 1.4], vertical_alignment="bottom", gap="medium")
    split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="cp_split", persist_state="session")
    windows = c[1].radio("Windows scored", WINDOW_CHOICES, index=len(WINDOW_CHOICES) - 1, horizontal=True,
                         key="cp_windows", persist_state="session",
                         format_func=lambda w: "all" if w is None else f"first {w:,}",
                         help="The first N windows of the split (long inputs: a quick look first), or all.")
    with_twin = c[2].checkbox("Include the full-attention twin", key="cp_with_twin", disabled=not twin_ready,
                              help="Train one below first." if not twin_ready else "The twin trained in this tab.")
    run = c[3].form_submit_button("Run comparison", type="primary", icon=":material/play_arrow:", width="stretch")
    st.caption(f"The val split has {n_windows(prepared, 'val'):,} windows, the test split "
               f"{n_windows(prepared, 'test'):,}; each model forecasts every window scored (2 passes of this model, "
               "3 with the twin), with a progress bar; results are cached. To stop a run, change any control or "
               "press Stop (top right).")
if run:
    st.session_state[PARAMS_KEY] = dict(model=model.key, data=data.key, split=split, windows=windows,
                                        twin=twin.key if (with_twin and twin_ready) else None)
if second is not None:
    st.caption(f"The second model, **{second.name}**, joins the comparison as *{second_model.SECOND}*: its forecasts "
               "of the same windows (matched by the row their forecast starts at), put in this model's scale.")

# ------------------------------------------------------------------------------------------ twin
with st.expander("Full-attention twin: train on demand", expanded=twin is not None and not twin_ready):
    st.markdown("A model with this checkpoint's configuration but **full** encoder and decoder self-attention "
                "(cross-attention as configured), trained **in the background** on the same train split with the "
                "settings below, kept in this tab's memory (not saved as a run). It answers what ProbSparse costs "
                "*in training*, where the counterfactual answers what it costs at inference with the same weights.")
    running = twin is not None and not twin.view().finished
    with st.form("cp_twin_form", border=False):
        c = st.columns(5)
        epochs = c[0].number_input("epochs", 1, 50, 1, key="cp_twin_epochs", persist_state="session")
        max_steps = c[1].number_input("max steps per epoch (0: all)", 0, 100000, 50, key="cp_twin_steps",
                                      persist_state="session")
        batch_size = c[2].number_input("batch size", 1, 1024, TrainSettings().batch_size, key="cp_twin_batch",
                                       persist_state="session")
        learning_rate = c[3].selectbox("learning rate", LEARNING_RATES, index=2, key="cp_twin_lr",
                                       format_func=lambda v: f"{v:g}", persist_state="session")
        train_seed = c[4].number_input("seed", 0, 2**31 - 1, 0, key="cp_twin_seed", persist_state="session")
        train = st.form_submit_button("Train the twin", disabled=running, icon=":material/model_training:")
    if train and not running:
        try:
            settings = TrainSettings(epochs=int(epochs), batch_size=int(batch_size), learning_rate=float(learning_rate),
                                     seed=int(train_seed), max_steps_per_epoch=int(max_steps) or None)
        except ValueError as err:
            st.error(str(err))
        else:
            st.session_state[twin_state_key] = TwinJob(model.key, data.key, prepared, config, settings).start()
            st.rerun()

    @st.fragment(run_every=1.0)
    def _live_twin() -> None:
        job: TwinJob = st.session_state[twin_state_key]
        widgets.job_progress(job.view())
        if job.view().finished:
            st.rerun()

    if twin is not None:
        if running:
            _live_twin()
        else:
            widgets.job_progress(twin.view())
            if twin_ready:
                used = (st.session_state.get(PARAMS_KEY) or {}).get("twin") == twin.key
                st.caption("In the comparison below." if used else
                           "Ready: *Include the full-attention twin* is ticked above; run the comparison to add it.")

params = st.session_state.get(PARAMS_KEY)
if params is not None and params["twin"] is not None and not (twin_ready and twin.key == params["twin"]):
    params = dict(params, twin=None)  # the twin is gone (another model or data): compare without it
if params is None or (params.get("model"), params.get("data")) != (model.key, data.key) or \
        params["split"] not in ("val", "test"):
    st.info("Press **Run comparison** to forecast the windows of the split with each model.")
    state.stop_page()
# Only a click computes: what the tab remembers shows a result still kept (by any tab), never starts one.
known = (model.key, data.key, params["split"], params.get("windows"), seed, params["twin"],
         second.model.key if second is not None else None)
if not run and not cache.known(known):
    st.info(f"Press **Run comparison** to forecast the {params['split']} windows again (seed {seed}"
            f"{', the second model ' + second.name if second is not None else ''}): this result is not kept any more.")
    state.stop_page()
scored = limit_windows(prepared, params["split"], params.get("windows"))
aligned = None
if second is not None:
    try:
        aligned = second_model.forecasts_on_first(model.key, second.model.key, data.key, params["split"], seed,
                                                  scored, second, params.get("windows"))
    except InformerLabError as err:
        st.warning(f"{second.name} is left out of the comparison: {err}")
second_key = second.model.key if aligned is not None else None
bar = st.empty()
try:
    comparison = cache.comparison(model.key, data.key, params["split"], params.get("windows"), seed, params["twin"],
                                  second_key, checkpoint, scored, twin.model if params["twin"] else None, aligned,
                                  lambda fraction, text: bar.progress(min(1.0, fraction), text=text))
except (InformerLabError, ValueError) as err:
    st.error(f"The comparison cannot be computed: {err}")
    state.stop_page()
bar.empty()

# ------------------------------------------------------------------------------------------ results
models = list(comparison.models)
labels = {m: views.short_label(m) for m in models}
if second_key is not None:
    labels[second_model.SECOND] = f"{second.name} (second model)"
stem = f"compare-{file_stem(model.ref.name)}-{comparison.split}-seed{seed}" + \
       ("-twin" if params["twin"] else "") + (f"-vs-{file_stem(second.name)}" if second_key is not None else "")
n_windows = len(comparison.truth)
st.header(f"{comparison.split} split: {n_windows:,} windows × {config.pred_len} steps × "
          f"{len(comparison.target_columns)} column{'s' if len(comparison.target_columns) > 1 else ''}", divider="gray")

with st.container(border=True):
    e, text = st.columns([1, 3], vertical_alignment="center", gap="large")
    e.metric("ε (counterfactual gap)", f"{comparison.epsilon:.4f}",
             help="‖Y_prob − Y_full‖_F / ‖Y_full‖_F over all the split's standardised forecasts.")
    text.markdown(f"**ε = ‖Y_prob − Y_full‖_F / ‖Y_full‖_F = {comparison.epsilon:.4g}**: how far the "
                  f"forecasts of the model as trained (ProbSparse, key-sample seed {comparison.seed}) lie from the "
                  "same weights run with full attention at every site, relative to the latter, over every "
                  "standardised forecast of the split. 0 exactly when ProbSparse selects every query (u = L).")
    if config.encoder_attention == "full" and config.decoder_attention == "full":
        st.caption("This checkpoint already uses full self-attention, so the counterfactual is the model itself.")

metrics = views.metrics_view(comparison.metrics, models, {second_model.SECOND: f"Second model: {second.name}"}
                             if second_key is not None else None)
widgets.table(metrics, f"{stem}-metrics", "cp_metrics",
              column_config={c: st.column_config.NumberColumn(format="%+.4f" if c.startswith("Δ") else "%.4f")
                             for c in metrics.columns if c.startswith(("MSE", "MAE", "ΔMSE"))})
csv_download(comparison.metrics, f"{stem}-metrics-intervals", "cp_metrics_all",
             "Download every metric with its interval, both scales (CSV)")
st.caption("MSE / MAE over every window, step and target column, on the train-split standardised scale (as papers "
           "report) unless *orig.* (the data's units: columns with large values weigh more). *lo* / *hi*: "
           f"{METHOD}; ΔMSE is taken window by window (paired), so its interval is narrower than the two MSEs' "
           "suggest.  \n" +
           "  \n".join(f"· {note}" for note in comparison.notes))
widgets.chart(charts.delta_figure(comparison.metrics, models, labels), f"{stem}-delta-mse", "cp_delta")
verdicts = comparison.metrics[(comparison.metrics["scale"] == "standardised") &
                              (comparison.metrics["model"] != models[0])]
st.markdown("  \n".join(f"**{labels[row.model]}**: {views.verdict(row._asdict())}"
                        for row in verdicts.itertuples()))


@st.fragment
def per_step_section() -> None:
    """The error per horizon step, in the metric and scale chosen here. A fragment: a choice slices the cached
    comparison and reruns only this part."""
    c = st.columns([1, 1, 3])
    metric = c[0].radio("Metric", list(METRICS), format_func=METRICS.get, horizontal=True, key="cp_metric",
                        persist_state="session")
    scale = c[1].radio("Scale", list(SCALES), format_func=SCALES.get, horizontal=True, key="cp_scale",
                       persist_state="session")
    column = metric if scale == "standardised" else f"{metric}_original"
    label = f"{METRICS[metric]} ({SCALES[scale]})"
    widgets.chart(charts.per_step_figure(comparison.per_step, column, label, labels), f"{stem}-per-step-{column}",
                  "cp_per_step")
    st.markdown(f"**{label} per horizon step**")
    widgets.table(views.per_step_wide(comparison.per_step, column, models), f"{stem}-per-step-{column}",
                  "cp_per_step_table",
                  column_config={m: st.column_config.NumberColumn(labels[m], format="%.4f") for m in models})
    csv_download(comparison.per_step, f"{stem}-per-step-all", "cp_per_step_all",
                 "Download MSE and MAE per step, both scales, every model (CSV)")


@st.fragment
def window_section() -> None:
    """One window's history, truth and every forecast. A fragment: the window and the column slice the cached
    comparison and rerun only this part."""
    st.subheader("One window")
    targets = list(comparison.target_columns)
    c = st.columns([4, 1.4])
    window = c[0].slider(f"Window (0 … {n_windows - 1} of the {comparison.split} split)", 0, n_windows - 1, 0,
                         key=f"cp_window_{comparison.split}", persist_state="session")
    target = c[1].selectbox("Column", targets, index=len(targets) - 1, key="cp_column",
                            persist_state="session") if len(targets) > 1 else targets[0]
    overlay = cache.overlay(model.key, data.key, comparison.split, params.get("windows"), seed, params["twin"],
                            second_key, window, comparison, scored)
    widgets.chart(charts.overlay_figure(overlay, target, models, labels, f"{target}: window {window}, history, "
                                        "truth and every forecast (original units)"),
                  f"{stem}-w{window}-{target}", "cp_overlay")
    widgets.table(views.overlay_wide(overlay, models), f"{stem}-w{window}-forecasts", "cp_overlay_table",
                  height=300, label="Download this window (CSV)")


per_step_section()
window_section()
