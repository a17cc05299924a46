"""Shaping for the Sparsity explorer: slice and reshape a `SparsityReport` for its grid, charts and tables.
No Streamlit and no maths beyond selecting, reordering and labelling (the entropy ratio is labelled as derived)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from informer_lab.analysis.attention.recording import SiteRows
from informer_lab.ui.tables import clicked_customdata

KIND_TITLES = {"encoder": "encoder self-attention", "decoder_self": "decoder self-attention (causal)",
               "cross": "decoder cross-attention"}


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
    attention: str = "full"

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
                            r.lazy_rule, r.lazy_rows, r.attention))
    return out


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


def grid_pick(selection) -> tuple[int, int] | None:
    """(site index, head) of the first clicked cell of the grid overlay, from st.plotly_chart's selection."""
    for data in clicked_customdata(selection):
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
