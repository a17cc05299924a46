"""One head's computed softmax rows and what its lazy queries get instead: the view the Sparsity and Pyramid
screens share (its shaping, its figure and its drawing)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from informer_lab.analysis.attention.recording import SiteRows

from . import widgets
from .charts import WEIGHTS, layout


MAX_HEIGHT = 900  # px: long rows are drawn in this height (zoom for detail), not one 16-px band per row
MAX_LABELS = 12  # query labels written on the y axis; the hover names every row (each label costs the browser a text
# measurement on every draw: 40 of them were a third of the chart's 0.3 s in Chromium at seq_len 1440)
LOG_FLOOR = 1e-6  # weights below this are drawn as this on the log scale
MAX_HOVER_CELLS = 20_000  # cells up to which each carries its timestamp and weight for the hover
MAX_KEY_COLUMNS = 1440  # keys drawn one column each up to this; longer rows are drawn in bins of keys (a chart is
# narrower than that in pixels; at seq_len 5760 a first layer's rows were 259,200 cells)


def key_bin_width(L_K: int) -> int:
    """How many neighbouring keys one column stands for: 1 up to MAX_KEY_COLUMNS keys, else the fewest that fit."""
    return max(1, -(-L_K // MAX_KEY_COLUMNS))


def binned_max(z: np.ndarray, width: int) -> np.ndarray:
    """The largest weight of each run of `width` keys: [u, L_K] → [u, ⌈L_K / width⌉] (the last run may be shorter).
    The largest, not the sum: a peak keeps its height whatever the bin, and the log colour of a bin is its peak's."""
    if width == 1:
        return z
    u, L_K = z.shape
    padded = np.zeros((u, -(-L_K // width) * width), dtype=z.dtype)  # weights are ≥ 0: padding never wins
    padded[:, :L_K] = z
    return padded.reshape(u, -1, width).max(axis=-1)


def rows_heatmap(rows: HeadRows, query_stamps: Sequence[str], key_stamps: Sequence[str], title: str,
                 causal: bool, log: bool = False) -> go.Figure:
    """The computed softmax rows of one head: y = its selected queries (in time order), x = keys.

    log: colour by log10 of the weight (a row over 1,440 keys spreads its mass thin: on a linear scale it is
    almost white). Long inputs stay readable: the figure is at most MAX_HEIGHT px tall with at most MAX_LABELS
    query labels (every row is in the hover), the key axis carries about 12 labels."""
    labels = [f"q{p} · {s}" for p, s in zip(rows.query_positions, query_stamps)]
    x = list(range(len(key_stamps)))
    step = max(1, len(x) // 12)
    every = max(1, -(-len(labels) // MAX_LABELS))
    width = key_bin_width(len(key_stamps))
    drawn = binned_max(rows.z, width)
    z = (np.log10(np.maximum(drawn, LOG_FLOOR)) if log else drawn).astype(np.float32)  # float32: half the JSON
    what = "log₁₀ weight" if log else "weight"
    if width > 1:  # a column is a bin of keys: the hover names its first key and its peak
        custom = None
        hover = f"%{{y}}<br>keys from %{{x}} (a bin of {width})<br>largest {what} %{{z:.4g}}<extra></extra>"
        title += f" · bins of {width} keys"
    elif rows.z.size <= MAX_HOVER_CELLS:  # each cell's timestamp and true weight in its hover
        custom = np.stack([np.broadcast_to(np.asarray(key_stamps, dtype=object), rows.z.shape),
                           np.broadcast_to(rows.z, rows.z.shape)], axis=-1)
        hover = "%{y}<br>key %{x} · %{customdata[0]}<br>weight %{customdata[1]:.4g}<extra></extra>"
    else:  # per-cell hover data would multiply the page's JSON (16 MB for 816 × 360): the axes carry the times
        custom, hover = None, f"%{{y}}<br>key %{{x}}<br>{what} %{{z:.4g}}<extra></extra>"
    heatmap = go.Heatmap(  # x: key positions from x0 by dx (an explicit list of L_K numbers cost more to draw)
        z=z, x0=0, dx=width, y=labels, customdata=custom, colorscale=WEIGHTS,
        zmin=np.log10(LOG_FLOOR) if log else 0,
        colorbar=dict(title=dict(text=what), thickness=12), hovertemplate=hover)
    return go.Figure([heatmap], layout(
        title, min(MAX_HEIGHT, max(260, 120 + 16 * len(labels))), legend=False,
        xaxis=dict(tickvals=x[::step], ticktext=[f"{i}<br>{key_stamps[i][5:]}" for i in x[::step]],
                   title=dict(text="key position · timestamp" + (" (causal: weight 0 after the query)" if causal
                                                                 else ""))),
        yaxis=dict(autorange="reversed", type="category", tickfont=dict(size=10),
                   tickvals=labels[::every] if every > 1 else None)))


def ranges_text(positions: Iterable[int], limit: int = 24) -> str:
    """[0, 1, 2, 5, 7, 8] → '0–2, 5, 7–8' (at most `limit` runs, then '…')."""
    values = sorted(int(p) for p in positions)
    runs: list[tuple[int, int]] = []
    for p in values:
        if runs and p == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs]
    return ", ".join(parts[:limit]) + (", …" if len(parts) > limit else "") if parts else "none"


@dataclass(frozen=True, eq=False)
class HeadRows:
    """The computed attention rows of one head, ordered by query position, for a heatmap.

    z: [u, L_K]; query_positions/query_steps: [u]; key_steps: [L_K]; lazy: positions without a row.
    """

    z: np.ndarray
    query_positions: np.ndarray
    query_steps: np.ndarray
    key_steps: np.ndarray
    lazy: np.ndarray
    rule: str
    rule_text: str


def head_rows(site_rows: SiteRows, head: int, batch_index: int = 0) -> HeadRows:
    rows = site_rows.rows[batch_index, head]  # [u, L_K]
    selected = site_rows.selected[batch_index, head]  # [u]
    order = np.argsort(selected, kind="stable")
    L_Q = len(site_rows.query_steps)
    lazy = np.setdiff1d(np.arange(L_Q), selected)
    return HeadRows(rows[order], selected[order], site_rows.query_steps[selected[order]], site_rows.key_steps,
                    lazy, site_rows.lazy_rule, site_rows.lazy_rows)


def draw(site_rows: SiteRows, head: int, step_stamps: Sequence[str], file_stem: str, key: str) -> None:
    """What a head's lazy queries get (in words), then its computed softmax rows as a heatmap.

    step_stamps: the timestamp label of every input step of the window (queries and keys sit at steps).
    """
    rows = head_rows(site_rows, head)
    L_Q, L_K = len(site_rows.query_steps), len(site_rows.key_steps)
    with st.container(border=True):
        if rows.rule != "full attention":
            st.markdown(f"**Lazy queries: {len(rows.lazy)} of {L_Q}, not drawn below (no softmax row).** "
                        f"Rule at this site: **{rows.rule}**: {rows.rule_text}.  \n"
                        f"Lazy positions: {ranges_text(rows.lazy)}")
        else:
            st.markdown(f"**No lazy queries**: {rows.rule_text}.")
    log = st.toggle("Log colour scale", value=L_K > 200, key=f"{key}_log",
                    help="Colour by log₁₀ of the weight: long rows spread their mass thin, and a linear scale "
                         "shows them almost white.")
    widgets.chart(rows_heatmap(rows, [step_stamps[s] for s in rows.query_steps],
                               [step_stamps[s] for s in rows.key_steps],
                               f"Softmax rows of head {head} at {site_rows.site}: "
                               f"{len(rows.query_positions)} computed rows × {L_K} keys",
                               site_rows.kind == "decoder_self", log),
                  f"{file_stem}-{site_rows.site}-h{head}-rows{'-log' if log else ''}", key)
    if (width := key_bin_width(L_K)) > 1:
        st.caption(f"{L_K} keys are more than the chart has pixels: each column is a bin of {width} "
                   "neighbouring keys coloured by the largest weight in it (a peak keeps its height; the hover "
                   "names the bin's first key).")
    if site_rows.level:
        st.caption(f"After {site_rows.level} distilling step(s) each query and key stands for a span of input "
                   "steps; the labels give the span's first timestamp.")
