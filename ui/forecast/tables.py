"""Shaping for the Forecast screen: two models' forecasts side by side."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

AUTO_INPUT_ROWS = 250_000  # windows × seq_len up to which the test split is scored on opening (the sample: 0.16 M)


def side_by_side(first: pd.DataFrame, second: pd.DataFrame, time_column: str, columns: Sequence[str],
                 names: tuple[str, str]) -> pd.DataFrame:
    """One row per forecast timestamp of either model: per column, the first's value, the second's, and
    second − first (blank where only one forecasts that step: their pred_len differ)."""
    a, b = names
    shared = [c for c in columns if c in second.columns]
    merged = first[[time_column, *columns]].merge(second[[time_column, *shared]], on=time_column, how="outer",
                                                  suffixes=("", " (b)")).sort_values(time_column)
    out = pd.DataFrame({time_column: merged[time_column].to_numpy()})
    for c in columns:
        out[f"{c} · {a}"] = merged[c].to_numpy()
        if c in shared:
            out[f"{c} · {b}"] = merged[f"{c} (b)"].to_numpy()
            out[f"{c} · {b} − {a}"] = (merged[f"{c} (b)"] - merged[c]).to_numpy()
    return out
