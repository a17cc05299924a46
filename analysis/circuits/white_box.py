"""Metrics of an attribution map against the true cells of a window (white-box metrics): pure functions of a map of
scores and a boolean mask of the same size with at least one true cell.

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

Relevance mass and rank accuracy (Arras, Osman & Samek 2022, "CLEVR-XAI"; as xaitimesynth scores them):

    mass accuracy = Σ_{i ∈ T} r_i / Σ_i r_i,     r = max(s, 0)     (a map with no positive relevance: 0)
    rank accuracy = |top_K(s) ∩ T| / K,          K = |T|

The top K is taken with ties broken at random, in expectation: the cells strictly above the cut count whole, the
cells tied at the cut count by the share of the free places they fill; a map whose spread is float rounding is one
tie, as for the areas. The mass is computed on the scores as given. A map of uniform random scores gets about
|T| / N for both, the share of true cells.
"""
from __future__ import annotations

import numpy as np

WHITE_BOX_METRICS = ("aup", "aur", "auprc", "mass_accuracy", "rank_accuracy")
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


def _flat(scores, truth) -> tuple[np.ndarray, np.ndarray]:
    """Flat float scores and boolean truth of the same size, at least one true cell (every metric's inputs)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    t = np.asarray(truth, dtype=bool).reshape(-1)
    if s.shape != t.shape:
        raise ValueError(f"scores ({s.size}) and truth ({t.size}) differ in size")
    if not t.any():
        raise ValueError("the true mask has no cell: the metrics are undefined")
    return s, t


def pr_curve(scores, truth) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, precision, recall), one entry per distinct score, thresholds decreasing: the selection at
    threshold τ is every cell with score ≥ τ. Scores as given (not scaled). truth: booleans of the same size, at
    least one true."""
    s, t = _flat(scores, truth)
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


def mass_accuracy(scores, truth) -> float:
    """The share of the positive relevance that lies on the true cells (module docstring)."""
    s, t = _flat(scores, truth)
    if not np.all(np.isfinite(s)):
        raise ValueError("attribution scores must be finite")
    r = np.maximum(s, 0.0)
    total = r.sum()
    return float(r[t].sum() / total) if total > 0 else 0.0


def rank_accuracy(scores, truth) -> float:
    """The expected share of true cells among the |T| highest scores, ties at the cut broken at random."""
    s, t = _flat(scores, truth)
    s = scaled(s)  # monotone; a map whose spread is float rounding is one tie (exactly chance), as for the areas
    K = int(t.sum())
    cut = np.sort(s)[::-1][K - 1]  # the K-th highest score
    above, tied = s > cut, s == cut
    free = K - int(above.sum())  # places the tied cells share
    expected = t[above].sum() + free * t[tied].sum() / tied.sum()
    return float(expected / K)


def white_box(scores, truth) -> dict[str, float]:
    """Every white-box metric (WHITE_BOX_METRICS) of one map against one true mask."""
    return {"aup": aup(scores, truth), "aur": aur(scores, truth), "auprc": auprc(scores, truth),
            "mass_accuracy": mass_accuracy(scores, truth), "rank_accuracy": rank_accuracy(scores, truth)}



__all__ = ["ROUNDING", "WHITE_BOX_METRICS", "aup", "auprc", "aur", "mass_accuracy", "pr_curve", "rank_accuracy",
           "scaled", "white_box"]
