"""Attribution: which encoder inputs moved one forecast value (Integrated Gradients, captum).

Integrated Gradients runs n_steps forward and backward passes, so it runs on submit ("Run"), and each
result is cached by (model, data, split, window, step, column, baseline, n_steps, attention, seed).
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.instruments.attribution import BASELINES
from informer_lab.analysis.errors import InformerLabError
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.attribution import cache, charts, tables as views
from informer_lab.ui.cache import n_windows
from informer_lab.ui.tables import file_stem

PARAMS_KEY = "at_params"
LARGE_GAP = 0.01  # relative completeness gap above which the page explains the jumps
BASELINE_LABELS = {"zeros": "zeros (every column at its training mean)",
                   "window_mean": "window mean (each feature's mean over this window)"}
ATTENTION_LABELS = {"as trained": "as trained", "full": "full attention (counterfactual, same weights)"}

st.title("Attribution")
st.caption("Integrated Gradients of one forecast value f(x) (one window, horizon step and target column, "
           "standardised) over its [seq_len × enc_in] encoder window: attribution[t, c] = (x − b)[t, c] · "
           "∫₀¹ ∂f/∂x[t, c](b + α(x − b)) dα. Completeness says they add up to f(x) − f(b). "
           "The decoder's label part follows x, the time marks stay fixed, and every path point uses the same key "
           "sample (the seed).")
evidence.note('integrated_gradients', 'gradient_importance')

model, data, prepared, seed, checkpoint, config = state.require_page()
targets = list(prepared.target_columns)
columns = list(prepared.columns)

# ------------------------------------------------------------------------------------------ the form
split = st.radio("Split", ["val", "test"], index=1, horizontal=True, key="at_split", persist_state="session")
n = state.require_windows(prepared, data, split)
with st.form("at_form", border=True):
    c = st.columns([3, 1.2, 1.4], gap="medium")
    window = state.window_slider(c[0], n, split, "at")  # in a form: no date field (its jump is a callback)
    step = c[1].number_input(f"Horizon step (1 … {config.pred_len})", 1, config.pred_len, 1, key="at_step",
                             persist_state="session")
    column = c[2].selectbox("Target column", targets, index=len(targets) - 1, key="at_column",
                            persist_state="session")
    c = st.columns([2, 1.2, 2], gap="medium")
    baseline = c[0].radio("Baseline b", list(BASELINES), key="at_baseline", format_func=BASELINE_LABELS.get,
                          persist_state="session")
    n_steps = c[1].number_input("Path points (n_steps)", 2, 512, 64, key="at_n_steps", persist_state="session",
                                help="Gauss–Legendre points on the path from b to x; the run costs about that many "
                                     "forward and backward passes.")
    attention = c[2].radio("Attention", list(ATTENTION_LABELS), key="at_attention",
                           format_func=ATTENTION_LABELS.get, persist_state="session",
                           help="Full attention has no top-u selection, hence no jumps along the path.")
    submitted = st.form_submit_button("Run", type="primary", icon=":material/play_arrow:")
if submitted:
    st.session_state[PARAMS_KEY] = dict(split=split, window=int(window), step=int(step), column=column,
                                        baseline=baseline, n_steps=int(n_steps),
                                        attention=None if attention == "as trained" else "full")

params = st.session_state.get(PARAMS_KEY)
if params is None or params["split"] not in ("val", "test") or params["column"] not in targets or \
        params["step"] > config.pred_len or params["window"] >= n_windows(prepared, params["split"]):
    st.info("Choose a window, a horizon step and a column, then press **Run** (about n_steps forward and backward "
            "passes).")
    state.stop_page()
try:
    result = cache.attribution(model.key, data.key, params["split"], params["window"], params["step"],
                                        params["column"], params["baseline"], params["n_steps"], params["attention"],
                                        seed, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The attribution cannot be computed: {err}")
    state.stop_page()

# ------------------------------------------------------------------------------------------ result
stamps = prepared.split(result.split).timestamps
start, target_time = stamps[result.window], stamps[result.window + config.seq_len + result.step - 1]
attention_text = "full attention (counterfactual)" if params["attention"] == "full" else "attention as trained"
st.subheader(f"{result.target_column} at {target_time} (step {result.step} of window {result.window}, "
             f"{result.split})")
st.caption(f"Encoder window {start} → {stamps[result.window + config.seq_len - 1]} · baseline "
           f"{BASELINE_LABELS[result.baseline_name]} · {result.n_steps} path points · {attention_text} · "
           f"key-sample seed {result.seed}. Standardised units (train-split scaler).")
if (params["split"], params["window"], params["step"], params["column"], params["baseline"], params["n_steps"]) != \
        (split, int(window), int(step), column, baseline, int(n_steps)) or \
        params["attention"] != (None if attention == "as trained" else "full"):
    st.caption("The form above holds other settings: press **Run** to attribute them.")

m = st.columns(6)
m[0].metric("f(x)", f"{result.forecast:.4f}", help="The forecast value being explained (standardised).")
m[1].metric("f(b)", f"{result.baseline_forecast:.4f}", help="The model's value at the baseline input.")
m[2].metric("Σ attributions", f"{float(result.array.sum()):.4f}", help="Should equal f(x) − f(b).")
m[3].metric("Convergence delta", f"{result.convergence_delta:+.3g}",
            help="captum's Σ attributions − (f(x) − f(b)), signed.")
m[4].metric("Completeness gap", f"{result.relative_gap:.2%}",
            help=f"|Σ attributions − (f(x) − f(b))| / |f(x) − f(b)| = {result.completeness_gap:.3g} / "
                 f"{abs(result.difference):.3g}, from two separate forward calls.")
m[5].metric("Selection changed", f"{result.path_selection_changes} of {result.n_steps}",
            help="Intervals of a uniform grid of n_steps + 1 points on the path across which some site's top-u "
                 "query set changed.")

if result.relative_gap > LARGE_GAP:
    st.warning(
        f"**The attributions miss {result.relative_gap:.1%} of f(x) − f(b).** ProbSparse gives a softmax row only to "
        "the top-u queries; as the input moves from the baseline to x, that set changed in "
        f"{result.path_selection_changes} of {result.n_steps} path intervals. At each change a query switches "
        "between its softmax row and the lazy stand-in, so the forecast *jumps*; gradients never see a jump, so "
        "the integral misses it, and more path points do not help. Read the map as approximate, or run with full "
        "attention (no selection, no jumps) for comparison.", icon=":material/warning:")
elif result.path_selection_changes:
    st.caption(f"The selection changed in {result.path_selection_changes} path intervals, but the jumps are small: "
               f"completeness holds to {result.relative_gap:.2%}.")
else:
    st.caption(f"No selection change along the path at this resolution; completeness holds to "
               f"{result.relative_gap:.2%} (quadrature and max-pool kinks).")

z, times = views.attribution_matrix(result.values, columns)
stem = (f"attribution-{file_stem(model.ref.name)}-{result.split}-w{result.window}-s{result.step}-"
        f"{result.target_column}-{result.baseline_name}-n{result.n_steps}"
        f"{'-full' if params['attention'] == 'full' else ''}")
widgets.chart(charts.attribution_heatmap(z, times, columns, f"Attribution to f(x) per input cell (red: raises "
                                                               f"{result.target_column} at step {result.step})"),
              f"{stem}-heatmap", "at_heatmap")
series = data.frame.values[result.target_column].reindex(times) if result.target_column in data.frame.values else None
left, right = st.columns([1, 1], gap="large")
with left:
    widgets.chart(charts.attribution_time_figure(z, times, series, result.target_column,
                                                 "Σ attribution per input step (bars) and the input"),
                  f"{stem}-per-step", "at_time")
with right:
    st.markdown("**Per input feature**")
    totals = views.feature_totals(result.values, columns)
    widgets.table(totals, f"{stem}-features", "at_features",
                  column_config={"Σ attribution": st.column_config.NumberColumn(format="%.4f"),
                                 "share of Σ|a|": st.column_config.NumberColumn(
                                     format="percent", help="Σ_t |a[t, c]| / Σ_t,c |a[t, c]|")})
    st.markdown("**Every cell**")
    widgets.table(result.values, f"{stem}-cells", "at_cells", height=240,
                  column_config={"attribution": st.column_config.NumberColumn(format="%.5f")})
