"""Sparsity explorer: which queries ProbSparse picks, per site and head, and how well its sampled
score M̄ agrees with the exact M.

The window is recorded once per (model, data, split, window, seed) (analysis.attention.sparsity_sites.record_window: one
forward pass, every site); the site on screen is scored exactly, and over the key-sample seeds only when its "Exact vs
sampled" tab (or an agreement colouring of the grid) asks. Each part is cached; choosing a head, a score or a column
only slices them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.compare.pairing import selection_overlap
from informer_lab.ui import attention_rows as attention_rows_view, evidence, second_model, state, widgets
from informer_lab.ui.charts import stamps
from informer_lab.ui.sparsity import cache, charts, tables as views
from informer_lab.ui.tables import file_stem
from informer_lab.ui.widgets import clickable_chart
from informer_lab.analysis.heads.names import head_name
from informer_lab.analysis.learning.embedding import placeholder_values

GRID_KEY = "sp_grid"
SITE_KEY, HEAD_KEY = "sp_site", "sp_head"

st.title("Sparsity explorer")
st.caption("ProbSparse ranks each query by M̄ = max_j s_ij − mean_j s_ij (s = q·k/√D), estimated on U sampled "
           "keys, and gives only the top u = factor·⌈ln L_Q⌉ queries a softmax row; every other (*lazy*) query "
           "returns a stand-in. Here every site is recorded on one window and compared with the exact "
           "M = ln Σ_j exp(s_ij) − mean_j s_ij over all (allowed) keys.")
evidence.note('attention', 'sparsity')

model, data, prepared, seed, checkpoint, config = state.require_page()
H = config.n_heads

# ------------------------------------------------------------------------------------------ controls
c = st.columns([1, 3.4, 1.3, 1.6], gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="sp_split", persist_state="session")
n = state.require_windows(prepared, data, split)
window = state.window_slider(c[1], n, split, "sp", state.forecast_starts(prepared, split, n))
seeds = int(c[2].number_input("Seeds for the agreement", 1, 50, 10, key="sp_seeds", persist_state="session",
                              help="The key sample is drawn with seeds s, s + 1, …, s + n − 1 (s = the sidebar's "
                                   "analysis seed); the agreement table reports the mean and spread over them. "
                                   "Everything else shows seed s."))
second = second_model.picker(model, data, c[3])
try:
    record = cache.recording(model.key, data.key, split, window, seed, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The sparsity report cannot be computed: {err}")
    state.stop_page()

sites = views.site_infos(record.rows)
names = [s.name for s in sites]
by_name = {s.name: s for s in sites}
if st.session_state.get(SITE_KEY) not in names:
    st.session_state[SITE_KEY] = names[0]
if st.session_state.get(HEAD_KEY) not in range(H):
    st.session_state[HEAD_KEY] = 0

split_stamps = prepared.split(split).timestamps[window:window + config.seq_len + config.pred_len]
step_stamps = stamps(split_stamps)  # input step s of this window → its timestamp
st.caption(f"Window {window} of the {split} split: encoder input {split_stamps[0]} → "
           f"{split_stamps[config.seq_len - 1]} ({config.seq_len} steps), forecast {split_stamps[config.seq_len]} → "
           f"{split_stamps[-1]} ({config.pred_len} steps) · key-sample seed {seed} (agreement: seeds {seed}–"
           f"{seed + seeds - 1}).")


def _pick_from_grid() -> None:
    picked = views.grid_pick(widgets.clicked(GRID_KEY))
    if picked is not None and 0 <= picked[0] < len(names) and 0 <= picked[1] < H:
        st.session_state[SITE_KEY], st.session_state[HEAD_KEY] = names[picked[0]], picked[1]


stem = f"sparsity-{file_stem(model.ref.name)}-{split}-w{window}-seed{seed}"


def site_part(site: views.SiteInfo) -> pd.DataFrame:
    """The queries of the site on screen (its exact M and M̄ beside the sampled M̄), ordered by head, position."""
    return views.site_queries(cache.queries(model.key, data.key, record, site.name, checkpoint, prepared), site.name)


def site_agreement(name: str) -> pd.DataFrame:
    return cache.agreement(model.key, data.key, record, seeds, name, checkpoint, prepared)


def every_agreement() -> pd.DataFrame:
    """The agreement of every ProbSparse site (the grid's agreement colourings, the download)."""
    parts = [site_agreement(s.name) for s in sites if s.sparse]
    return pd.concat(parts, ignore_index=True) if parts else site_agreement(sites[0].name)


def every_query() -> pd.DataFrame:
    """Every query of every site (the download: scored on its click)."""
    return pd.concat([cache.queries(model.key, data.key, record, s.name, checkpoint, prepared) for s in sites],
                     ignore_index=True)


# ------------------------------------------------------------------------------------------ detail tabs
def scores_and_queries(site: views.SiteInfo, head: int) -> None:
    """Scores of every query and head at the site; the chosen head's selected queries on the series."""
    part = site_part(site)
    hq = views.head_queries(part, head)
    causal = site.kind == "decoder_self"
    score_options = list(views.SCORES) if site.sparse else ["exact_m", "exact_mbar"]
    if st.session_state.get("sp_score") not in score_options:
        st.session_state["sp_score"] = score_options[0]
    score = st.radio("Score per query", score_options, key="sp_score", format_func=views.SCORES.get,
                     horizontal=True)
    z, positions = views.score_matrix(part, score)
    selected = views.score_matrix(part, "selected")[0].astype(bool)
    if not site.sparse:
        selected = np.zeros_like(selected)  # full attention: every query has a row; nothing to ring
    score_name = {"sampled_mbar": "sampled M̄", "exact_m": "exact M", "exact_mbar": "exact M̄"}[score]
    widgets.chart(charts.score_heatmap(z, positions, selected, score_name,
                                       f"{score_name} per query and head at {site.name}" +
                                       (" (rings: the top-u ProbSparse selected)" if site.sparse else "")),
                  f"{stem}-{site.name}-{score}", "sp_scores")
    if not site.sparse:
        st.caption(f"{site.attention.capitalize()} attention at this site: no sampled M̄ was computed; the exact "
                   "measures (over all the keys full attention would read) are shown.")
    if causal and config.embedding == "lags":
        st.caption(f"Decoder queries: the {config.pred_len} forecast steps only (the lags embedding reads no known "
                   f"rows in the decoder); their values in are {placeholder_values(vars(config))}, beside each "
                   f"channel's values {', '.join(str(g) for g in config.lags if g)} steps back and the true future "
                   "timestamps in the time marks.")
    elif causal:
        st.caption(f"Decoder queries: the first {config.label_len} positions are known history, the rest are the "
                   "forecast placeholders (zeros in, true future timestamps in the time marks).")

    columns = list(prepared.columns)
    target = checkpoint.schema.spec.target
    left, right = st.columns([3, 2], gap="large")
    with left:
        column = st.selectbox("Series", columns, key="sp_column", persist_state="session",
                              index=columns.index(target) if target in columns else len(columns) - 1
                              ) if len(columns) > 1 else columns[0]
        raw = data.frame.values[column].reindex(split_stamps)
        series = pd.DataFrame({"timestamp": split_stamps, "value": raw.to_numpy(),
                               "part": np.where(np.arange(len(split_stamps)) < config.seq_len, "encoder input",
                                                "future (truth, not an input)")})
        chosen = hq[hq["selected"]].copy() if site.sparse else hq.iloc[0:0].copy()
        marks = pd.DataFrame({"timestamp": pd.DatetimeIndex(chosen["timestamp"]),
                              "value": raw.reindex(pd.DatetimeIndex(chosen["timestamp"])).to_numpy(),
                              "position": chosen["position"].to_numpy(),
                              "span": [a if a == b else f"{a} → {b}" for a, b in
                                       zip(stamps(chosen["span_start"]), stamps(chosen["span_end"]))],
                              "rank": chosen["rank_sampled"].to_numpy()})
        widgets.chart(charts.selected_series_figure(series, marks, column,
                                                    f"{column} with the queries head {head} of {site.name} selected",
                                                    split_stamps[config.seq_len]),
                      f"{stem}-{site.name}-h{head}-{column}-selected", "sp_series")
        if site.level:
            st.caption(f"After {site.level} distilling step(s) a query summarises a span of input steps; its marker "
                       "sits at the span's first step (hover shows the span).")
    with right:
        st.markdown("**Selected queries of this head**")
        if site.sparse:
            shown = chosen[["position", "timestamp", "sampled_mbar", "rank_exact"]].rename(
                columns={"sampled_mbar": "sampled M̄", "rank_exact": "exact-M rank"})
            widgets.small_table(shown, f"{stem}-{site.name}-h{head}-selected", "sp_selected", height=320,
                                formats={"sampled M̄": "{:.3f}", "timestamp": "{:%m-%d %H:%M}",
                                         "exact-M rank": "{:.0f}"})
        else:
            st.caption("Full attention: every query is computed.")


def _rows_in_words(site: views.SiteInfo) -> str:
    """What a non-ProbSparse site computes, for the line under the pickers."""
    if site.attention == "full":
        return (f"full attention, L_Q = {site.L_Q} queries × L_K = {site.L_K} keys, a softmax row for every query "
                "(no sampling, no lazy rows).")
    return (f"{site.attention} attention, L_Q = {site.L_Q} queries × L_K = {site.L_K} keys: a softmax row for every "
            "query over the keys its pattern lets it read (zero elsewhere); no sampling, no lazy rows. Exact M and "
            "M̄ below are over all the keys full attention would read.")


def attention_rows(site: views.SiteInfo, head: int) -> None:
    """The chosen head's computed softmax rows, and what the lazy queries get instead."""
    attention_rows_view.draw(record.site_rows(site.name), head, step_stamps, stem, "sp_rows")


def exact_vs_sampled(site: views.SiteInfo, head: int) -> None:
    """Sampled M̄ against an exact measure per query; top-u agreement over seeds with its chance level."""
    causal = site.kind == "decoder_self"
    if not site.sparse:
        st.info(f"{site.attention.capitalize()} attention at this site: nothing is sampled, so there is nothing to "
                "compare.")
        return
    hq = views.head_queries(site_part(site), head)
    against_options = list(views.AGAINST) if causal else ["exact_m", "exact_mbar"]
    if st.session_state.get("sp_against") not in against_options:
        st.session_state["sp_against"] = against_options[0]
    against = st.radio("Compare the sampled M̄ with", against_options, key="sp_against", horizontal=True,
                       format_func=lambda a: views.AGAINST[a][1])
    top = views.in_exact_top(hq, against, site.u)
    left, right = st.columns([3, 2], gap="large")
    with left:
        widgets.chart(charts.exact_vs_sampled_figure(hq, against, views.AGAINST[against][1], top,
                                                     f"Head {head}: sampled M̄ vs exact, seed {seed}"),
                      f"{stem}-{site.name}-h{head}-exact-vs-sampled", "sp_scatter")
    with right:
        st.markdown(f"**Head {head}, seed {seed}:** {int(hq['selected'].sum())} queries selected; "
                    f"{int((hq['selected'].to_numpy() & top).sum())} of them are in the exact top-u "
                    f"(u = {site.u} of L_Q = {site.L_Q}; a random choice would hit {site.u * site.u / site.L_Q:.1f} "
                    "on average).")
        st.caption("Red: the queries ProbSparse gave a softmax row (top-u by the sampled M̄); blue: lazy. "
                   "Filled / open: in / not in the top-u by the exact measure; crosses are the disagreements."
                   + (" The lazy queries outside the exact top-u are drawn one per cell of about 4 px (the others "
                      "lie under its marker; the Every head tab's CSV has every query)." if charts.thins_bulk(hq, top)
                      else ""))
        if causal:
            st.caption("Causal site: the exact M uses only the keys j ≤ i a query may attend to; compare with "
                       "'every key' to separate sampling error from the mask mismatch.")
    agreement = site_agreement(site.name)
    view = views.agreement_view(agreement, site.name, against)
    st.markdown(f"**Top-u agreement at {site.name}** (u = {site.u} of L_Q = {site.L_Q}), mean and standard "
                f"deviation over {seeds} key-sample seed{'s' if seeds > 1 else ''} ({seed}–{seed + seeds - 1})")
    widgets.table(view, f"{stem}-{site.name}-agreement-{against}", "sp_agreement",
                  column_config={c: st.column_config.NumberColumn(format="%.3f") for c in view.columns
                                 if c not in ("head", "u", "L_Q", "seeds")})
    st.caption("overlap@u = |sampled top-u ∩ exact top-u| / u; a random top-u overlaps u / L_Q on average "
               "(chance). Jaccard = |∩| / |∪|. Spearman ρ ranks all L_Q queries. sd: standard deviation over "
               "seeds (blank with one seed).")
    widgets.lazy_csv_download(every_agreement, f"{stem}-agreement-all-sites", "sp_agreement_all",
                              "Download the agreement of every site and measure (CSV)")


def every_head(site: views.SiteInfo, head: int) -> None:
    """The per-head summary of every site, and every query's numbers."""
    heads_view = views.heads_view(record.heads)
    columns_config = {c: st.column_config.Column(help=text) for c, text in views.HEAD_HELP.items()}
    columns_config.update({c: st.column_config.NumberColumn(format="%.3f", help=views.HEAD_HELP[c]) for c in
                    ("entropy", "flat entropy", "max weight", "distance", "lag mass")})
    widgets.table(heads_view, f"{stem}-heads", "sp_heads", column_config=columns_config)
    st.caption(f"Over the computed rows of seed {seed}. Entropy in nats (*flat entropy*: a uniform row over the "
               "allowed keys). Distance and lag in input steps; a lag is query − key (positive: the key lies in the "
               "past), a distilled layer's lag counted × 2 per distilling step. *prev. step*: the dominant lag is one "
               "step of the layer; *seasonal*: it is within ±1 step of a seasonal period of the data's frequency "
               "(*season*).")
    widgets.lazy_csv_download(every_query, f"{stem}-queries", "sp_queries",
                              "Download every query of every site: scores, ranks, selection (CSV)")


def side_by_side(site: views.SiteInfo, head: int) -> None:
    """The second model on the window whose forecast starts at the same row, same key-sample seed: which queries
    each selects, per head, and the chosen head's scores in both."""
    j = second_model.window_of(second, prepared, split, window)
    if j is None:
        st.info(second_model.no_window_note(second, split, window))
        return
    try:
        other = cache.sparsity(second.model.key, data.key, split, j, seed, 1, second.model.checkpoint,
                               second.prepared)
    except (InformerLabError, ValueError) as err:
        st.error(f"The second model's sparsity cannot be computed: {err}")
        return
    overlap = selection_overlap(every_query(), other.queries)
    names = (model.ref.name, second.name)
    st.caption(f"**{second.name}**, its window {j} of the {split} split (its forecast starts at the same row as "
               f"window {window}), key-sample seed {seed}. Queries are matched by timestamp, heads by site name and "
               "number. *Jaccard*: |A ∩ B| / |A ∪ B| of the two selected sets; *ρ*: Spearman correlation of the "
               "two heads' exact M over the shared queries. A full-attention site selects every query, so its Jaccard "
               "is 1 by construction.")
    if overlap.empty:
        st.info(f"{second.name} has none of {model.ref.name}'s attention sites.")
        return
    chosen = overlap[(overlap["site"] == site.name) & (overlap["head"] == head)]
    if len(chosen):
        row = chosen.iloc[0]
        m = st.columns(4)
        m[0].metric("Selected by both", f"{row['both']} of {row['selected_a']} / {row['selected_b']}")
        m[1].metric("Jaccard of the selections", f"{row['jaccard']:.2f}" if pd.notna(row["jaccard"]) else "n/a")
        m[2].metric(f"Only {model.ref.name} / only {second.name}", f"{row['only_a']} / {row['only_b']}")
        m[3].metric("ρ of exact M", f"{row['spearman']:+.2f}" if pd.notna(row["spearman"]) else "n/a")
        hq = views.head_queries(site_part(site), head)
        hq_b = views.head_queries(views.site_queries(other.queries, site.name), head)
        widgets.chart(charts.paired_scores_figure(hq, hq_b, names, f"{head_name(site.name, head)}: exact M and the "
                                                  "selected queries of both models"),
                      f"{stem}-{site.name}-h{head}-vs-{file_stem(second.name)}", "sp_pair_scores")
    else:
        st.info(f"{second.name} has no {site.name} head {head}.")
    st.markdown("**Every head both models have** (lowest Jaccard first: where the selections part most)")
    view = overlap.sort_values("jaccard", na_position="last", kind="stable").rename(
        columns={"selected_a": f"selected · {names[0]}", "selected_b": f"selected · {names[1]}",
                 "only_a": f"only {names[0]}", "only_b": f"only {names[1]}", "spearman": "ρ exact M"})
    widgets.table(view, f"{stem}-vs-{file_stem(second.name)}-selections", "sp_pair_table",
                  column_config={"jaccard": st.column_config.ProgressColumn("jaccard", min_value=0, max_value=1,
                                                                            format="%.2f"),
                                 "ρ exact M": st.column_config.NumberColumn(format="%+.2f")})


# ------------------------------------------------------------------------------------------ grid and detail
TABS = {"Scores and selected queries": scores_and_queries, "Attention rows": attention_rows,
        "Exact vs sampled": exact_vs_sampled, "Every head": every_head}
if second is not None:
    TABS[f"Side by side with {second.name}"] = side_by_side


@st.fragment
def explorer() -> None:
    """The grid and the chosen head's detail. A fragment: picking a head, a site or a tab reruns only this part
    (the report is the one already fetched), and only the open tab is drawn (lazy tabs)."""
    st.subheader("Layer × head grid")
    grid_col, pick_col = st.columns([3, 2], gap="large")
    with pick_col:
        statistic = st.selectbox("Colour the grid by", list(views.GRID_STATISTICS), key="sp_stat",
                                 format_func=views.GRID_STATISTICS.get, persist_state="session")
        site_name = st.selectbox("Attention site", names, key=SITE_KEY, format_func=lambda s: by_name[s].short_label,
                                 persist_state="session")
        head = st.selectbox("Head", list(range(H)), key=HEAD_KEY, format_func=lambda h: f"head {h}",
                            persist_state="session")
        site = by_name[site_name]
        st.caption("Click a cell of the grid to show that head below (or pick it here).")
        if site.sparse:
            st.markdown(f"**{site.name}**: L_Q = {site.L_Q} queries, L_K = {site.L_K} keys; ProbSparse computes "
                        f"**u = {site.u}** softmax rows per head; the other {site.L_Q - site.u} queries get "
                        f"**{site.lazy_rule}**.")
        else:
            st.markdown(f"**{site.name}**: {_rows_in_words(site)}")
    with grid_col:
        by_agreement = statistic not in record.heads.columns and statistic != "entropy_ratio"
        grid = views.grid_table(record.heads, every_agreement() if by_agreement else pd.DataFrame(), sites, statistic)
        clickable_chart(charts.head_grid_figure(grid, sites, H, views.GRID_TITLES[statistic]),
                        f"{stem}-grid-{statistic}", GRID_KEY, _pick_from_grid)

    st.header(head_name(site.name, head), divider="gray")
    widgets.lazy_tabs(TABS, "sp_tab", site, head)


explorer()
