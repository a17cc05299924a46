"""Pure shaping of the Known answers screen's results for display."""
from __future__ import annotations

import math

import pandas as pd

from informer_lab.analysis.heads.faithfulness import Faithfulness
from informer_lab.analysis.planted.selftest import SelfTest

ROLE = {"learned": "the model", "instrument": "instrument", "model": "this model",
        "agreement": "two instruments", "heuristic": "the method's assumption"}


def interval(lo: float, hi: float, digits: int = 3) -> str:
    return "—" if lo is None or (isinstance(lo, float) and math.isnan(lo)) else f"[{lo:.{digits}g}, {hi:.{digits}g}]"


def self_test_table(result: SelfTest) -> pd.DataFrame:
    t = result.table
    return pd.DataFrame({
        "check": t["check"], "result": result.results(),
        "figure": t["figure"].map(lambda v: "—" if math.isnan(v) else f"{v:.3g}"),
        "95 % interval": [interval(lo, hi) for lo, hi in zip(t["lo"], t["hi"])],
        "criterion": t["criterion"], "a failure speaks of": [ROLE[r] for r in t["role"]],
        "instrument": t["instrument"], "detail": t["detail"]})


def baselines_table(result: Faithfulness) -> pd.DataFrame:
    t = result.table
    return pd.DataFrame({
        "head": t["label"], "reading": t["reading"], "attention": t["attention"],
        "beyond the floor (BH): uniform": t["uniform_beyond"], "permuted": t["permuted_beyond"],
        "uniform: change": t["uniform_change"].map(lambda v: f"{v:.3g}"),
        "uniform 95 %": [interval(lo, hi) for lo, hi in zip(t["uniform_change_lo"], t["uniform_change_hi"])],
        "permuted: change (median draw)": t["permuted_change"].map(lambda v: f"{v:.3g}"),
        "permuted 95 %": [interval(lo, hi) for lo, hi in zip(t["permuted_change_lo"], t["permuted_change_hi"])],
        "draws min–max": [interval(lo, hi) for lo, hi in zip(t["permuted_spread_lo"], t["permuted_spread_hi"])],
        "ΔMSE uniform": [f"{v:+.3g} {interval(lo, hi)}" for v, lo, hi in
                         zip(t["delta_mse_uniform"], t["delta_mse_uniform_lo"], t["delta_mse_uniform_hi"])]})
