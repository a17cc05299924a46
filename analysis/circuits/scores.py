"""The benchmark's metrics (analysis.circuits.benchmark), pure functions of an attribution map and a true mask, or of a
forecast function and a window.

Against the true cells (white-box metrics, Crabbé & van der Schaar 2021, "Explaining time series predictions with
dynamic masks"; tint's `aup`, `aur`, `auprc`). The scores s of the cells are scaled to [0, 1] (min–max: s − min over
max − min; a constant map is all 0), every distinct scaled score τ is a threshold, the cells at or above it the
selection, and with T the true cells

    precision(τ) = |sel(τ) ∩ T| / |sel(τ)|,     recall(τ) = |sel(τ) ∩ T| / |T|
    AUP  = ∫ precision(τ) dτ,  AUR = ∫ recall(τ) dτ      (trapezoids over the distinct τ, increasing: sklearn's
                                                           `auc(thresholds, precision[:-1])`, as tint computes them)
    AUPRC = Σ_n (R_n − R_{n−1}) · P_n                    (thresholds decreasing, R_0 = 0: sklearn's
                                                           `average_precision_score`)

Tied scores enter together (one threshold per distinct value), as in sklearn (≥ 1.1: every distinct score is a
threshold, none dropped after full recall). tint scales by (s − min) / (max + 1e-5) instead: the same for a map whose
minimum is 0. A map with a single distinct value has one threshold: AUP = AUR = 0, and AUPRC = the share of true
cells (everything selected at once); so has a map whose spread is float rounding (at most `ROUNDING` of its largest
magnitude: flow's integer capacities leave differences of ~1e-7), scaled to all zeros.

Removal (DeYoung et al. 2020, ERASER, as ΔMSE for a forecast). For one window and horizon step h, the top `share`
of the (position, column) cells by the instrument's score are removed (set to `fill`, 0: each column's training
mean after standardising), comprehensiveness, or only they are kept, the rest removed, sufficiency; the figure is
the squared error of the step-h forecast after the edit minus before it. Each against the same number of random cells
(`draws` seeded draws, their mean), paired: excess = instrument − random. Ties at the cut are broken at random
(seeded), so a map that ties whole steps (a time-only instrument spread over the columns) takes random columns there.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import torch

SHARE = 0.2
DRAWS = 4
ROUNDING = 1e-6


def scaled(scores) -> np.ndarray:
    """Min–max scaling to [0, 1] of a flat array. A map whose spread is at most ROUNDING of its largest magnitude is
    constant (→ zeros): its differences are float rounding (flow's integer capacities leave ~1e-7), not a ranking."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(s)):
        raise ValueError("attribution scores must be finite")
    low, high = (s.min(), s.max()) if len(s) else (0.0, 0.0)
    if high - low <= ROUNDING * max(abs(low), abs(high)):
        return np.zeros_like(s)
    return (s - low) / (high - low)


def pr_curve(scores, truth) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, precision, recall), one entry per distinct score, thresholds decreasing: the selection at
    threshold τ is every cell with score ≥ τ. Scores as given (not scaled). truth: booleans of the same size, at
    least one true."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    t = np.asarray(truth, dtype=bool).reshape(-1)
    if s.shape != t.shape:
        raise ValueError(f"scores ({s.size}) and truth ({t.size}) differ in size")
    if not t.any():
        raise ValueError("the true mask has no cell: precision and recall are undefined")
    order = np.argsort(-s, kind="mergesort")
    s, t = s[order], t[order]
    last = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]  # the last cell of each distinct value
    tps = np.cumsum(t)[last].astype(np.float64)
    selected = (last + 1).astype(np.float64)
    return s[last], tps / selected, tps / tps[-1]


def _area(thresholds: np.ndarray, values: np.ndarray) -> float:
    if len(thresholds) < 2:
        return 0.0
    x, y = thresholds[::-1], values[::-1]  # increasing thresholds
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))


def aup(scores, truth) -> float:
    """Area under precision(τ) over the scaled thresholds τ ∈ [0, 1] (module docstring)."""
    thresholds, precision, _ = pr_curve(scaled(scores), truth)
    return _area(thresholds, precision)


def aur(scores, truth) -> float:
    """Area under recall(τ) over the scaled thresholds τ ∈ [0, 1] (module docstring)."""
    thresholds, _, recall = pr_curve(scaled(scores), truth)
    return _area(thresholds, recall)


def auprc(scores, truth) -> float:
    """Average precision Σ_n (R_n − R_{n−1}) P_n, thresholds decreasing (sklearn's average_precision_score)."""
    _, precision, recall = pr_curve(scaled(scores), truth)
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def white_box(scores, truth) -> dict[str, float]:
    """{"aup", "aur", "auprc"} of one map against one true mask."""
    return {"aup": aup(scores, truth), "aur": aur(scores, truth), "auprc": auprc(scores, truth)}


def top_cells(scores, count: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask (the shape of `scores`) of the `count` highest scores, ties broken at random."""
    s = np.asarray(scores, dtype=np.float64)
    flat = s.reshape(-1)
    if not 0 <= count <= flat.size:
        raise ValueError(f"count must be in 0 … {flat.size}, got {count}")
    order = np.lexsort((rng.random(flat.size), -flat))  # by score, descending; ties in random order
    mask = np.zeros(flat.size, dtype=bool)
    mask[order[:count]] = True
    return mask.reshape(s.shape)


def random_cells(shape, count: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask of `count` cells drawn without replacement."""
    size = int(np.prod(shape))
    mask = np.zeros(size, dtype=bool)
    mask[rng.choice(size, size=count, replace=False)] = True
    return mask.reshape(shape)


# forecast(x [N, seq_len, enc_in]) → [N, pred_len]: the forecast column's values at every horizon step
Forecast = Callable[[torch.Tensor], torch.Tensor]


def removal_scores(forecast: Forecast, x: np.ndarray, truth: np.ndarray, steps: Sequence[int],
                   maps: Mapping[str, np.ndarray], *, share: float = SHARE, draws: int = DRAWS, fill: float = 0.0,
                   rng: np.random.Generator, chunk: int = 128) -> dict[str, dict[str, float]]:
    """Comprehensiveness and sufficiency of every map for one window (module docstring).

    x: [seq_len, enc_in] the window (standardised); truth: [pred_len] the forecast column's true values; steps:
    horizon steps (1-based); maps: name → [len(steps), seq_len, enc_in] scores per step. → name →
    {comprehensiveness, comprehensiveness_random, comprehensiveness_excess, sufficiency, sufficiency_random,
    sufficiency_excess}, each the mean over `steps` of the step's ΔSE (squared error after the edit − before),
    excess = the map's − random's."""
    x = np.asarray(x, dtype=np.float32)
    L, C = x.shape
    count = int(round(share * L * C))
    if not 1 <= count <= L * C:
        raise ValueError(f"share {share} of {L * C} cells selects no cell")
    names = list(maps)
    for name in names:
        if np.shape(maps[name]) != (len(steps), L, C):
            raise ValueError(f"map {name!r} has shape {np.shape(maps[name])}, expected {(len(steps), L, C)}")
    edits, index = [x], {}  # row 0: the window unchanged

    def add(key, keep_mask: np.ndarray, keep: bool):
        edited = x.copy()
        edited[~keep_mask if keep else keep_mask] = fill
        index[key] = len(edits)
        edits.append(edited)

    for t in range(len(steps)):
        for d in range(draws):
            chosen = random_cells((L, C), count, rng)
            add(("random", "comprehensiveness", t, d), chosen, keep=False)
            add(("random", "sufficiency", t, d), chosen, keep=True)
        for name in names:
            chosen = top_cells(scaled(maps[name][t]).reshape(L, C), count, rng)
            add((name, "comprehensiveness", t), chosen, keep=False)
            add((name, "sufficiency", t), chosen, keep=True)
    batch = torch.as_tensor(np.stack(edits))
    with torch.no_grad():
        out = torch.cat([forecast(batch[i:i + chunk]).detach().double().cpu()
                         for i in range(0, len(batch), chunk)]).numpy()  # [rows, pred_len]
    truth = np.asarray(truth, dtype=np.float64)
    error = (out - truth[None, :]) ** 2
    result = {}
    for name in names:
        figures = {}
        for kind in ("comprehensiveness", "sufficiency"):
            own = np.mean([error[index[(name, kind, t)], h - 1] - error[0, h - 1] for t, h in enumerate(steps)])
            rand = np.mean([np.mean([error[index[("random", kind, t, d)], h - 1] for d in range(draws)])
                            - error[0, h - 1] for t, h in enumerate(steps)])
            figures[kind] = float(own)
            figures[f"{kind}_random"] = float(rand)
            figures[f"{kind}_excess"] = float(own - rand)
        result[name] = figures
    return result


__all__ = ["DRAWS", "Forecast", "SHARE", "aup", "auprc", "aur", "pr_curve", "random_cells", "removal_scores",
           "scaled", "top_cells", "white_box"]
