"""Presentation helpers of the analysis pages: slice and reshape the reports of `analysis/` for charts
and tables. No Streamlit, and no maths beyond selecting, reordering and labelling: every number shown
comes from `analysis` (the one derived display quantity, the entropy ratio, is labelled as such).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.comparison import COUNTERFACTUAL, FULL_MODEL, INFORMER, LAST_VALUE, LINEAR, SEASONAL_NAIVE
from analysis.sparsity import SiteRows

KIND_TITLES = {"encoder": "encoder self-attention", "decoder_self": "decoder self-attention (causal)",
               "cross": "decoder cross-attention"}


# ============================================================================================ sites
@dataclass(frozen=True)
class SiteInfo:
    """One attention site as the pages name it. index: its row in the head grid (model.sites order)."""

    index: int
    name: str
    kind: str
    layer: int
    replica: int
    level: int
    L_Q: int
    L_K: int
    u: int  # selected queries (rows computed); L_Q at full-attention sites
    lazy_rule: str
    lazy_rows: str

    @property
    def sparse(self) -> bool:
        return self.lazy_rule != "full attention"

    @property
    def short_label(self) -> str:
        """e.g. 'encoder.0.1 · encoder self, L = 24' (for narrow pickers)."""
        kind = {"encoder": "encoder self", "decoder_self": "decoder self, causal", "cross": "cross"}[self.kind]
        return f"{self.name} · {kind}" + (f", L = {self.L_Q}" if self.level else "")

    @property
    def label(self) -> str:
        """e.g. 'encoder.0.1 · encoder self-attention, layer 1 (1 distilling step, L = 24)'."""
        where = f"layer {self.layer}"
        if self.kind == "encoder":
            if self.replica:
                where = f"replica {self.replica}, {where}"
            if self.level:
                where += f" ({self.level} distilling step{'s' if self.level > 1 else ''}, L = {self.L_Q})"
        return f"{self.name} · {KIND_TITLES[self.kind]}, {where}"


def site_infos(rows: Sequence[SiteRows]) -> list[SiteInfo]:
    """The sites of a report, in model.sites order (the order the report records them in)."""
    out = []
    for i, r in enumerate(rows):
        B, H, u, L_K = r.rows.shape
        out.append(SiteInfo(i, r.site, r.kind, r.layer, r.replica, r.level, len(r.query_steps), L_K, u,
                            r.lazy_rule, r.lazy_rows))
    return out


def steps_text(first: int, last: int) -> str:
    """'step 36' or 'steps 10–11'."""
    return f"step {first}" if first == last else f"steps {first}–{last}"


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


# ============================================================================================ sparsity
GRID_STATISTICS = {
    "entropy_ratio": "Row entropy ÷ flat-row entropy",
    "mean_max_weight": "Largest weight of a row",
    "attended_distance_steps": "Attended distance (input steps)",
    "overlap_at_u_mean": "Top-u overlap, sampled vs exact",
    "spearman_mean": "Spearman ρ, sampled vs exact",
}
GRID_TITLES = {
    "entropy_ratio": "Mean row entropy ÷ entropy of a flat row over the allowed keys (1 = uniform)",
    "mean_max_weight": "Mean largest weight of a computed row",
    "attended_distance_steps": "Attended distance Σ_j p_ij |i − j| (input steps), mean over computed rows",
    "overlap_at_u_mean": "Top-u overlap, sampled M̄ vs exact M, mean over seeds (n/a: full attention)",
    "spearman_mean": "Spearman ρ, sampled M̄ vs exact M, mean over seeds (n/a: full attention)",
}
SCORES = {"sampled_mbar": "sampled M̄ (as ProbSparse ranked them)", "exact_m": "exact M (log-sum-exp − mean)",
          "exact_mbar": "exact M̄ (max − mean, all allowed keys)"}
AGAINST = {"exact_m": ("", "exact M over the allowed keys"),
           "exact_mbar": ("_mbar", "exact M̄ over the allowed keys"),
           "exact_m_all_keys": ("_all_keys", "exact M over every key (the causal mask ignored, as the sample does)")}


def grid_table(heads: pd.DataFrame, agreement: pd.DataFrame, sites: Sequence[SiteInfo], statistic: str
               ) -> pd.DataFrame:
    """One row per (site, head): site_index, site, head, value (NaN where the statistic does not apply)."""
    if statistic not in GRID_STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(GRID_STATISTICS)}, got {statistic!r}")
    index = {s.name: s.index for s in sites}
    base = heads[["site", "head"]].copy()
    if statistic == "entropy_ratio":
        values = heads["mean_entropy"] / heads["uniform_entropy"].where(heads["uniform_entropy"] > 0)
    elif statistic in heads.columns:
        values = heads[statistic]
    else:
        joined = base.merge(agreement[["site", "head", statistic]], on=["site", "head"], how="left")
        values = joined[statistic]
    base["value"] = np.asarray(values, dtype="float64")
    base.insert(0, "site_index", base["site"].map(index))
    return base.sort_values(["site_index", "head"]).reset_index(drop=True)


def _custom_values(data) -> list:
    """A point's customdata as a list: plotly.js sends an array, which may arrive as {"0": a, "1": b, ...}."""
    if data is None:
        return []
    if isinstance(data, Mapping):
        return [data[k] for k in sorted(data, key=lambda k: int(k))]
    if isinstance(data, (str, bytes)):
        return [data]
    return list(data)


def _clicked_customdata(selection) -> Iterator[list]:
    """The customdata values of each clicked point in st.plotly_chart's selection state (nothing when malformed)."""
    if not selection:
        return
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return
    for point in points or ():
        yield _custom_values(point.get("customdata") if isinstance(point, Mapping) else None)


def grid_pick(selection) -> tuple[int, int] | None:
    """(site index, head) of the first clicked cell of the grid overlay, from st.plotly_chart's selection."""
    for data in _clicked_customdata(selection):
        if len(data) >= 2:
            return int(data[0]), int(data[1])
    return None


def site_queries(queries: pd.DataFrame, site: str) -> pd.DataFrame:
    """The queries table of one site (one window), ordered by head then position."""
    part = queries[queries["site"] == site]
    return part.sort_values(["head", "position"], kind="stable").reset_index(drop=True)


def score_matrix(part: pd.DataFrame, score: str) -> tuple[np.ndarray, pd.DataFrame]:
    """([H, L_Q] scores, the positions table [L_Q]: position, step, timestamp, span_start, span_end, segment)."""
    heads = sorted(part["head"].unique())
    z = np.stack([part.loc[part["head"] == h, score].to_numpy(dtype="float64") for h in heads])
    positions = part[part["head"] == heads[0]][["position", "step", "timestamp", "span_start", "span_end",
                                                 "segment"]].reset_index(drop=True)
    return z, positions


def head_queries(part: pd.DataFrame, head: int) -> pd.DataFrame:
    """One head's queries: position, step, timestamp, span, segment, scores, ranks, selected."""
    cols = ["position", "step", "timestamp", "span_start", "span_end", "segment", "selected", "sampled_mbar",
            "exact_m", "exact_mbar", "exact_m_all_keys", "rank_sampled", "rank_exact"]
    return part.loc[part["head"] == head, cols].reset_index(drop=True)


def in_exact_top(rows: pd.DataFrame, score: str, u: int) -> np.ndarray:
    """Boolean [L_Q]: the query is among the u largest by `score` (ties: earliest position first)."""
    order = np.argsort(-rows[score].to_numpy(dtype="float64"), kind="stable")[:u]
    mask = np.zeros(len(rows), dtype=bool)
    mask[order] = True
    return mask


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


def agreement_view(agreement: pd.DataFrame, site: str, against: str) -> pd.DataFrame:
    """One row per head of `site`: u, L_Q, chance, overlap@u / Jaccard / Spearman mean and std over seeds."""
    suffix, _ = AGAINST[against]
    part = agreement[agreement["site"] == site]
    if against == "exact_m_all_keys":  # the analysis records overlap and Spearman (no Jaccard) for this one
        measures = [("overlap_at_u_all_keys", "overlap@u"), ("spearman_all_keys", "Spearman ρ")]
    else:
        measures = [(f"overlap_at_u{suffix}", "overlap@u"), (f"jaccard{suffix}", "Jaccard"),
                    (f"spearman{suffix}", "Spearman ρ")]
    out = pd.DataFrame({"head": part["head"].to_numpy(), "u": part["u"].to_numpy(), "L_Q": part["L_Q"].to_numpy(),
                        "seeds": part["seeds"].to_numpy(), "chance (u / L_Q)": part["chance_overlap"].to_numpy()})
    for column, label in measures:
        out[label] = part[f"{column}_mean"].to_numpy()
        out[f"{label.split()[0]} sd"] = part[f"{column}_std"].to_numpy()
    return out


HEAD_COLUMNS = {"site": "site", "head": "head", "rows": "rows", "mean_entropy": "entropy",
                "uniform_entropy": "flat entropy", "mean_max_weight": "max weight",
                "attended_distance_steps": "distance", "dominant_lag_steps": "dominant lag",
                "dominant_lag_mass": "lag mass", "previous_step": "prev. step", "seasonal_lag": "seasonal",
                "seasonal_period": "season"}
HEAD_HELP = {"entropy": "mean entropy of the computed rows (nats)",
             "flat entropy": "entropy of a uniform row over the allowed keys (nats): the ceiling",
             "max weight": "mean largest weight of a computed row",
             "distance": "attended distance Σ_j p_ij |i − j| in input steps, mean over rows",
             "dominant lag": "the lag i − j (input steps) with the largest mean mass",
             "lag mass": "mean mass at the dominant lag",
             "prev. step": "the dominant lag is one step of the layer",
             "seasonal": "the dominant lag is within ±1 step of a seasonal period",
             "season": "the seasonal period it matched (steps)"}


def heads_view(heads: pd.DataFrame) -> pd.DataFrame:
    return heads[list(HEAD_COLUMNS)].rename(columns=HEAD_COLUMNS)


# ============================================================================================ pyramid
def row_title(replica: int, level: int, length: int, stacked: bool) -> str:
    where = f"replica {replica} · " if stacked else ""
    return f"{where}layer {level} (L = {length})"


def pyramid_cells(spans: pd.DataFrame, norms: pd.DataFrame, lengths: pd.DataFrame, seq_len: int) -> pd.DataFrame:
    """One row per drawn cell of the pyramid picture, on the input-step axis.

    Every (replica, level) is a bar of `length` unit cells centred over the input steps its replica
    reads (replica r: the last seq_len // 2**r steps), so a bar is as wide as its sequence is long.
    Columns: row (drawing order, 0 = the input window at the bottom), row_title, replica, level, position,
    x0 (left edge), norm, span_start/span_end (input steps of the window), receptive_start/_end,
    timestamp_start/_end, span_text, wraps.
    """
    cells = spans.merge(norms, on=["replica", "level", "position"], how="left", validate="one_to_one")
    offsets = lengths.set_index(["replica", "level"])["input_length"]
    stacked = lengths["replica"].nunique() > 1
    parts, row = [], 1
    for (replica, level), part in cells.groupby(["replica", "level"], sort=True):
        L_r = int(offsets[(replica, level)])
        first = seq_len - L_r  # window step of the replica's first input step
        n = len(part)
        centre = first + L_r / 2
        part = part.sort_values("position").copy()
        part["x0"] = centre - n / 2 + part["position"].to_numpy()
        for column in ("span_start", "span_end", "receptive_start", "receptive_end"):
            part[column] = part[column] + first  # replica steps → window steps
        part["span_text"] = span_texts(part)
        part["row"] = row
        part["row_title"] = row_title(int(replica), int(level), n, stacked)
        parts.append(part)
        row += 1
    return pd.concat(parts, ignore_index=True)


def level_matrix(table: pd.DataFrame, keys: Sequence[str], position: str, value: str
                 ) -> tuple[np.ndarray, list[tuple]]:
    """Rows of different lengths padded with NaN: ([n_rows, max_len] values, the row keys in order)."""
    groups = list(table.groupby(list(keys), sort=True))
    width = max((len(g) for _, g in groups), default=0)
    z = np.full((len(groups), width), np.nan)
    for i, (_, g) in enumerate(groups):
        g = g.sort_values(position)
        z[i, g[position].to_numpy(dtype=int)] = g[value].to_numpy(dtype="float64")
    return z, [k if isinstance(k, tuple) else (k,) for k, _ in groups]


def pyramid_pick(selection) -> tuple[int, int, int] | None:
    """(replica, level, position) of the first clicked pyramid cell (cells carry ≥ 9 customdata values)."""
    for data in _clicked_customdata(selection):
        if len(data) >= 9:  # the input-window row carries 2 values: not a pyramid cell
            return int(data[0]), int(data[1]), int(data[2])
    return None


def output_cells(cells: pd.DataFrame, seq_len: int) -> pd.DataFrame:
    """The joined encoder-stack output: each replica's last layer, concatenated along time, centred.

    Columns: replica, position (in the replica's last layer), index (in the joined output), x0.
    """
    last = cells[cells["level"] == cells.groupby("replica")["level"].transform("max")]
    last = last.sort_values(["replica", "position"])[["replica", "position"]].reset_index(drop=True)
    n = len(last)
    last["index"] = np.arange(n)
    last["x0"] = seq_len / 2 - n / 2 + last["index"]
    return last


def span_texts(spans: pd.DataFrame) -> pd.Series:
    """'start → end' (or one timestamp) per row of a spans table."""
    start = pd.DatetimeIndex(spans["timestamp_start"]).strftime("%Y-%m-%d %H:%M")
    end = pd.DatetimeIndex(spans["timestamp_end"]).strftime("%Y-%m-%d %H:%M")
    return pd.Series(np.where(start == end, start, start + " → " + end), index=spans.index)


def level_text(table: pd.DataFrame, keys: Sequence[str], position: str, text: str) -> np.ndarray:
    """The same padded layout as `level_matrix`, for a text column ("" where a row is shorter)."""
    groups = list(table.groupby(list(keys), sort=True))
    width = max((len(g) for _, g in groups), default=0)
    out = np.full((len(groups), width), "", dtype=object)
    for i, (_, g) in enumerate(groups):
        out[i, g[position].to_numpy(dtype=int)] = g[text].to_numpy()
    return out


def kept_view(kept: pd.DataFrame) -> pd.DataFrame:
    """Pool winners per output position i: the fraction of channels whose max came from input 2i−1, 2i, 2i+1."""
    return kept[["replica", "step", "position", "offset_minus1", "offset_0", "offset_plus1"]].rename(
        columns={"offset_minus1": "from 2i−1", "offset_0": "from 2i", "offset_plus1": "from 2i+1"})


def lengths_view(lengths: pd.DataFrame) -> pd.DataFrame:
    out = lengths.rename(columns={"input_length": "replica input length",
                                  "analytic_length": "analytic ⌊(L−1)/2⌋+1",
                                  "recorded_length": "recorded"}).copy()
    out["match"] = np.where(lengths["match"], "✓", "✗")
    return out


# ============================================================================================ attribution
def attribution_matrix(values: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, pd.Index]:
    """([n_features, seq_len] attributions in `columns` order, the timestamps)."""
    wide = values.pivot(index="feature", columns="position", values="attribution").reindex(list(columns))
    stamps = values.drop_duplicates("position").sort_values("position")["timestamp"]
    return wide.to_numpy(dtype="float64"), pd.Index(stamps)


def feature_totals(values: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Per input feature: the sum of its attributions over the window, and the share of Σ|attribution|."""
    grouped = values.groupby("feature")["attribution"]
    out = pd.DataFrame({"feature": list(columns)})
    out["Σ attribution"] = out["feature"].map(grouped.sum())
    total_abs = values["attribution"].abs().sum()
    out["share of Σ|a|"] = out["feature"].map(grouped.apply(lambda a: a.abs().sum())) / (
        total_abs if total_abs > 0 else 1.0)
    return out


# ============================================================================================ compare
MODEL_LABELS = {
    INFORMER: "Informer (as trained, ProbSparse)",
    COUNTERFACTUAL: "Informer, full-attention counterfactual (same weights)",
    FULL_MODEL: "Full-attention twin (trained separately)",
    LAST_VALUE: "Last value",
    SEASONAL_NAIVE: "Seasonal naive",
    LINEAR: "Linear (DLinear-style)",
}


SHORT_LABELS = {INFORMER: "Informer (ProbSparse)", COUNTERFACTUAL: "counterfactual (full attn.)",
                FULL_MODEL: "twin (full attn.)", LAST_VALUE: "last value", SEASONAL_NAIVE: "seasonal naive",
                LINEAR: "linear"}


def model_label(name: str) -> str:
    return MODEL_LABELS.get(name, name)


def short_label(name: str) -> str:
    """For legends."""
    return SHORT_LABELS.get(name, name)


def per_step_wide(per_step: pd.DataFrame, column: str, models: Sequence[str]) -> pd.DataFrame:
    """One row per horizon step, one column per model, of one per-step measure (e.g. "mse")."""
    wide = per_step.pivot(index="step", columns="model", values=column)
    return wide[[m for m in models if m in wide.columns]].reset_index().rename_axis(columns=None)


def metrics_view(metrics: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """One row per model (in `models` order): MSE and MAE standardised and in original units, windows."""
    wide = metrics.pivot(index="model", columns="scale", values=["mse", "mae"])
    windows = metrics.groupby("model")["windows"].first()
    out = pd.DataFrame({"model": list(models), "description": [model_label(m) for m in models]})
    for metric in ("mse", "mae"):
        for scale, label in (("standardised", "std."), ("original", "orig.")):
            out[f"{metric.upper()} ({label})"] = out["model"].map(wide[(metric, scale)])
    out["windows"] = out["model"].map(windows)
    return out


def overlay_wide(overlay: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """One window's forecasts as columns: timestamp, column, truth, then each model (original units)."""
    part = overlay[overlay["model"] != "history"]
    wide = part.pivot_table(index=["timestamp", "column"], columns="model", values="value", sort=False)
    ordered = [m for m in ["truth", *models] if m in wide.columns]
    return wide[ordered].reset_index().rename_axis(columns=None)
