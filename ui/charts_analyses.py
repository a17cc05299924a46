"""Plotly figures of the analysis pages (sparsity, pyramid, attribution, compare).

Each takes arrays and tables already shaped by `ui.tables_analyses` and only draws them.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .charts import HISTORY, TRUTH, layout, vline
from .tables_analyses import HeadRows, SiteInfo, steps_text

SELECTED = "#d62728"
EXACT = "#1f77b4"
HIGHLIGHT = "#ff7f0e"
SEQUENTIAL = "Viridis"
WEIGHTS = "Blues"
DIVERGING = "RdBu_r"
MODEL_COLOURS = {"informer": "#d62728", "informer_full_counterfactual": "#1f77b4", "full_attention_model": "#9467bd",
                 "last_value": "#7f7f7f", "seasonal_naive": "#2ca02c", "linear": "#ff7f0e"}
STAMP = "%Y-%m-%d %H:%M"
REPLICA_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


def stamps(values) -> np.ndarray:
    """Timestamps as short strings for hover text."""
    return pd.DatetimeIndex(values).strftime(STAMP).to_numpy()


# ============================================================================================ sparsity
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
    span = np.where(positions["span_start"] == positions["span_end"], stamps(positions["span_start"]),
                    [f"{a} → {b}" for a, b in zip(stamps(positions["span_start"]), stamps(positions["span_end"]))])
    custom = np.stack([np.broadcast_to(positions["position"].to_numpy(), (H, L_Q)),
                       np.broadcast_to(span, (H, L_Q)),
                       np.broadcast_to(positions["segment"].to_numpy(), (H, L_Q)),
                       np.where(selected, "selected (softmax row)", "lazy")], axis=-1)
    traces = [go.Heatmap(
        z=z, x=x, y=heads, customdata=custom, colorscale=SEQUENTIAL,
        colorbar=dict(title=dict(text=score), thickness=12),
        hovertemplate="%{y} · query %{customdata[0]} (%{customdata[2]})<br>%{customdata[1]}<br>"
                      f"{score} = %{{z:.4g}}<br>%{{customdata[3]}}<extra></extra>")]
    hh, pp = np.nonzero(selected)
    if len(hh):
        traces.append(go.Scatter(x=x[pp], y=[heads[h] for h in hh], mode="markers", hoverinfo="skip",
                                 name="selected by ProbSparse (top-u by sampled M̄)",
                                 marker=dict(symbol="circle-open", size=7, color="#ffffff", line=dict(width=1.5))))
    future = positions.index[positions["segment"] == "future"]
    shapes, notes = [], []
    if len(future):
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


def rows_heatmap(rows: HeadRows, query_stamps: Sequence[str], key_stamps: Sequence[str], title: str,
                 causal: bool) -> go.Figure:
    """The computed softmax rows of one head: y = its selected queries (in time order), x = keys."""
    labels = [f"q{p} · {s}" for p, s in zip(rows.query_positions, query_stamps)]
    x = list(range(len(key_stamps)))
    custom = np.broadcast_to(np.asarray(key_stamps, dtype=object), rows.z.shape)
    step = max(1, len(x) // 12)
    heatmap = go.Heatmap(
        z=rows.z, x=x, y=labels, customdata=custom, colorscale=WEIGHTS, zmin=0,
        colorbar=dict(title=dict(text="weight"), thickness=12),
        hovertemplate="%{y}<br>key %{x} · %{customdata}<br>weight %{z:.4f}<extra></extra>")
    return go.Figure([heatmap], layout(
        title, max(260, 120 + 16 * len(labels)), legend=False,
        xaxis=dict(tickvals=x[::step], ticktext=[f"{i}<br>{key_stamps[i][5:]}" for i in x[::step]],
                   title=dict(text="key position · timestamp" + (" (causal: weight 0 after the query)" if causal
                                                                 else ""))),
        yaxis=dict(autorange="reversed", type="category", tickfont=dict(size=10))))


def exact_vs_sampled_figure(hq: pd.DataFrame, against: str, against_label: str, in_exact_top: np.ndarray,
                            title: str) -> go.Figure:
    """Per query of one head: sampled M̄ (y) vs an exact measure (x); colour = ProbSparse's choice,
    symbol = in the exact top-u."""
    groups = [(True, True, "selected · in exact top-u", SELECTED, "circle"),
              (True, False, "selected · not in exact top-u", SELECTED, "x"),
              (False, True, "lazy · in exact top-u (missed)", EXACT, "x"),
              (False, False, "lazy · not in exact top-u", EXACT, "circle-open")]
    traces = []
    for sel, top, name, colour, symbol in groups:
        part = hq[(hq["selected"].to_numpy() == sel) & (in_exact_top == top)]
        if not len(part):
            continue
        traces.append(go.Scatter(
            x=part[against], y=part["sampled_mbar"], mode="markers", name=f"{name} ({len(part)})",
            marker=dict(color=colour, symbol=symbol, size=8, line=dict(width=1.5, color=colour)),
            customdata=np.stack([part["position"], stamps(part["timestamp"]), part["rank_sampled"],
                                 part["rank_exact"]], axis=1),
            hovertemplate="query %{customdata[0]} · %{customdata[1]}<br>sampled M̄ %{y:.4g} (rank %{customdata[2]})"
                          "<br>exact %{x:.4g} (rank by exact M: %{customdata[3]})<extra></extra>"))
    return go.Figure(traces, layout(title, 420, legend="right", xaxis=dict(title=dict(text=against_label)),
                                    yaxis=dict(title=dict(text="sampled M̄ (recorded)"))))


# ============================================================================================ pyramid
def pyramid_figure(cells: pd.DataFrame, input_stamps: Sequence[str], seq_len: int,
                   chosen: tuple[int, int, int] | None, output: pd.DataFrame | None) -> go.Figure:
    """The encoder stack as bars: one row per (replica, layer), each position a unit cell coloured by its
    output norm, centred over the input steps its replica reads. The bottom row is the encoder input
    window (seq_len steps); the chosen position is joined to the input span it tiles (filled band) and
    its conv/pool receptive field (dashed)."""
    traces, shapes = [], []
    n_rows = int(cells["row"].max()) + 1 + (output is not None)
    traces.append(go.Bar(
        base=np.arange(seq_len), x=np.ones(seq_len), y=np.zeros(seq_len), orientation="h", width=0.7,
        marker=dict(color="#d9d9d9", line=dict(color="#ffffff", width=0.5)), name="input window",
        selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
        customdata=np.stack([np.arange(seq_len), np.asarray(input_stamps)], axis=1),
        hovertemplate="input step %{customdata[0]} · %{customdata[1]}<extra></extra>", showlegend=False))
    custom = np.stack([cells["replica"], cells["level"], cells["position"], cells["span_start"], cells["span_end"],
                       cells["span_text"], cells["receptive_start"], cells["receptive_end"],
                       np.where(cells["wraps"], " (wraps round: circular padding)", ""), cells["norm"]], axis=1)
    traces.append(go.Bar(
        base=cells["x0"], x=np.ones(len(cells)), y=cells["row"], orientation="h", width=0.7, name="positions",
        marker=dict(color=cells["norm"], colorscale=SEQUENTIAL, line=dict(color="#ffffff", width=0.5),
                    colorbar=dict(title=dict(text="output ‖x‖₂"), thickness=12)),
        selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
        customdata=custom,
        hovertemplate="replica %{customdata[0]} · layer %{customdata[1]} · position %{customdata[2]}"
                      "<br>tiles input steps %{customdata[3]}–%{customdata[4]}: %{customdata[5]}"
                      "<br>conv/pool reach: steps %{customdata[6]}–%{customdata[7]}%{customdata[8]}"
                      "<br>output norm %{customdata[9]:.4g}<extra></extra>", showlegend=False))
    if output is not None:
        top = n_rows - 1
        traces.append(go.Bar(
            base=output["x0"], x=np.ones(len(output)), y=np.full(len(output), top), orientation="h", width=0.7,
            marker=dict(color=[REPLICA_COLOURS[r % len(REPLICA_COLOURS)] for r in output["replica"]],
                        line=dict(color="#ffffff", width=0.5)), name="encoder output",
            selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
            customdata=np.stack([output["replica"], output["position"], output["index"]], axis=1),
            hovertemplate="encoder output position %{customdata[2]}<br>= replica %{customdata[0]}, "
                          "last layer, position %{customdata[1]}<extra></extra>", showlegend=False))
        for r in sorted(output["replica"].unique()):
            traces.append(go.Bar(x=[None], y=[None], orientation="h", name=f"output of replica {r}",
                                 marker_color=REPLICA_COLOURS[r % len(REPLICA_COLOURS)], hoverinfo="skip"))
    if chosen is not None:
        r, level, p = chosen
        hit = cells[(cells["replica"] == r) & (cells["level"] == level) & (cells["position"] == p)]
        if len(hit):
            c = hit.iloc[0]
            y_top, y_bottom = c["row"] - 0.35, 0.35
            traces.append(go.Scatter(
                x=[c["x0"], c["x0"] + 1, c["span_end"] + 1, c["span_start"], c["x0"]],
                y=[y_top, y_top, y_bottom, y_bottom, y_top], fill="toself", mode="lines",
                fillcolor="rgba(255,127,14,0.25)", line=dict(color=HIGHLIGHT, width=1.5), hoverinfo="skip",
                name=f"position {p} tiles input {steps_text(c['span_start'], c['span_end'])}"))
            shapes.append(dict(type="rect", x0=c["receptive_start"], x1=c["receptive_end"] + 1, y0=-0.45, y1=0.45,
                               line=dict(color=HIGHLIGHT, width=2, dash="dash")))
            traces.append(go.Scatter(x=[None], y=[None], mode="lines", hoverinfo="skip",
                                     line=dict(color=HIGHLIGHT, width=2, dash="dash"),
                                     name=f"conv/pool reach: {steps_text(c['receptive_start'], c['receptive_end'])}"))
            shapes.append(dict(type="rect", x0=c["x0"], x1=c["x0"] + 1, y0=c["row"] - 0.45, y1=c["row"] + 0.45,
                               line=dict(color=HIGHLIGHT, width=3)))
    titles = ["input window"] + list(cells.drop_duplicates("row").sort_values("row")["row_title"])
    if output is not None:
        titles.append(f"encoder output (L = {len(output)})")
    return go.Figure(traces, layout(
        "The encoder pyramid of this window", 160 + 56 * n_rows, shapes=shapes, barmode="overlay", bargap=0.3,
        clickmode="event+select", dragmode=False,
        yaxis=dict(tickvals=list(range(n_rows)), ticktext=titles, range=[-0.6, n_rows - 0.4], fixedrange=True,
                   showgrid=False, zeroline=False),
        xaxis=dict(title=dict(text="input step of the encoder window (bars: one cell per position, width = length)"),
                   range=[-1, seq_len + 1], showgrid=False, zeroline=False)))


def level_heatmap(z: np.ndarray, titles: Sequence[str], custom: np.ndarray | None, title: str, colour: str,
                  x_title: str, zmin: float | None = None, zmax: float | None = None) -> go.Figure:
    """Rows of different lengths (NaN-padded), one per level or pooling step."""
    heatmap = go.Heatmap(
        z=z, x=list(range(z.shape[1])), y=list(titles), customdata=custom, colorscale=SEQUENTIAL, zmin=zmin,
        zmax=zmax, ygap=3, colorbar=dict(title=dict(text=colour), thickness=12),
        hovertemplate="%{y} · position %{x}" + ("<br>%{customdata}" if custom is not None else "")
                      + f"<br>{colour} %{{z:.4g}}<extra></extra>")
    return go.Figure([heatmap], layout(title, max(230, 130 + 42 * len(titles)), legend=False,
                                       yaxis=dict(autorange="reversed", type="category"),
                                       xaxis=dict(title=dict(text=x_title))))


# ============================================================================================ attribution
def attribution_heatmap(z: np.ndarray, times: pd.Index, features: Sequence[str], title: str,
                        target_time=None) -> go.Figure:
    """Attributions, time (x) × input feature (y), on a diverging scale centred at 0."""
    limit = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() and np.nanmax(np.abs(z)) > 0 else 1.0
    heatmap = go.Heatmap(
        z=z, x=pd.DatetimeIndex(times), y=list(features), colorscale=DIVERGING, zmid=0, zmin=-limit, zmax=limit,
        colorbar=dict(title=dict(text="attribution"), thickness=12), ygap=2,
        hovertemplate="%{y} at %{x}<br>attribution %{z:.4g}<extra></extra>")
    return go.Figure([heatmap], layout(title, 150 + 40 * len(features), legend=False,
                                       xaxis=dict(title=dict(text="encoder input timestamp")),
                                       yaxis=dict(autorange="reversed")))


def attribution_time_figure(z: np.ndarray, times: pd.Index, series: pd.Series | None, column: str,
                            title: str) -> go.Figure:
    """Σ over features of the attribution per input step (bars), and the target column's input (line)."""
    total = np.nansum(z, axis=0)
    traces = [go.Bar(x=pd.DatetimeIndex(times), y=total, name="Σ attribution over features (red +, blue −)",
                     marker_color=np.where(total >= 0, "#b2182b", "#2166ac"), showlegend=False,
                     hovertemplate="%{x}<br>Σ attribution %{y:.4g}<extra></extra>")]
    if series is not None:
        traces.append(go.Scatter(x=series.index, y=series.to_numpy(), mode="lines", name=f"{column} (input)",
                                 line=dict(color=TRUTH, width=1.5), yaxis="y2"))
    # A second y axis on the right for the series (as make_subplots' secondary_y, without its update chain).
    return go.Figure(traces, layout(
        title, 320, xaxis=dict(domain=[0, 0.94]), yaxis=dict(title=dict(text="Σ attribution (red +, blue −)")),
        yaxis2=dict(title=dict(text=column), overlaying="y", side="right", anchor="x", showgrid=False)))


# ============================================================================================ compare
def per_step_figure(per_step: pd.DataFrame, column: str, label: str, labels: dict[str, str]) -> go.Figure:
    traces = [go.Scatter(x=part["step"], y=part[column], mode="lines+markers", name=labels.get(model, model),
                         line=dict(color=MODEL_COLOURS.get(model), width=2), marker=dict(size=5),
                         hovertemplate=f"step %{{x}} · {label} %{{y:.4g}}<extra>{model}</extra>")
              for model, part in per_step.groupby("model", sort=False)]
    n = int(per_step["step"].max()) if len(per_step) else 1
    return go.Figure(traces, layout(f"{label} per horizon step", 400, legend="right",
                                    xaxis=dict(title=dict(text="horizon step"), dtick=1 if n <= 24 else None),
                                    yaxis=dict(title=dict(text=label))))


def overlay_figure(overlay: pd.DataFrame, column: str, models: Sequence[str], labels: dict[str, str],
                   title: str) -> go.Figure:
    """History, truth and every model's forecast of one window and column (original units)."""
    part = overlay[overlay["column"] == column]
    traces = []
    history = part[part["model"] == "history"]
    if len(history):
        traces.append(go.Scatter(x=history["timestamp"], y=history["value"], mode="lines", name="history (input)",
                                 line=dict(color=HISTORY, width=1.5)))
    truth = part[part["model"] == "truth"]
    traces.append(go.Scatter(x=truth["timestamp"], y=truth["value"], mode="lines+markers", name="truth",
                             line=dict(color=TRUTH, width=2.5), marker=dict(size=4)))
    for model in models:
        rows = part[part["model"] == model]
        traces.append(go.Scatter(x=rows["timestamp"], y=rows["value"], mode="lines", name=labels.get(model, model),
                                 line=dict(color=MODEL_COLOURS.get(model), width=1.8,
                                           dash="solid" if model.startswith("informer") else "dash")))
    return go.Figure(traces, layout(title, 440, hovermode="x unified", legend="right",
                                    shapes=[vline(truth["timestamp"].iloc[0])] if len(truth) else [],
                                    yaxis=dict(title=dict(text=column))))
