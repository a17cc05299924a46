"""Query/key map: one head's queries and keys of many windows in one 2-D map (AttentionViz-style).

`analysis.instruments.qk_map.qk_map` records only the chosen site's queries, keys, M̄ and top-u, a batch of windows at a
time, and projects them jointly by PCA after a scaling and key translation that keep every softmax row. It is
cached by (model, data, split, site, head, windows, seed, normalise); colouring and clicks only re-slice it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.instruments.qk_map import qk_map_table
from informer_lab.ui import evidence, nav, state, widgets
from informer_lab.ui.qk_map import cache, charts, tables
from informer_lab.ui.tables import file_stem
from informer_lab.ui.widgets import clickable_chart
from informer_lab.analysis.heads.names import head_name

SPARSITY_PAGE = nav.page_file("sparsity")
POINT_KEY, CHART_KEY, POINT_FRAGMENT = "qk_point", "qk_map", "qk_point_detail"
WINDOW_CHOICES = (64, 256, 1024)

st.title("Query/key map")
st.caption("The queries and keys of one head over many windows, projected **jointly** into two dimensions (PCA), "
           "so that a query lies near the keys it attends to. Before the PCA, queries are scaled by c and keys by "
           "1/c (every q·k unchanged) and the keys are moved so both clouds share a centre (every softmax row "
           "unchanged: a shift of all keys adds a constant to each row's logits); c makes both clouds equally spread. "
           "Rings: the queries ProbSparse selected (its top-u) in their window. The buttons above the map colour it "
           "by kind, input step, hour, weekday, sampled M̄ or window.")
evidence.note('qk_map')

model, data, prepared, seed, checkpoint, config = state.require_page()
sites = [s.name for s in checkpoint.model.sites]

c = st.columns([1, 1.6, 1, 1.6, 1.2], vertical_alignment="bottom", gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="qk_split", persist_state="session")
site = c[1].selectbox("Attention site", sites, key="qk_site", persist_state="session")
head = c[2].selectbox("Head", list(range(config.n_heads)), key="qk_head", format_func=lambda h: f"head {h}",
                      persist_state="session")
windows = c[3].radio("Windows", WINDOW_CHOICES, index=tables.default_windows(WINDOW_CHOICES, config.seq_len),
                     horizontal=True, key="qk_windows", persist_state="session",
                     help="How many windows of the split (evenly strided) give their queries and keys. By default as "
                          "many as keep the map under a million points (256 at seq_len 1440, 64 at 5760).")
normalise = c[4].toggle("Normalise", value=True, key="qk_normalise", persist_state="session",
                        help="On: queries × c, keys ÷ c and the keys moved onto the queries' centre (no softmax row "
                             "changes). Off: the raw query and key vectors, as the model computes them.")
n = state.require_windows(prepared, data, split)
map_key = (model.key, data.key, split, site, int(head), int(windows), seed, bool(normalise))
try:
    the_map = cache.the_map(*map_key, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The map cannot be computed: {err}")
    state.stop_page()
points = cache.points(map_key, the_map, seed)
stem = f"qk-map-{file_stem(model.ref.name)}-{split}-{site}-h{head}-{len(the_map.windows)}w-seed{seed}"

N = len(the_map.windows)
queries, keys = int(the_map.is_query.sum()), int((~the_map.is_query).sum())
st.markdown(f"**{head_name(site, head)}**: {N:,} windows of the {split} split, {queries:,} queries and {keys:,} keys "
            f"({the_map.attention} attention); scale c = {the_map.normalisation.scale:.3g}; PCA keeps "
            f"{the_map.explained.sum():.0%} of the joint variance; key-sample seed {seed}." +
            (f" Drawn: {len(points):,} of the {the_map.n_points:,} points (a seeded sample that keeps every "
             "selected query); the CSV holds them all." if len(points) < the_map.n_points else ""))


def _pick() -> None:
    """A click on the map: the clicked point's detail, and nothing else, reruns (the map stays as it is drawn)."""
    point = tables.clicked_point(widgets.clicked(CHART_KEY), points)
    if point is not None and point != st.session_state.get(POINT_KEY):
        st.session_state[POINT_KEY] = point
        st.rerun(POINT_FRAGMENT)


@st.fragment
def the_picture() -> None:
    """The map, with its colourings as the chart's own buttons (recoloured in the browser). A fragment: a click on a
    point reruns the point's fragment alone (`_pick`), never the page."""
    clickable_chart(charts.map_figure(points, tables.colourings(points), tables.COLOURS,
                                      f"{head_name(site, head)}: queries and keys of {N:,} windows", tuple(the_map.explained)),
                    stem, CHART_KEY, _pick)
    widgets.lazy_csv_download(lambda: qk_map_table(the_map), f"{stem}-points", "qk_points",
                              f"Download all {the_map.n_points:,} points (CSV)")


@st.fragment(key=POINT_FRAGMENT)
def the_point() -> None:
    """The clicked point. A fragment of its own, rerun by the map's click alone: the map is not sent again."""
    point = st.session_state.get(POINT_KEY)
    if point is None or point >= the_map.n_points:
        st.caption("Click a point to see its window, its position and its attention row.")
        return
    chosen_point(tables.point_summary(the_map, point))


def chosen_point(p: dict) -> None:
    """The clicked query's attention row (or, for a key, the weight each computed query row puts on it)."""
    st.subheader(f"{p['kind'].capitalize()} {p['position']} of window {p['window']}")
    when = "" if pd.isna(p["timestamp"]) else f" ({p['timestamp']})"
    st.markdown(f"Input step {p['step']}{when}" +
                (f"; sampled M̄ {p['mbar']:.3f}; {'selected' if p['selected'] else 'not selected (lazy)'} by "
                 "ProbSparse" if p["kind"] == "query" and not np.isnan(p["mbar"]) else ""))
    run = cache.window_rows(model.key, data.key, split, p["window"], seed, checkpoint, prepared)
    at = run.site(site)
    stamps = prepared.split(split).timestamps
    if p["kind"] == "query":
        weights, computed = at.row(int(head), p["position"])
        row = pd.DataFrame({"step": at.key_steps, "original": weights, "computed_original": computed})
        key_stamps = stamps[p["window"] + np.maximum(at.key_steps, 0)] if (at.key_steps >= 0).all() else None
        log = st.toggle("Log scale", key="qk_log", value=len(at.key_steps) > 200,
                        help="Long rows spread their weight thin: a log scale shows the small weights.")
        widgets.chart(charts.row_figure(row, key_stamps, f"Attention row of query {p['position']}" +
                                        ("" if computed else f" (lazy: the row its stand-in {at.lazy_rule} implies)"),
                                        log), f"{stem}-w{p['window']}-q{p['position']}", "qk_row")
    elif at.rows_original is not None:
        rows, chosen = at.rows_original[int(head)], at.selected_original[int(head)]  # [u, L_K], [u]
        order = np.argsort(chosen)
        widgets.chart(charts.key_figure(rows[order, p["position"]], chosen[order], f"Weight on key {p['position']} "
                                        "from each computed query row"), f"{stem}-w{p['window']}-k{p['position']}",
                      "qk_key")
    if st.button("Open this window and head in the Sparsity explorer", key="qk_open", icon=":material/open_in_new:"):
        st.session_state.update({"sp_split": split, f"sp_window_{split}": p["window"], "sp_site": site,
                                 "sp_head": int(head)})
        st.switch_page(SPARSITY_PAGE)


the_picture()
the_point()
