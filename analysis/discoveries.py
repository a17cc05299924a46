"""False discoveries controlled across the heads tested together (Benjamini & Hochberg 1995).

A sweep of 16 heads tests 16 hypotheses at once: with each at 5 %, a model whose heads all do nothing still shows
about one "important" head. Wherever the lab lists heads (important, helpful, removable, beyond the faithfulness
baselines, changed by patching), the list is the heads the Benjamini–Hochberg step-up procedure rejects at
q (0.05 by default) across the family named beside it, from p-values of the same t statistic as the heads'
intervals (`analysis.intervals.WindowMeans.p_values`). The raw decision (p < q, or the interval) stays beside it.

Heads without an interval (too few windows) have no p-value: they are never listed and are not counted in the
family (the BH threshold is taken over the heads that were tested).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

Q = 0.05


def adjusted_p_values(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (scipy's `false_discovery_control`); NaN stays NaN and is not counted
    in the family."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    tested = np.isfinite(p)
    if tested.any():
        out[tested] = false_discovery_control(np.clip(p[tested], 0.0, 1.0), method="bh")
    return out


def benjamini_hochberg(p, q: float = Q) -> np.ndarray:
    """Which hypotheses the BH step-up procedure rejects at level q: bool, shaped like p (NaN: never)."""
    if not 0 < q < 1:
        raise ValueError(f"q must lie in (0, 1), got {q}")
    adjusted = adjusted_p_values(p)
    return np.isfinite(adjusted) & (adjusted <= q)


def family(count: int, what: str = "heads of this model") -> str:
    """The family a list was controlled over, in words ("16 heads of this model")."""
    return f"{count} {what}" if count != 1 else f"1 {what.replace('heads', 'head', 1)}"


def discovery_columns(table: pd.DataFrame, p: np.ndarray, prefix: str, q: float = Q) -> pd.DataFrame:
    """A copy of `table` with `<prefix>_p` (raw), `<prefix>_p_bh` (BH-adjusted across the rows) and `<prefix>_bh`
    (rejected at q after adjustment)."""
    out = table.copy()
    out[f"{prefix}_p"] = np.asarray(p, dtype=np.float64)
    out[f"{prefix}_p_bh"] = adjusted_p_values(p)
    out[f"{prefix}_bh"] = benjamini_hochberg(p, q)
    return out


__all__ = ["Q", "adjusted_p_values", "benjamini_hochberg", "discovery_columns", "family"]
