"""Ablation studies: how much each head, site or random set of heads matters to the forecast error.

Every study is one call to `analysis.heads.ablation` / `analysis.heads.importance` over the windows of a split, run in a
background thread (`ui/ablation/jobs.py`) behind its own Run button and cached per (model, data, split, mode,
windows, seed[, study settings]). Masks are per-call inputs: the shared model is never touched.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.heads.ablation import HeadSweep
from informer_lab.analysis.heads.masking import BASELINE
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.ablation import jobs, tables
from informer_lab.ui.ablation.tables import STUDIES
from informer_lab.ui.cache import mean_contexts_for, mean_windows
from informer_lab.ui.tables import file_stem
from informer_lab.analysis.heads.lists import REMOVABLE, head_lists
from informer_lab.analysis.intervals import METHOD
from informer_lab.ui.ablation.charts import (horizon_figure, importance_scatter, leave_one_in_bars, pruning_figure, random_boxes,
                                site_bars, sweep_bars, sweep_heatmap)
from informer_lab.analysis.heads.names import head_name

RUNS_KEY = "abl_runs"  # study → the keys this tab asked for, oldest first
WINDOW_CHOICES = (32, 128, 512, None)  # None: the whole split
ALL_BY_DEFAULT = 4096  # a split up to this many windows is scored whole by default: intervals need many windows
K_CHOICES = (5, 10, 15, 20, 25, 30, 40, 50, 60, 75)
NUMBER = st.column_config.NumberColumn(format="%.5f")
TEXT = {"site": st.column_config.TextColumn(width="medium")}
FIRST = ("site", "head", "delta_mse", "delta_mse_lo", "delta_mse_hi", "delta_mse_pct", "mse", "delta_mae",
         "mae")  # what a reader looks for first
PCT = st.column_config.NumberColumn(format="%+.2f %%")
METRIC_COLUMNS = TEXT | {k: NUMBER for k in ("mse", "mse_lo", "mse_hi", "mae", "delta_mse", "delta_mse_lo",
                                              "delta_mse_hi", "delta_mae", "delta_mae_lo", "delta_mae_hi")} | \
    {"delta_mse_pct": PCT}
RUN = dict(type="primary", icon=":material/play_arrow:")  # every study's Run button


# ------------------------------------------------------------------------------------------ page
st.title("Ablation studies")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("Remove heads (zero: context set to 0; mean: replaced by its mean context per position over up to "
           f"{mean_windows(config.seq_len)} train windows) and score the forecast over many windows. Every number is "
           "MSE on the standardised scale (train-split scaler), and every mask of a study is **paired**: it "
           "sees the same ProbSparse key samples as the baseline, so differences are not sampling noise.")
evidence.note('ablation')

net = checkpoint.model
n_heads = net.n_sites * net.config.n_heads

c = st.columns([1.1, 1.3, 2.4, 2.4], gap="medium", vertical_alignment="bottom")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="abl_split", persist_state="session")
mode = c[1].radio("Ablation", ["zero", "mean"], horizontal=True, key="abl_mode", persist_state="session")
n = state.require_windows(prepared, data, split)
windows = c[2].radio("Windows scored", WINDOW_CHOICES, index=3 if n <= ALL_BY_DEFAULT else 2, horizontal=True,
                     key="abl_windows", persist_state="session",
                     format_func=lambda w: f"all ({n:,})" if w is None else f"{w}",
                     help="The first N windows of the split (quick looks; too few for intervals); all: the whole "
                          "split, where the intervals and the lists of heads come from.")
scored = n if windows is None else min(windows, n)
c[3].caption(f"**{scored:,} of {n:,}** {split} windows · {mode} ablation · seed {seed} · "
             f"{net.n_sites} sites × {net.config.n_heads} heads = {n_heads} heads")
where = f"the {split} split ({scored:,} of {n:,} windows, standardised scale, seed {seed}, {mode} ablation)"
stem = f"ablation-{file_stem(model.ref.name)}-{split}-{mode}-{scored}w-seed{seed}"


SETTINGS = {  # a study's own settings (its `params`) in words
    "random": lambda ks, repeats: f"k {', '.join(map(str, ks))} %, {repeats} draws",
    "pruning": lambda step, tolerance, importance: f"{step} % a step, tolerance {tolerance} %, {importance}",
    "importance": lambda method: method.replace("_", " "),
}


def _describe(name: str, key: tuple) -> str:
    _, _, k_split, k_mode, k_windows, k_seed, params = key
    own = f", {SETTINGS[name](*params)}" if params else ""
    return (f"{k_split} split, {k_mode} ablation, {'all' if k_windows is None else k_windows} windows, "
            f"seed {k_seed}{own}")


@st.fragment(run_every=0.5)
def _progress(job: jobs.StudyJob) -> None:
    """Polls a running study; a full rerun draws its result once it has finished."""
    view = job.view()
    if view.finished:
        st.rerun()
    # Not a `with` block (leaving one marks the status complete), and the bar beside it rather than inside:
    # there it keeps its place between polls and moves on instead of refilling from 0.
    st.status(f"{view.title}: {view.phase}… {view.seconds:.0f} s", state="running")
    if view.total > 1:
        st.progress(view.done / view.total, text=f"part {view.done + 1} of {view.total}")


def study(name: str, params: tuple, run: bool, sweep: pd.DataFrame | None = None):
    """The finished result of study `name` for the current settings, or None (after saying why).

    run: its Run button was pressed in this script run. A tab sees the results of the keys it asked for;
    the job (and its result) is shared by every tab asking the same key.
    """
    key = (model.key, data.key, split, mode, windows, seed, params)
    asked = st.session_state.setdefault(RUNS_KEY, {}).setdefault(name, [])
    if run and key not in asked:
        asked.append(key)
    if key not in asked:
        last = [k for k in asked if k[:2] == key[:2]]
        st.info(f"Not run for these settings yet (last run: {_describe(name, last[-1])}). Press **Run**." if last else
                "Press **Run** to start this study.", icon=":material/play_circle:")
        return None
    means = mean_contexts_for(model.key, data.key, seed, checkpoint, prepared) if mode == "mean" else None
    args = (name, model.key, data.key, split, mode, windows, seed, params, checkpoint, prepared, means)
    job = jobs.study_job(*args, sweep)
    view = job.view()
    if not view.finished:
        _progress(job)
        return None
    if view.status == "failed":
        st.error(view.error or f"{view.title} failed")
        if st.button("Retry", key=f"abl_retry_{name}"):
            jobs.study_job.clear(*args, sweep)
            st.rerun()
        return None
    st.caption(f"{view.title}: {view.seconds:.1f} s (cached for these settings: shared by every tab).")
    return view.result


@st.fragment
def sweep_horizon(sweep: HeadSweep) -> None:
    """ΔMSE per horizon step of the head chosen here. A fragment: choosing a head slices the finished sweep
    and reruns only this chart, not the page's six studies."""
    options = tables.head_options(sweep.table)
    choice = st.selectbox("Head (most harmful first)", options, key="abl_sweep_head")
    site_name, head = choice.rsplit(":", 1)
    rows = sweep.per_step[(sweep.per_step["site"] == site_name) & (sweep.per_step["head"] == int(head))]
    widgets.chart(horizon_figure(rows, choice, f"ΔMSE per horizon step: {head_name(site_name, head)} removed"),
                  f"{stem}-sweep-horizon-{choice}", "abl_sweep_horizon")


tabs = st.tabs(list(STUDIES.values()))

# ------------------------------------------------------------------------------------------ single-head sweep
with tabs[0]:
    st.caption(f"**Measured:** ΔMSE = MSE with one head removed − MSE with every head on, on {where}. "
               "Red cells: the forecast gets worse without the head; blue: it improves. "
               f"{n_heads + 1} masks (the baseline and one per head), all paired.")
    run = st.button("Run single-head sweep", key="abl_run_sweep", **RUN)
    sweep = study("sweep", (), run)
    if sweep is not None:
        table = tables.with_relative(sweep.table)
        baseline_mse = float(table["mse"].iloc[0])
        heads = table[table["site"] != BASELINE]
        worst = heads.loc[heads["delta_mse"].idxmax()]
        lists = head_lists(sweep.table)
        listed = lists.table
        known = lists.tested > 0
        no_interval = "" if known else str(listed["interval"].iloc[0])
        m = st.columns([1, 1.3, 1, 1])
        m[0].metric("Baseline MSE (all heads on)", f"{baseline_mse:.4g}")
        m[1].metric("Most harmful removal", f"{worst['delta_mse']:+.4g}",  # the head in the delta: a label truncates
                    delta=f"{head_name(worst['site'], worst['head'])}: {worst['delta_mse_pct']:+.1f} % of baseline",
                    delta_color="inverse",
                    help=f"95 % interval [{worst['delta_mse_lo']:+.4g}, {worst['delta_mse_hi']:+.4g}]" if known else
                    f"No interval: {no_interval}.")
        m[2].metric("Important (BH, q 0.05)", f"{int(listed['important'].sum())} of {len(heads)}" if known else "n/a",
                    help="Heads whose removal raises the MSE, shown by a t test of ΔMSE ≠ 0 with Benjamini–Hochberg "
                         f"across the {lists.tested} heads tested (raw, each interval alone: "
                         f"{int(listed['important_raw'].sum())}; helpful, removal lowers the MSE: "
                         f"{int(listed['helpful'].sum())}, raw {int(listed['helpful_raw'].sum())}).")
        m[3].metric("Removable alone (BH, under 5 %)", f"{int(listed['removable'].sum())} of {len(heads)}"
                    if known else "n/a",
                    help="Heads whose ΔMSE is shown to be under 5 % of the baseline MSE (one-sided t test, "
                         f"Benjamini–Hochberg across the heads; raw, the interval alone: "
                         f"{int(listed['removable_raw'].sum())}; by the point estimate alone: "
                         f"{int((heads['delta_mse'] < REMOVABLE * baseline_mse).sum())}).")
        st.caption(f"Lists: {lists.summary()}." if known else
                   f"**No evidence either way:** {no_interval}. No head is listed as important, helpful or removable; "
                   "choose more windows (or all) to get intervals.")
        left, right = st.columns([3, 2], gap="medium")
        with left:
            widgets.chart(sweep_heatmap(tables.sweep_matrix(sweep.table), baseline_mse,
                                        f"ΔMSE when one head is removed ({split}, {mode})"),
                          f"{stem}-sweep-heatmap", "abl_sweep_heatmap")
        with right:
            sweep_horizon(sweep)
        widgets.chart(sweep_bars(lists.table, REMOVABLE * baseline_mse, f"ΔMSE with its 95 % interval over windows, "
                                 f"the {min(24, len(heads))} largest"),
                      f"{stem}-sweep-intervals", "abl_sweep_bars")
        st.caption(f"Intervals: {METHOD}.")
        st.subheader("Numbers (one row per removed head, baseline first)")
        widgets.table(tables.lead(table, *FIRST), f"{stem}-sweep", "abl_sweep_table",
                      column_config=METRIC_COLUMNS)
        st.download_button("Download ΔMSE per horizon step, every head (CSV)", widgets.csv_bytes(sweep.per_step),
                           file_name=f"{stem}-sweep-per-step.csv", mime="text/csv", key="dl_csv_abl_sweep_steps",
                           on_click="ignore", icon=":material/download:")

# ------------------------------------------------------------------------------------------ site studies
def site_study(name: str, button: str, key: str, figure, chart_title: str) -> None:
    """A study without settings of its own (layer masking, leave-one-in): Run, then its bars and table."""
    result = study(name, (), st.button(button, key=f"abl_run_{key}", **RUN))
    if result is not None:
        result = tables.with_relative(result)
        file_part = f"{stem}-{name.replace('_', '-')}"
        widgets.chart(figure(result, f"{chart_title} ({split}, {mode})"), file_part, f"abl_{key}_chart")
        widgets.table(tables.lead(result, *FIRST), file_part, f"abl_{key}_table", column_config=METRIC_COLUMNS)


with tabs[1]:
    st.caption(f"**Measured:** ΔMSE when every head of one attention site is removed at once, on {where}. "
               f"{net.n_sites + 1} paired masks.")
    site_study("layers", "Run layer masking", "layers", site_bars, "ΔMSE with a whole site removed")

with tabs[2]:
    st.caption(f"**Measured:** at one site keep only head h (the site's other heads removed, every other site "
               f"whole); ΔMSE from the all-heads baseline on {where}. A bar near 0: that head alone carries "
               "its site.")
    site_study("leave_one_in", "Run leave-one-in", "loi", leave_one_in_bars, "ΔMSE with one head kept per site")

# ------------------------------------------------------------------------------------------ random masking
with tabs[3]:
    st.caption(f"**Measured:** round(k · {n_heads}) heads drawn at random (head sets drawn with seed {seed}) and "
               f"removed together, R draws per k; ΔMSE of each draw on {where}. Counted: draws whose ΔMSE stays "
               f"below {100 * tables.NEGLIGIBLE:.0f} % of the baseline MSE.")
    with st.form("abl_random_form", border=True):
        f = st.columns([3, 2, 1.4], vertical_alignment="bottom")
        ks = f[0].multiselect("k: % of all heads removed (one box each)", K_CHOICES, default=[10, 20, 30, 50],
                              key="abl_random_ks", format_func=lambda k: f"{k} %")
        repeats = f[1].slider("Draws per k (repeats)", 2, 200, 20, key="abl_random_repeats")
        run = f[2].form_submit_button("Run random masking", key="abl_run_random", **RUN)
    ks = tuple(sorted(ks))
    if not ks:
        st.warning("Choose at least one k.")
    else:
        random_result = study("random", (ks, repeats), run)
        if random_result is not None:
            summary, draws = random_result.summary, random_result.draws
            st.markdown(f"**Draws with ΔMSE < {100 * tables.NEGLIGIBLE:.0f} % of the baseline MSE** "
                        f"(baseline {summary['baseline_mse'].iloc[0]:.4g}):")
            cells = st.columns(max(4, len(summary)))
            for cell, row in zip(cells, summary.itertuples()):
                cell.metric(f"k = {row.k_percent} % ({row.n_masked} heads)", f"{row.draws_below_5pct} of {row.repeats}",
                            help=f"draws whose ΔMSE < {tables.NEGLIGIBLE:.0%} of the baseline MSE")
            widgets.chart(random_boxes(draws, f"ΔMSE of {repeats} random draws per k ({split}, {mode})"),
                          f"{stem}-random", "abl_random_chart")
            st.subheader("Summary per k")
            widgets.table(summary, f"{stem}-random-summary", "abl_random_summary",
                          column_config={k: NUMBER for k in summary.columns if k.startswith(("delta", "baseline"))} |
                                        {"share_below_5pct": st.column_config.NumberColumn(format="percent")})
            st.subheader("Every draw")
            widgets.table(draws, f"{stem}-random-draws", "abl_random_draws", height=400 if len(draws) > 50 else "auto",
                          column_config={k: NUMBER for k in ("mse", "mae", "delta_mse", "delta_mae", "baseline_mse")} |
                                        {"masked_heads": st.column_config.TextColumn(width="large")})

# ------------------------------------------------------------------------------------------ pruning curve
with tabs[4]:
    st.caption("**Measured:** iterative pruning (Michel et al. 2019): each step removes the least important of "
               "the heads still on, scored afresh on top of the current mask (*ablation*: ΔMSE of removing it too; "
               "*gradient*: E|∂L/∂ξ|). Heads are chosen, and the stop is decided, on the **val** split (as many "
               "windows): the curve "
               "ends after the first step whose val MSE exceeds (1 + tolerance) × its baseline (× marker). MSE "
               f"is reported on {where}"
               + (" — the same split that chose the heads, so it is optimistic." if split == "val" else "."))
    with st.form("abl_pruning_form", border=True):
        f = st.columns([2, 2, 2, 1.2], vertical_alignment="bottom")
        step = f[0].slider("Heads removed per step (%)", 5, 50, 10, step=5, key="abl_prune_step")
        tolerance = f[1].slider("Tolerance (% over the val baseline)", 1, 50, 10, key="abl_prune_tolerance")
        importance = f[2].radio("Importance", ["ablation", "gradient"], horizontal=True, key="abl_prune_importance")
        run = f[3].form_submit_button("Run pruning", key="abl_run_pruning", **RUN)
    curve = study("pruning", (step, tolerance, importance), run)
    if curve is not None:
        limit = tables.pruning_limit(curve, tolerance)
        kept_steps = curve[curve["within_tolerance"]]
        last = kept_steps.iloc[-1]
        m = st.columns(3)
        m[0].metric("Removable within tolerance", f"{int(last['n_removed'])} of {n_heads} heads",
                    delta=f"{100 * last['fraction_removed']:.0f} %", delta_color="off")
        m[1].metric(f"{split} MSE there", f"{last['mse']:.4g}", delta=f"{last['mse'] - curve['mse'].iloc[0]:+.4g}",
                    delta_color="inverse")
        m[2].metric("Tolerance (val MSE)", f"{limit:.4g}")
        widgets.chart(pruning_figure(curve, limit, split, f"MSE as heads are pruned ({importance} importance, {mode})"),
                      f"{stem}-pruning", "abl_pruning_chart")
        widgets.table(curve, f"{stem}-pruning", "abl_pruning_table",
                      column_config={k: NUMBER for k in ("mse", "mae", "val_mse", "val_mae")} |
                                    {k: st.column_config.TextColumn(width="large") for k in ("newly_removed",
                                                                                             "removed_heads")} |
                                    {"fraction_removed": st.column_config.NumberColumn(format="percent")})

# ------------------------------------------------------------------------------------------ importance vs ablation
with tabs[5]:
    st.caption(f"**Measured:** gradient importance E|∂L/∂ξ_h| of each head's gate at all heads on (captum; "
               f"normalised per site by its L2 norm over heads), against the measured single-head ΔMSE, both on "
               f"{where}. Spearman ρ: do the gradients rank heads as removing them does?")
    with st.form("abl_importance_form", border=True):
        f = st.columns([3, 1], vertical_alignment="bottom")
        method = f[0].radio("Gradient", ["saliency", "integrated_gradients"], horizontal=True, key="abl_imp_method",
                            format_func=lambda m: {"saliency": "saliency at ξ = 1",
                                                   "integrated_gradients": "integrated gradients (20 steps, slow)"}[m])
        run = f[1].form_submit_button("Run comparison", key="abl_run_importance", **RUN)
    # this tab's finished sweep of the same settings (drawn above) is reused instead of sweeping again
    compared = study("importance", (method,), run, None if sweep is None else sweep.table)
    if compared is not None:
        m = st.columns(4)
        imp = compared.table
        if "above_null" in imp:
            tested = int(imp["excess_p"].notna().sum())
            m[3].metric("Above its null reference (BH)", f"{int(imp['above_null'].sum())} of {len(imp)}"
                        if tested else "n/a",
                        help="A mean of |gradient| is positive for any head the loss responds to. Its reference: "
                             "the same head against the errors of windows half the split away. Listed: heads whose "
                             "excess over it is shown above 0 (one-sided t test, Benjamini–Hochberg across the "
                             f"{tested} heads tested; raw, the interval alone: {int(imp['above_null_raw'].sum())})."
                             if tested else f"No interval: {imp['interval'].iloc[0]}.")
        m[0].metric("Spearman ρ (normalised importance vs ΔMSE)",
                    f"{compared.rho:+.3f}" if tables.finite(compared.rho) else "n/a")
        m[1].metric("Spearman ρ (raw importance vs ΔMSE)",
                    f"{compared.rho_raw:+.3f}" if tables.finite(compared.rho_raw) else "n/a")
        if compared.convergence_delta is not None:
            m[2].metric("IG completeness error (mean |δ|)", f"{compared.convergence_delta:.3g}")
        rho = f"ρ = {compared.rho:+.2f}" if tables.finite(compared.rho) else "ρ undefined"
        widgets.chart(importance_scatter(compared.table, f"Gradient importance vs measured ΔMSE ({rho})"),
                      f"{stem}-importance-{method}", "abl_importance_chart")
        widgets.table(tables.lead(compared.table, "site", "head", "importance_normalised", "importance",
                                  "importance_null", "excess", "excess_lo", "excess_hi", "above_null", "delta_mse"),
                      f"{stem}-importance-{method}", "abl_importance_table",
                      column_config=TEXT | {k: NUMBER for k in ("importance", "importance_normalised", "mse",
                                                                 "delta_mse")})
