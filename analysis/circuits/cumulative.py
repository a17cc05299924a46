"""Cumulative removal (TIMING, Jang et al., ICML 2025): the cells of a window are removed step by step in the order a
map ranks them, and what each step changes is added up, so that a later cell cannot cancel an earlier one's effect
(removing the top K cells at once lets positive and negative effects cancel).

With x⁽⁰⁾ the window and x⁽ᵏ⁾ the window with the first ⌊f_k·N⌋ cells of the order set to `fill` (N = seq_len ×
enc_in cells, f_1 < … < f_K the `fractions`), for horizon step h

    CPD = Σ_k |F_h(x⁽ᵏ⁾) − F_h(x⁽ᵏ⁻¹⁾)|    the order most relevant first    (higher: better)
    CPP = Σ_k |F_h(x⁽ᵏ⁾) − F_h(x⁽ᵏ⁻¹⁾)|    the order least relevant first   (lower: better)

F_h the forecast (standardised units). Each is also computed for random orders (`draws` seeded orders, their mean;
CPP of a random order is its CPD read backwards) and the excess is the map's minus random's, paired per window.
Ties in a map are broken at random (seeded). The mean over the probed steps is the window's figure.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch

from informer_lab.analysis.circuits.white_box import scaled

FRACTIONS = tuple(round(0.05 * k, 2) for k in range(1, 11))  # 5 % … 50 % of the cells, in steps of 5 %
CUMULATIVE_METRICS = ("cpd", "cpd_excess", "cpp", "cpp_excess")
DRAWS = 4


def ranked(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Flat cell indices by score, highest first, ties in random order."""
    flat = np.asarray(scores, dtype=np.float64).reshape(-1)
    return np.lexsort((rng.random(flat.size), -flat))


def prefix_edits(x: np.ndarray, order: np.ndarray, counts: Sequence[int], fill: float) -> np.ndarray:
    """[len(counts), L, C]: x with the first counts[k] cells of `order` set to `fill`."""
    out = np.repeat(x[None], len(counts), axis=0).reshape(len(counts), -1)
    for k, n in enumerate(counts):
        out[k, order[:n]] = fill
    return out.reshape((len(counts),) + x.shape)


def path_length(values: np.ndarray, start: float) -> float:
    """Σ_k |v_k − v_{k−1}| with v_0 = start."""
    return float(np.abs(np.diff(np.r_[start, values])).sum())


def cumulative_scores(forecast, x: np.ndarray, steps: Sequence[int], maps: Mapping[str, np.ndarray], *,
                      fractions: Sequence[float] = FRACTIONS, draws: int = DRAWS, fill: float = 0.0,
                      rng: np.random.Generator, chunk: int = 256) -> dict[str, dict[str, float]]:
    """CPD and CPP of every map for one window (module docstring). x: [seq_len, enc_in]; steps: horizon steps
    (1-based); maps: name → [len(steps), seq_len, enc_in]; forecast(x [N, seq_len, enc_in]) → [N, pred_len].
    → name → {cpd, cpd_random, cpd_excess, cpp, cpp_random, cpp_excess}, each the mean over `steps`."""
    x = np.asarray(x, dtype=np.float32)
    L, C = x.shape
    counts = sorted({int(np.floor(f * L * C)) for f in fractions} - {0})
    if not counts or max(fractions) > 1:
        raise ValueError(f"fractions {tuple(fractions)} of {L * C} cells remove no cell, or more than all")
    names = list(maps)
    for name in names:
        if np.shape(maps[name]) != (len(steps), L, C):
            raise ValueError(f"map {name!r} has shape {np.shape(maps[name])}, expected {(len(steps), L, C)}")
    orders: dict[tuple, np.ndarray] = {}
    for t in range(len(steps)):
        for d in range(draws):
            orders[("random", t, d)] = rng.permutation(L * C)
        for name in names:
            orders[(name, t)] = ranked(scaled(maps[name][t]), rng)
    keys, blocks = [], [x[None]]
    for key, order in orders.items():
        for direction, o in (("cpd", order), ("cpp", order[::-1])):
            keys.append((key, direction))
            blocks.append(prefix_edits(x, o, counts, fill))
    batch = torch.as_tensor(np.concatenate(blocks))
    with torch.no_grad():
        out = torch.cat([forecast(batch[i:i + chunk]).detach().double().cpu()
                         for i in range(0, len(batch), chunk)]).numpy()  # [1 + rows, pred_len]
    base, K = out[0], len(counts)
    rows = {k: out[1 + i * K:1 + (i + 1) * K] for i, k in enumerate(keys)}
    result = {}
    for name in names:
        figures = {}
        for metric in ("cpd", "cpp"):
            own = np.mean([path_length(rows[((name, t), metric)][:, h - 1], base[h - 1])
                           for t, h in enumerate(steps)])
            rand = np.mean([np.mean([path_length(rows[(("random", t, d), metric)][:, h - 1], base[h - 1])
                                     for d in range(draws)]) for t, h in enumerate(steps)])
            figures.update({metric: float(own), f"{metric}_random": float(rand), f"{metric}_excess": float(own - rand)})
        result[name] = figures
    return result


__all__ = ["CUMULATIVE_METRICS", "DRAWS", "FRACTIONS", "cumulative_scores", "path_length", "prefix_edits", "ranked"]
