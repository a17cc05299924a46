"""Shaping for the Attribution screen: the attribution matrix and per-feature totals."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


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
