"""Which heads a single-head sweep lists, with false discoveries controlled across the model's heads.

From a sweep table (`analysis.heads.ablation.head_sweep(...).table`: baseline row first, one row per head, with
`delta_mse`, its interval, `delta_mse_se`, `delta_mse_dof`, `delta_mse_p`):

    important   removing the head raises the MSE:      ΔMSE ≠ 0 (two-sided t test), BH across the heads, ΔMSE > 0
    helpful     removing the head lowers the MSE:      the same test, ΔMSE < 0
    removable   removing it costs under `threshold` of the baseline MSE:
                H0: ΔMSE ≥ threshold · baseline against ΔMSE below it (one-sided t test), BH across the heads

Each list comes with its raw decision beside it (`*_raw`: the 95 % interval alone, as before any adjustment) and
the family it was controlled over ("16 heads of this model"). A head without an interval (too few windows) has
no p-value: it is in no list, raw or adjusted, and the table says why (`interval`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from informer_lab.analysis.discoveries import Q, adjusted_p_values, family
from informer_lab.analysis.heads.names import head_name
from informer_lab.analysis.intervals import t_p_values

REMOVABLE = 0.05  # a head is removable alone when its ΔMSE is shown to be under 5 % of the baseline MSE
BASELINE = "baseline"


@dataclass(frozen=True, eq=False)
class HeadLists:
    """table: one row per head (site, head, delta_mse, its interval, …) plus important / helpful / removable (after
    BH at q), important_raw / helpful_raw / removable_raw (the interval alone), removable_p and removable_p_bh.
    tested: heads with an interval (the family); q; threshold (share of the baseline MSE); baseline_mse."""

    table: pd.DataFrame
    tested: int
    heads: int
    q: float
    threshold: float
    baseline_mse: float

    def _names(self, column: str) -> list[str]:
        rows = self.table[self.table[column]]
        return [head_name(s, h) for s, h in zip(rows["site"], rows["head"])]

    @property
    def important(self) -> list[str]:
        return self._names("important")

    @property
    def helpful(self) -> list[str]:
        return self._names("helpful")

    @property
    def removable(self) -> list[str]:
        return self._names("removable")

    def family(self) -> str:
        """The family the lists were controlled over, in words."""
        untested = self.heads - self.tested
        tail = f"; {untested} without an interval, in no list" if untested else ""
        return f"BH at q = {self.q:g} across {family(self.tested)}{tail}"

    def summary(self) -> str:
        """One line: how many heads each list holds, raw and adjusted, and the family."""
        if not self.tested:
            return (f"no interval for any of the {self.heads} heads: no head is listed as important, helpful or "
                    f"removable ({self.table['interval'].iloc[0] if 'interval' in self.table else 'too few windows'})")
        t = self.table
        return (f"important {int(t['important'].sum())} (raw {int(t['important_raw'].sum())}), helpful "
                f"{int(t['helpful'].sum())} (raw {int(t['helpful_raw'].sum())}), removable under "
                f"{self.threshold:.0%} of the baseline {int(t['removable'].sum())} (raw "
                f"{int(t['removable_raw'].sum())}) of {self.heads} heads — {self.family()}")


def head_lists(sweep: pd.DataFrame, *, q: float = Q, threshold: float = REMOVABLE) -> HeadLists:
    """The lists of a single-head sweep table (its baseline row first)."""
    baseline_mse = float(sweep["mse"].iloc[0])
    heads = sweep[sweep["site"] != BASELINE].copy()
    if {"delta_mse_se", "delta_mse_dof"} <= set(heads.columns):
        se = heads["delta_mse_se"].to_numpy(dtype=np.float64)
        dof = heads["delta_mse_dof"].to_numpy(dtype=np.float64)
    else:  # a table written before the p-values existed: no test
        se = dof = np.full(len(heads), np.nan)
    dof = np.nan_to_num(dof, nan=0.0)
    estimate = heads["delta_mse"].to_numpy(dtype=np.float64)
    limit = threshold * baseline_mse
    p_two = t_p_values(estimate, se, dof)
    p_removable = t_p_values(estimate, se, dof, limit, "less")
    adjusted_two, adjusted_removable = adjusted_p_values(p_two), adjusted_p_values(p_removable)
    tested = np.isfinite(p_two)
    lo = heads["delta_mse_lo"].to_numpy(dtype=np.float64) if "delta_mse_lo" in heads else np.full(len(heads), np.nan)
    hi = heads["delta_mse_hi"].to_numpy(dtype=np.float64) if "delta_mse_hi" in heads else np.full(len(heads), np.nan)
    heads["important_raw"] = tested & (lo > 0)
    heads["helpful_raw"] = tested & (hi < 0)
    heads["removable_raw"] = tested & (hi < limit)
    heads["important"] = tested & (adjusted_two <= q) & (estimate > 0)
    heads["helpful"] = tested & (adjusted_two <= q) & (estimate < 0)
    heads["removable_p"], heads["removable_p_bh"] = p_removable, adjusted_removable
    heads["removable"] = tested & (adjusted_removable <= q)
    if "interval" not in heads:
        heads["interval"] = np.where(tested, "", "no interval")
    return HeadLists(heads.reset_index(drop=True), int(tested.sum()), len(heads), q, threshold, baseline_mse)


def removable_heads(sweep: pd.DataFrame, threshold: float = REMOVABLE, q: float = Q) -> pd.DataFrame:
    """The head rows of a sweep listed as removable: shown under `threshold` × the baseline MSE by a one-sided test,
    with Benjamini–Hochberg across the heads (see `head_lists`)."""
    lists = head_lists(sweep, q=q, threshold=threshold)
    return lists.table[lists.table["removable"]]


__all__ = ["BASELINE", "HeadLists", "REMOVABLE", "head_lists", "removable_heads"]
