"""Shaping for the Ablation studies screen: the studies' names, and pure pandas helpers that combine and
reshape their results (no Streamlit, no maths beyond reshaping)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from informer_lab.analysis.heads.ablation import random_masking_summary
from informer_lab.analysis.heads.importance import rank_correlation
from informer_lab.analysis.heads.masking import BASELINE

STUDIES = {  # key → title (tab and progress line)
    "sweep": "Single-head sweep",
    "layers": "Layer masking",
    "leave_one_in": "Leave-one-in",
    "random": "Random masking",
    "pruning": "Pruning curve",
    "importance": "Importance vs ablation",
}

NEGLIGIBLE = 0.05  # random masking: a draw is "harmless" when its ΔMSE < 5 % of the baseline MSE


@dataclass(frozen=True)
class RandomResult:
    """draws: one row per (k, repeat) — `random_masking`'s columns plus k_percent and baseline_mse.
    summary: one row per k (see `random_summary`)."""

    draws: pd.DataFrame
    summary: pd.DataFrame


@dataclass(frozen=True)
class ImportanceResult:
    """table: one row per (site, head): importance, importance_normalised, delta_mse (measured), mse.
    rho / rho_raw: Spearman ρ of ΔMSE with the normalised / raw importance."""

    table: pd.DataFrame
    method: str
    rho: float
    rho_raw: float
    windows: int
    convergence_delta: float | None


def combine_random(ks: Sequence[int], tables: Sequence[pd.DataFrame]) -> RandomResult:
    """`random_masking` tables (one per k) → all draws (with k_percent, baseline_mse) and a summary per k."""
    parts = []
    for k, t in zip(ks, tables):
        t = t.copy()
        t.insert(0, "k_percent", k)
        t.insert(3, "baseline_mse", t["mse"] - t["delta_mse"])  # every draw is paired with the same baseline
        parts.append(t)
    draws = pd.concat(parts, ignore_index=True)
    return RandomResult(draws, random_summary(draws))


def random_summary(draws: pd.DataFrame) -> pd.DataFrame:
    """Per k: k_percent, n_masked, repeats, baseline_mse, the quantiles and mean of ΔMSE
    (`random_masking_summary`), and how many draws stay below NEGLIGIBLE × the baseline MSE."""
    rows = []
    for k, part in draws.groupby("k_percent", sort=True):
        baseline = float(part["baseline_mse"].iloc[0])
        q = random_masking_summary(part).set_index("quantile")["delta_mse"]
        below = int((part["delta_mse"] < NEGLIGIBLE * baseline).sum())
        rows.append({"k_percent": int(k), "n_masked": int(part["n_masked"].iloc[0]), "repeats": len(part),
                     "baseline_mse": baseline, "delta_mse_q05": q[0.05], "delta_mse_median": q[0.5],
                     "delta_mse_q95": q[0.95], "delta_mse_mean": q["mean"],
                     "draws_below_5pct": below, "share_below_5pct": below / len(part)})
    return pd.DataFrame(rows)


def combine_importance(importance, sweep: pd.DataFrame) -> ImportanceResult:
    wanted = ["site", "site_index", "kind", "layer", "head", "importance", "importance_lo", "importance_hi",
              "importance_normalised", "importance_null", "excess", "excess_lo", "excess_hi", "excess_p", "excess_p_bh",
              "above_null", "above_null_raw", "interval"]
    table = importance.table[[c for c in wanted if c in importance.table]]
    measured = sweep[sweep["site"] != BASELINE][["site", "head", "mse", "delta_mse", "delta_mse_lo", "delta_mse_hi"]]
    both = table.merge(measured, on=["site", "head"], how="left")
    return ImportanceResult(both, importance.method,
                            rank_correlation(importance, sweep, column="importance_normalised"),
                            rank_correlation(importance, sweep), importance.windows, importance.convergence_delta)


def sweep_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """ΔMSE as a (site × head) grid: rows are sites in gate order (encoder layers, decoder self, cross)."""
    heads = table[table["site"] != BASELINE]
    grid = heads.pivot_table(index=["site_index", "site"], columns="head", values="delta_mse", aggfunc="first")
    grid = grid.sort_index(level="site_index")
    grid.index = grid.index.get_level_values("site")
    grid.columns = [f"h{h}" for h in grid.columns]
    return grid


def with_relative(table: pd.DataFrame) -> pd.DataFrame:
    """A copy with delta_mse_pct: ΔMSE in % of the baseline MSE (first row's mse − delta_mse)."""
    out = table.copy()
    baseline = float(out["mse"].iloc[0] - out["delta_mse"].iloc[0])
    out.insert(out.columns.get_loc("delta_mse") + 1, "delta_mse_pct", 100 * out["delta_mse"] / baseline)
    return out


def lead(table: pd.DataFrame, *first: str) -> pd.DataFrame:
    """The same table with the columns `first` (those it has) moved to the front, for reading; values unchanged."""
    front = [c for c in first if c in table.columns]
    return table[front + [c for c in table.columns if c not in front]]


def head_options(table: pd.DataFrame) -> list[str]:
    """'site:head' labels of a sweep table's heads, the most harmful removal first."""
    heads = table[table["site"] != BASELINE].sort_values("delta_mse", ascending=False, kind="stable")
    return [f"{s}:{h}" for s, h in zip(heads["site"], heads["head"])]


def pruning_limit(curve: pd.DataFrame, tolerance_percent: float) -> float:
    """The stopping threshold: (1 + tolerance) × the baseline MSE on the selection (val) split."""
    return float((1 + tolerance_percent / 100) * curve["val_mse"].iloc[0])


def finite(x: float) -> bool:
    return x is not None and bool(np.isfinite(x))
