"""Pure shaping of the Variants screen's results for display."""
from __future__ import annotations

import math

import pandas as pd

from informer_lab.analysis.instruments.variants import Variants


def _interval(lo: float, hi: float, digits: int = 3) -> str:
    return "none" if lo is None or math.isnan(lo) else f"[{lo:.{digits}g}, {hi:.{digits}g}]"


def missing_intervals(result: Variants) -> str:
    """A sentence naming the kinds whose ΔMSE has no interval, and why ('' when every kind has one)."""
    t = result.table
    missing = t[t["delta_mse_lo"].isna()]
    if missing.empty:
        return ""
    reasons = "; ".join(dict.fromkeys(r for r in missing.get("interval", pd.Series(dtype=str)) if r))
    return (f"No interval for {', '.join(missing['kind'])}: {reasons or 'too few windows'}. Their ΔMSE is a point "
            "estimate only; choose more windows.")


def kinds_table(result: Variants) -> pd.DataFrame:
    t = result.table
    out = pd.DataFrame({
        "kind": [f"{k} (own)" if own else k for k, own in zip(t["kind"], t["own"])],
        "MSE": t["mse"].map(lambda v: f"{v:.4f}"),
        "MSE 95 %": [_interval(lo, hi) for lo, hi in zip(t["mse_lo"], t["mse_hi"])],
        "ΔMSE vs own": t["delta_mse"].map(lambda v: f"{v:+.4f}"),
        "ΔMSE 95 %": [_interval(lo, hi) for lo, hi in zip(t["delta_mse_lo"], t["delta_mse_hi"])],
        "mass kept": t["mass_kept"].map(lambda v: f"{v:.3f}"),
        "top-u mass kept": t["topu_overlap"].map(lambda v: f"{v:.3f}")})
    if "ms" in t:
        out["ms / call"] = t["ms"].map(lambda v: f"{v:.2f}")
        out["× SDPA"] = t["ratio"].map(lambda v: f"{v:.2f}")
        out["peak MiB"] = t["peak_mib"].map(lambda v: "—" if math.isnan(v) else f"{v:.1f}")
    return out


def heads_matrix(result: Variants) -> pd.DataFrame:
    """mass_kept with one row per kind and one column per site:head."""
    h = result.heads.assign(label=lambda d: d["site"] + ":" + d["head"].astype(str))
    order = list(dict.fromkeys(h["label"]))
    kinds = list(dict.fromkeys(h["kind"]))
    return h.pivot(index="kind", columns="label", values="mass_kept").loc[kinds, order]
