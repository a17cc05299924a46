"""The coverage benchmark's seeds setting: the lab's interval of the mean Spearman ρ between the head importances of
every pair of seeds (the jackknife over seeds), against the truth by simulation of many seeds."""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from benchmarks.coverage_cells import HEADS, Tally
from informer_lab.analysis.intervals import pairwise_mean_interval


def spearman_pairs(values: np.ndarray) -> np.ndarray:
    """[heads, seeds] → [seeds, seeds] Spearman ρ of every pair of seeds."""
    ranks = rankdata(values, axis=0)
    return np.corrcoef(ranks, rowvar=False)


def pair_rho(values: np.ndarray) -> np.ndarray:
    """[heads, 2, draws] → [draws] Spearman ρ between the two seeds of every draw (no ties: continuous values)."""
    ranks = rankdata(values, axis=0)
    centred = ranks - ranks.mean(axis=0)
    a, b = centred[:, 0], centred[:, 1]
    return (a * b).sum(axis=0) / np.sqrt((a * a).sum(axis=0) * (b * b).sum(axis=0))


def seeds_setting(tally: Tally, seeds: int, noise: float, reps: int, rng: np.random.Generator, before: bool) -> None:
    for _ in range(reps):
        level = rng.standard_normal(HEADS)
        truth = float(pair_rho(level[:, None, None] + noise * rng.standard_normal((HEADS, 2, 2000))).mean())
        values = level[:, None] + noise * rng.standard_normal((HEADS, seeds))
        interval = pairwise_mean_interval(spearman_pairs(values))
        key = ("seeds_rho", f"noise {noise:g}", HEADS, 0, seeds, 1)
        tally.add((*key, "lab"), interval.lo, interval.hi, truth)
        if not before:
            continue
        draws = []
        for _ in range(400):
            pick = rng.integers(0, HEADS, HEADS)
            corr = spearman_pairs(values[pick])
            i, j = np.triu_indices(seeds, k=1)
            draws.append(np.nanmean(corr[i, j]))
        lo, hi = np.nanquantile(draws, [0.025, 0.975])
        tally.add((*key, "mbb"), lo, hi, truth)
