"""Degradation per horizon step: how far the forecast's error rises at every step h = 1 … pred_len when a map's top
cells are removed. Comprehensiveness (analysis.circuits.scores) reads only the steps whose map it removes; a forecast
is a curve, and an instrument that finds the cells the near steps read can miss the ones the far steps read.

For one window, each map's relevance is its scaled maps averaged over the probed steps (one [seq_len, enc_in] map per
instrument); the top `share` of the cells by it are set to `fill` (each column's training mean), and

    degradation(h) = (F_h(x̃) − y_h)² − (F_h(x) − y_h)²      (higher: the removed cells mattered more to step h)

is read at every step of the one forecast. The same for `draws` random cell sets (their mean), paired per window:
excess(h) = the map's − random's. The window's scalar figures are the means over h (`degradation`,
`degradation_excess`); the curve over h is kept per instrument (`HORIZON_COLUMNS`) and summarised over the models
that learned by `horizon_table`.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd
import torch

from informer_lab.analysis.circuits.cumulative import ranked
from informer_lab.analysis.circuits.white_box import scaled

HORIZON_METRICS = ("degradation", "degradation_excess")
HORIZON_COLUMNS = ("kind", "seed", "instrument", "step", "value", "windows")
TABLE_COLUMNS = ("instrument", "step", "value", "random", "excess", "low", "high", "models")


def window_relevance(per_step: np.ndarray) -> np.ndarray:
    """[seq_len, enc_in]: the mean over the probed steps of each step's map scaled to [0, 1]."""
    per_step = np.asarray(per_step, dtype=np.float64)
    return np.mean([scaled(m).reshape(m.shape) for m in per_step], axis=0)


def horizon_degradation(forecast, x: np.ndarray, truth: np.ndarray, maps: Mapping[str, np.ndarray], *,
                        share: float, draws: int, rng: np.random.Generator, fill: float = 0.0,
                        chunk: int = 128) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(name → [pred_len] degradation(h) of the window, [pred_len] the `draws` random cell sets' mean: the control
    each map's excess is taken against; module docstring).
    x: [seq_len, enc_in]; truth: [pred_len]; maps: name → [steps, seq_len, enc_in];
    forecast(x [N, seq_len, enc_in]) → [N, pred_len]."""
    x = np.asarray(x, dtype=np.float32)
    L, C = x.shape
    count = int(round(share * L * C))
    if not 1 <= count <= L * C or draws < 1:
        raise ValueError(f"share {share} of {L * C} cells selects no cell, or draws {draws} < 1")
    names = list(maps)
    edits = [x]
    orders = [rng.permutation(L * C) for _ in range(draws)]  # random cells first, then each map's highest
    orders += [ranked(window_relevance(maps[name]), rng) for name in names]
    for order in orders:
        edited = x.reshape(-1).copy()
        edited[order[:count]] = fill
        edits.append(edited.reshape(L, C))
    batch = torch.as_tensor(np.stack(edits))
    with torch.no_grad():
        out = torch.cat([forecast(batch[i:i + chunk]).detach().double().cpu()
                         for i in range(0, len(batch), chunk)]).numpy()  # [1 + draws + maps, pred_len]
    error = (out - np.asarray(truth, dtype=np.float64)[None, :]) ** 2
    rise = error[1:] - error[0]
    return {name: rise[draws + i] for i, name in enumerate(names)}, rise[:draws].mean(axis=0)


def curve_rows(kind, seed, per_window: Mapping[str, list[np.ndarray]]) -> list[dict]:
    """HORIZON_COLUMNS rows of one model: per instrument and step, the mean over its windows."""
    rows = []
    for name, curves in per_window.items():
        mean = np.mean(np.stack(curves), axis=0)
        rows += [{"kind": kind, "seed": seed, "instrument": name, "step": h + 1, "value": float(v),
                  "windows": len(curves)} for h, v in enumerate(mean)]
    return rows


def horizon_table(curves: pd.DataFrame, learned: set[tuple[str, int]]) -> pd.DataFrame:
    """TABLE_COLUMNS: per instrument and step, the mean degradation over the models that learned (value), the random
    map's (random: seeded uniform scores, the benchmark's control), their paired difference (excess) and its 95 % t
    interval over models (low, high; each model one independent unit; none under 3 models)."""
    from scipy.stats import t as student

    keep = [(k, int(s)) in learned for k, s in zip(curves["kind"], curves["seed"])]
    part = curves[pd.Series(keep, index=curves.index)]
    wide = part.pivot_table(index=["kind", "seed", "step"], columns="instrument", values="value")
    rows = []
    for name in [c for c in wide.columns if c != "random"]:
        for step, block in wide.groupby(level="step"):
            pair = block[[name, "random"]].dropna()
            n = len(pair)
            value, rand = float(pair[name].mean()) if n else math.nan, float(pair["random"].mean()) if n else math.nan
            diff = pair[name] - pair["random"]
            excess = float(diff.mean()) if n else math.nan
            low = high = math.nan
            if n >= 3:
                half = float(student.ppf(0.975, n - 1) * diff.std(ddof=1) / math.sqrt(n))
                low, high = excess - half, excess + half
            rows.append({"instrument": name, "step": int(step), "value": value, "random": rand, "excess": excess,
                         "low": low, "high": high, "models": n})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


__all__ = ["HORIZON_COLUMNS", "HORIZON_METRICS", "TABLE_COLUMNS", "curve_rows", "horizon_degradation",
           "horizon_table", "window_relevance"]
