"""Shaping for the Activation patching screen: the heads × horizon matrix, the ranking, one patch's forecast."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.instruments.patching import ALL_HEADS, PatchResult
from informer_lab.analysis.heads.names import head_name


def head_matrix(result: PatchResult) -> tuple[np.ndarray, list[str], list[int]]:
    """([patches, steps] restored share, row labels "site h", steps), the every-head-at-once row last."""
    table = result.table
    labels = [head_name(s, h) if h >= 0 else ("every head at once" if s == ALL_HEADS else s) for s, h in result.labels]
    steps = sorted(table["step"].unique())
    z = table["restored"].to_numpy(float).reshape(len(result.labels), len(steps))
    return z, labels, steps


def ranking(result: PatchResult) -> pd.DataFrame:
    """The heads by restored share pooled over the horizon, largest first (the all-heads row apart, last)."""
    summary = result.summary
    heads = summary[summary["head"] >= 0].sort_values("restored", ascending=False, na_position="last")
    return pd.concat([heads, summary[summary["head"] < 0]], ignore_index=True)


def forecasts(result: PatchResult, patch: int, targets: list[str], column: str) -> pd.DataFrame:
    """Clean, corrupted and one patched forecast of one column (standardised): step, clean, corrupt, patched."""
    c = targets.index(column)
    return pd.DataFrame({"step": np.arange(1, result.clean.shape[0] + 1), "clean": result.clean[:, c],
                         "corrupt": result.corrupt[:, c], "patched": result.patched[patch, :, c]})
