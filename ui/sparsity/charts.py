"""Figures of the Sparsity explorer: the layer × head grid, scores per query, selected queries, exact vs sampled."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.ui.charts import HISTORY, SEQUENTIAL, TRUTH, layout, one_per_cell, stamps, thin, vline
from informer_lab.ui.sparsity.tables import SiteInfo

SELECTED = "#d62728"
EXACT = "#1f77b4"


def head_grid_figure(grid: pd.DataFrame, sites: Sequence[SiteInfo], n_heads: int, statistic: str) -> go.Figure:
    """The layer × head grid: a heatmap of a per-head statistic, and over it one invisible marker per cell.

    Plotly heatmap clicks do not reach Python in Streamlit; scatter points do (selection "points").
    Each marker carries customdata (site index, head); `hoverdistance=-1` makes a click anywhere in a
    cell pick its own marker (the nearest centre of a regular grid is the cell's).

    The chosen cell is not marked, on purpose (the page names it beside and below the grid): the figure
    stays byte-identical while the user clicks through heads, and Streamlit's frontend does not redraw a
    chart whose spec is unchanged. A ring cost every click a full redraw of the grid (~0.1 s of the 1 s a
    re-slicing click may take on two cores).
    """
    n = len(sites)
    z = np.full((n, n_heads), np.nan)
    z[grid["site_index"].to_numpy(), grid["head"].to_numpy()] = grid["value"].to_numpy()
    finite = np.isfinite(z)
    text = np.where(finite, np.vectorize(lambda v: f"{v:.2f}")(np.where(finite, z, 0.0)), "n/a")
    cells = grid.assign(label=[sites[i].label for i in grid["site_index"]])
    value_text = [("n/a (full attention)" if not np.isfinite(v) else f"{v:.4g}") for v in cells["value"]]
    heatmap = go.Heatmap(z=z, x=list(range(n_heads)), y=list(range(n)), text=text, texttemplate="%{text}",
                         colorscale=SEQUENTIAL, hoverinfo="skip", xgap=2, ygap=2, colorbar=dict(thickness=12, len=0.9))
    markers = go.Scatter(
        x=cells["head"], y=cells["site_index"], mode="markers", name="cells",
        marker=dict(symbol="square", size=40, color="#000000", opacity=0.01),
        selected=dict(marker=dict(opacity=0.01)), unselected=dict(marker=dict(opacity=0.01)),
        customdata=np.stack([cells["site_index"], cells["head"]], axis=1),
        text=[f"{label}<br>head {h}: {v}" for label, h, v in zip(cells["label"], cells["head"], value_text)],
        hovertemplate="%{text}<br><i>click to show this head</i><extra></extra>", showlegend=False)
    return go.Figure([heatmap, markers], layout(
        statistic, 110 + 46 * n, legend=False, top=80, hoverdistance=-1, clickmode="event+select", dragmode=False,
        xaxis=dict(tickvals=list(range(n_heads)), ticktext=[f"head {h}" for h in range(n_heads)], side="top",
                   showgrid=False, zeroline=False, fixedrange=True, range=[-0.5, n_heads - 0.5]),
        yaxis=dict(tickvals=list(range(n)), ticktext=[s.name for s in sites], autorange="reversed",
                   showgrid=False, zeroline=False, fixedrange=True)))


def score_heatmap(z: np.ndarray, positions: pd.DataFrame, selected: np.ndarray, score: str, title: str) -> go.Figure:
    """Scores per query (x: the query's timestamp) and head (y); rings on the queries ProbSparse selected.

    The chosen head is not marked here on purpose: the figure stays the same while the user steps through
    the heads of one site, so the browser does not redraw it.

    z, selected: [H, L_Q]; positions: position, step, timestamp, span_start, span_end, segment.
    """
    H, L_Q = z.shape
    x = pd.DatetimeIndex(positions["timestamp"])
    heads = [f"head {h}" for h in range(H)]
    # Hover data per cell is numbers only (the query's position; 1 if selected): at seq_len 1440 the strings per
    # cell (span, segment, state) were 70 % of the figure's 367 kB and most of its build. A query's span and segment
    # follow from its position: one line of the hover template says it, for sites that summarise spans.
    widths = pd.DatetimeIndex(positions["span_end"]) - pd.DatetimeIndex(positions["span_start"])
    span_note = "" if not (widths > pd.Timedelta(0)).any() else \
        f"<br>(summarises the input steps from here to {str(widths.median()).removeprefix('0 days ')} later)"
    custom = np.stack([np.broadcast_to(positions["position"].to_numpy(), (H, L_Q)), selected.astype(np.int8)],
                      axis=-1)
    steps = np.diff(x.to_numpy()).astype("timedelta64[ms]").astype(np.int64)  # ms: plotly's unit for a date step
    regular = len(x) > 2 and (steps == steps[0]).all() and steps[0] > 0  # evenly spaced: a start and a step
    where = dict(x0=x[0], dx=int(steps[0])) if regular else dict(x=x)  # not L_Q dates
    traces = [go.Heatmap(
        z=z, **where, y=heads, customdata=custom, colorscale=SEQUENTIAL,
        colorbar=dict(title=dict(text=score), thickness=12),
        hovertemplate="%{y} · query %{customdata[0]}<br>%{x}" + span_note +
                      f"<br>{score} = %{{z:.4g}}<br>selected: %{{customdata[1]}} (1: a softmax row, 0: lazy)"
                      "<extra></extra>")]
    hh, pp = np.nonzero(selected)
    if len(hh):
        traces.append(go.Scatter(x=x[pp], y=[heads[h] for h in hh], mode="markers", hoverinfo="skip",
                                 name="selected by ProbSparse (top-u by sampled M̄)",
                                 marker=dict(symbol="circle-open", size=7, color="#ffffff", line=dict(width=1.5))))
    future = positions.index[positions["segment"] == "future"]
    shapes, notes = [], []
    if 0 < len(future) < len(positions):  # known steps before it (a lags model's decoder has none: no line)
        shapes.append(vline(x[future[0]], "#555555"))
        notes.append(dict(x=x[future[0]], y=1.0, yref="paper", text="forecast starts", showarrow=False,
                          xanchor="left", yanchor="bottom", font=dict(size=11, color="#555555")))
    return go.Figure(traces, layout(
        title, 150 + 34 * H, shapes=shapes, annotations=notes, yaxis=dict(autorange="reversed"),
        xaxis=dict(title=dict(text="query timestamp (start of the span it summarises)"))))


def selected_series_figure(series: pd.DataFrame, marks: pd.DataFrame, column: str, title: str,
                           forecast_start) -> go.Figure:
    """The window's target column with the chosen head's selected queries marked at their timestamps.

    series: timestamp, value, part ("encoder input" | "future (truth, not an input)");
    marks: timestamp, value, position, span, rank (sampled) — one row per selected query.
    """
    traces = []
    for part, colour, dash in (("encoder input", TRUTH, "solid"), ("future (truth, not an input)", HISTORY, "dot")):
        rows = series[series["part"] == part]
        rows = rows.loc[thin(rows["value"]).index]  # a long input: the min and max of each bucket of steps
        if len(rows):
            traces.append(go.Scatter(x=rows["timestamp"], y=rows["value"], mode="lines", name=part,
                                     line=dict(color=colour, width=1.6, dash=dash)))
    if len(marks):
        traces.append(go.Scatter(
            x=marks["timestamp"], y=marks["value"], mode="markers", name=f"selected queries ({len(marks)})",
            marker=dict(color=SELECTED, size=9, symbol="diamond", line=dict(color="#ffffff", width=1)),
            customdata=np.stack([marks["position"], marks["span"], marks["rank"]], axis=1),
            hovertemplate="query %{customdata[0]} · %{customdata[1]}<br>rank by sampled M̄: %{customdata[2]}"
                          f"<br>{column} = %{{y:.4g}}<extra></extra>"))
    return go.Figure(traces, layout(
        title, 330, shapes=[vline(forecast_start)] if forecast_start is not None else [],
        xaxis=dict(title=dict(text="timestamp")), yaxis=dict(title=dict(text=column))))


MAX_SCATTER_POINTS = 1000  # lazy, non-top queries up to which each is drawn; above, one a cell of ~4 px (at seq_len
# 5760 the 5,760 markers of a first layer were ~2 s of the tab's 2.5 s in Chromium, SVG or WebGL)


def thins_bulk(hq: pd.DataFrame, in_exact_top: np.ndarray) -> bool:
    """Whether `exact_vs_sampled_figure` draws the lazy, non-top queries one a cell (there are more than
    MAX_SCATTER_POINTS of them) rather than each."""
    return int((~hq["selected"].to_numpy() & ~in_exact_top).sum()) > MAX_SCATTER_POINTS


def exact_vs_sampled_figure(hq: pd.DataFrame, against: str, against_label: str, in_exact_top: np.ndarray,
                            title: str) -> go.Figure:
    """Per query of one head: sampled M̄ (y) vs an exact measure (x); colour = ProbSparse's choice,
    symbol = in the exact top-u. Every selected or exact-top query is drawn; the lazy, non-top bulk of a long input
    one point a cell of the chart (`ui.charts.one_per_cell`: the others lie under it), its legend saying so."""
    groups = [(True, True, "selected · in exact top-u", SELECTED, "circle"),
              (True, False, "selected · not in exact top-u", SELECTED, "x"),
              (False, True, "lazy · in exact top-u (missed)", EXACT, "x"),
              (False, False, "lazy · not in exact top-u", EXACT, "circle-open")]
    x_all, y_all = hq[against].to_numpy(np.float64), hq["sampled_mbar"].to_numpy(np.float64)
    ranges = [(np.nanmin(v), np.nanmax(v)) if np.isfinite(v).any() else (0.0, 1.0) for v in (x_all, y_all)]
    traces = []
    for sel, top, name, colour, symbol in groups:
        part = hq[(hq["selected"].to_numpy() == sel) & (in_exact_top == top)]
        if not len(part):
            continue
        label = f"{name} ({len(part)})"
        if not sel and not top and thins_bulk(hq, in_exact_top):  # the bulk of a long input
            drawn = part.iloc[one_per_cell(part[against], part["sampled_mbar"], *ranges)]
            label = f"{name} ({len(part)}, {len(drawn)} drawn)"
            part = drawn
        traces.append(go.Scatter(
            x=part[against], y=part["sampled_mbar"], mode="markers", name=label,
            marker=dict(color=colour, symbol=symbol, size=8, line=dict(width=1.5, color=colour)),
            customdata=np.stack([part["position"], stamps(part["timestamp"]), part["rank_sampled"],
                                 part["rank_exact"]], axis=1),
            hovertemplate="query %{customdata[0]} · %{customdata[1]}<br>sampled M̄ %{y:.4g} (rank %{customdata[2]})"
                          "<br>exact %{x:.4g} (rank by exact M: %{customdata[3]})<extra></extra>"))
    return go.Figure(traces, layout(title, 420, legend="right", xaxis=dict(title=dict(text=against_label)),
                                    yaxis=dict(title=dict(text="sampled M̄ (recorded)"))))


SECOND = "#9467bd"


def paired_scores_figure(first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str], title: str
                         ) -> go.Figure:
    """One head of one site in two models on the same rows: each model's exact M per query timestamp, and which
    queries ProbSparse selected: circles for the first model, diamonds for the second, filled black where both
    chose the query. first / second: head_queries of each model."""
    traces = []
    for rows, name, colour, symbol in ((first, names[0], SELECTED, "circle-open"),
                                       (second, names[1], SECOND, "diamond-open")):
        traces.append(go.Scatter(x=rows["timestamp"], y=rows["exact_m"], mode="lines", name=f"exact M · {name}",
                                 line=dict(color=colour, width=1.5)))
        chosen = rows[rows["selected"]]
        traces.append(go.Scatter(x=chosen["timestamp"], y=chosen["exact_m"], mode="markers",
                                 name=f"selected · {name}", marker=dict(color=colour, size=10, symbol=symbol,
                                                                         line=dict(width=2)),
                                 hovertemplate="%{x}: M %{y:.3f}<extra>" + name + "</extra>"))
    both = first[first["selected"]].merge(second.loc[second["selected"], ["timestamp"]], on="timestamp")
    traces.append(go.Scatter(x=both["timestamp"], y=both["exact_m"], mode="markers", name="selected by both",
                             marker=dict(color="#222222", size=6, symbol="circle")))
    return go.Figure(traces, layout(title, 400, hovermode="closest", legend="right",
                                    yaxis=dict(title=dict(text="exact M"))))
