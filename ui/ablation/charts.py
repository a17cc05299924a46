"""Figures of the Ablation studies screen. Each takes a study's table and only draws it."""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from informer_lab.analysis.heads.masking import BASELINE as BASELINE_ROW
from informer_lab.ui.ablation.tables import NEGLIGIBLE
from informer_lab.ui.charts import BASELINE, BETTER, VAL, WORSE, hline, layout
from informer_lab.analysis.heads.names import head_name

KIND_COLOURS = {"encoder": "#1f77b4", "decoder_self": "#9467bd", "cross": "#ff7f0e"}
KIND_NAMES = {"encoder": "encoder self", "decoder_self": "decoder self (causal)", "cross": "cross"}
ZERO = hline(0)


def _axes(x: str, y: str, **x_more) -> dict:
    return dict(xaxis=dict(title=dict(text=x), **x_more), yaxis=dict(title=dict(text=y)))


def _error_y(rows: pd.DataFrame, metric: str = "delta_mse") -> dict:
    """The metric's 95 % interval as plotly error bars (none drawn where it is unknown: too few windows)."""
    lo, hi = rows.get(f"{metric}_lo"), rows.get(f"{metric}_hi")
    if lo is None or hi is None or not (lo.notna().any() and hi.notna().any()):
        return dict(visible=False)
    return dict(type="data", symmetric=False, array=(hi - rows[metric]).to_numpy(),
                arrayminus=(rows[metric] - lo).to_numpy(), color="#444444", thickness=1.2)


def _wrap_heads(text: str, width: int = 60) -> str:
    return "<br>".join(textwrap.wrap(text.replace(";", "; "), width)) or "–"


def _limit_line(y: float, colour: str, text: str, *, above_plot: bool = False) -> tuple[dict, dict]:
    """A dashed horizontal line and its label: at the top left of the line (as add_hline's annotation_text), or, for
    bars and boxes that the label would cover, above the plot under the title ("- - - label")."""
    if above_plot:
        return (hline(y, colour, dash="dash"),
                dict(text=f"<span style='color:{colour}'>- - -</span> {text}", x=0, xref="paper", y=1.0,
                     yref="paper", xanchor="left", yanchor="bottom", showarrow=False, yshift=4))
    return (hline(y, colour, dash="dash"),
            dict(text=text, x=0, xref="x domain", y=y, yref="y", xanchor="left", yanchor="bottom", showarrow=False))


def sweep_heatmap(grid: pd.DataFrame, baseline_mse: float, title: str) -> go.Figure:
    """ΔMSE per (site, head), diverging around 0 (red: removing the head hurts), the value in each cell."""
    z = grid.to_numpy()
    heatmap = go.Heatmap(
        z=z, x=list(grid.columns), y=list(grid.index), colorscale="RdBu_r", zmid=0,
        text=[[f"{v:+.3g}" for v in row] for row in z], texttemplate="%{text}", textfont=dict(size=13),
        customdata=100 * z / baseline_mse, xgap=2, ygap=2, colorbar=dict(title=dict(text="ΔMSE"), thickness=14),
        hovertemplate="%{y} %{x}<br>ΔMSE %{z:+.4g} (%{customdata:+.2f} % of baseline)<extra></extra>")
    return go.Figure([heatmap], layout(title, max(430, 60 * len(grid) + 110), legend=False,
                                       xaxis=dict(title=dict(text="head"), side="bottom"),
                                       yaxis=dict(title=dict(text="site"), autorange="reversed")))


def sweep_bars(table: pd.DataFrame, limit: float, title: str, top: int = 24) -> go.Figure:
    """The `top` largest single-head ΔMSE, each with its 95 % interval over windows, and the removability line.
    table: `analysis.heads.lists.head_lists(...).table` (a head is drawn as removable when it is listed, after BH)."""
    rows = table[table["site"] != BASELINE_ROW].sort_values("delta_mse", ascending=False).head(top)
    labels = [head_name(s, h) for s, h in zip(rows["site"], rows["head"])]
    removable = rows["removable"] if "removable" in rows else rows["delta_mse_hi"] < limit
    bars = go.Bar(x=labels, y=rows["delta_mse"], error_y=_error_y(rows),
                  marker_color=[BETTER if r else WORSE for r in removable],
                  customdata=np.stack([rows["delta_mse_lo"], rows["delta_mse_hi"]], axis=1),
                  hovertemplate="%{x}: ΔMSE %{y:+.4g}<br>95 % interval [%{customdata[0]:+.4g}, "
                                "%{customdata[1]:+.4g}]<extra></extra>")
    line, note = _limit_line(limit, BETTER, "5 % of the baseline: removable when shown below it (BH)",
                             above_plot=True)
    return go.Figure([bars], layout(title, 400, legend=False, top=72, shapes=[ZERO, line], annotations=[note],
                                    **_axes("head (largest ΔMSE first)", "ΔMSE")))


def horizon_figure(rows: pd.DataFrame, label: str, title: str) -> go.Figure:
    """ΔMSE per horizon step of one removed head. rows: the head's per_step rows (step, delta_mse, mse)."""
    line = go.Scatter(x=rows["step"], y=rows["delta_mse"], mode="lines+markers", name=label,
                      line=dict(color=WORSE, width=2), marker=dict(size=6), customdata=rows["mse"],
                      hovertemplate="step %{x}: ΔMSE %{y:+.4g} (MSE %{customdata:.4g})<extra></extra>")
    return go.Figure([line], layout(title, 360, legend=False, shapes=[ZERO],
                                    **_axes("horizon step", "ΔMSE", dtick=1 if len(rows) <= 24 else None)))


def site_bars(table: pd.DataFrame, title: str) -> go.Figure:
    """One bar per site (layer masking): ΔMSE with all its heads removed."""
    rows = table[table["site"] != BASELINE_ROW]
    bars = go.Bar(x=rows["site"], y=rows["delta_mse"], marker_color=[WORSE if v > 0 else BETTER
                                                                    for v in rows["delta_mse"]],
                  error_y=_error_y(rows), text=[f"{v:+.3g}" for v in rows["delta_mse"]], textposition="outside",
                  hovertemplate="%{x}: ΔMSE %{y:+.4g}<extra></extra>")
    return go.Figure([bars], layout(title, 380, legend=False, shapes=[ZERO],
                                    **_axes("site (all heads removed)", "ΔMSE")))


def leave_one_in_bars(table: pd.DataFrame, title: str) -> go.Figure:
    """Grouped bars: per site, one bar per head kept (the site's other heads removed)."""
    rows = table[table["site"] != BASELINE_ROW]
    bars = [go.Bar(x=part["site"], y=part["delta_mse"], name=f"only h{h} kept", error_y=_error_y(part),
                   hovertemplate=f"%{{x}}, only h{h} kept: ΔMSE %{{y:+.4g}}<extra></extra>")
            for h, part in rows.groupby("head", sort=True)]
    return go.Figure(bars, layout(title, 400, legend=True, shapes=[ZERO], barmode="group", **_axes("site", "ΔMSE")))


def random_boxes(draws: pd.DataFrame, title: str) -> go.Figure:
    """A box of ΔMSE over the draws for each k, every draw shown; 0 and 5 % of the baseline MSE marked."""
    boxes = []
    for k, part in draws.groupby("k_percent", sort=True):
        n = int(part["n_masked"].iloc[0])
        boxes.append(go.Box(y=part["delta_mse"], name=f"{k} % ({n} heads)", boxpoints="all", jitter=0.35,
                            pointpos=0, marker=dict(size=5, opacity=0.7), line=dict(color=BASELINE),
                            customdata=[[r, _wrap_heads(m)] for r, m in zip(part["repeat"], part["masked_heads"])],
                            hovertemplate="draw %{customdata[0]}: ΔMSE %{y:+.4g}<br>%{customdata[1]}<extra></extra>"))
    line, note = _limit_line(NEGLIGIBLE * float(draws["baseline_mse"].iloc[0]), BETTER, "5 % of baseline MSE",
                             above_plot=True)
    return go.Figure(boxes, layout(title, 420, legend=False, top=72, shapes=[ZERO, line], annotations=[note],
                                   **_axes("k: share of all heads removed at random", "ΔMSE")))


def pruning_figure(curve: pd.DataFrame, limit: float, report_split: str, title: str) -> go.Figure:
    """MSE vs the share of heads removed: the reported split, the selecting split (val) and its tolerance."""
    x = 100 * curve["fraction_removed"]
    hover = [[int(s), int(n), _wrap_heads(new), _wrap_heads(all_)] for s, n, new, all_ in
             zip(curve["step"], curve["n_removed"], curve["newly_removed"], curve["removed_heads"])]
    template = ("step %{customdata[0]}: %{customdata[1]} removed, MSE %{y:.4g}<br><b>removed now:</b> "
                "%{customdata[2]}<br><b>removed so far:</b> %{customdata[3]}<extra>%{fullData.name}</extra>")
    symbols = ["circle" if ok else "x" for ok in curve["within_tolerance"]]  # x: the step past the tolerance
    lines = [go.Scatter(x=x, y=curve["mse"], mode="lines+markers", name=f"{report_split} MSE (reported)",
                        line=dict(color=BASELINE, width=2), marker=dict(size=9, symbol=symbols),
                        customdata=hover, hovertemplate=template),
             go.Scatter(x=x, y=curve["val_mse"], mode="lines+markers", name="val MSE (chooses heads, stops)",
                        line=dict(color=VAL, width=1.5, dash="dot"), marker=dict(size=8, symbol=symbols),
                        customdata=hover, hovertemplate=template)]
    line, note = _limit_line(limit, VAL, "tolerance (val)")
    return go.Figure(lines, layout(title, 420, legend=True, shapes=[line], annotations=[note],
                                   **_axes("heads removed (%)", "MSE (standardised)", ticksuffix=" %",
                                           rangemode="tozero")))


def importance_scatter(table: pd.DataFrame, title: str) -> go.Figure:
    """Gradient importance (normalised per site) against the measured single-head ΔMSE, one colour per kind."""
    points = [go.Scatter(
        x=part["importance_normalised"], y=part["delta_mse"], mode="markers", name=KIND_NAMES.get(kind, kind),
        error_y=_error_y(part),
        marker=dict(size=10, color=KIND_COLOURS.get(kind), line=dict(width=1, color="white")),
        customdata=list(zip(part["site"], part["head"], part["importance"])),
        hovertemplate="%{customdata[0]} h%{customdata[1]}<br>importance %{customdata[2]:.4g} "
                      "(normalised %{x:.3f})<br>ΔMSE %{y:+.4g}<extra></extra>")
        for kind, part in table.groupby("kind", sort=False)]
    return go.Figure(points, layout(title, 440, legend=True, shapes=[ZERO],
                                    **_axes("gradient importance, normalised per site (E|∂L/∂ξ| ÷ site L2 norm)",
                                            "ΔMSE when removed alone")))
