"""The moving-block bootstrap against a series whose true interval is known in closed form.

x_t is a stationary AR(1) series with coefficient φ and unit innovations, like the errors of overlapping windows
(neighbours share most of their rows). The exact variance of its mean over n steps is
    Var(x̄) = σ² / (n (1 − φ²)) · [1 + 2 Σ_{k=1}^{n−1} (1 − k/n) φ^k],
so the true 95 % interval of the mean is x̄ ± 1.96 √Var(x̄). The block bootstrap must match its width and cover the
true mean (0) in about 95 % of replications; the i.i.d. bootstrap (blocks of 1) must not: it is the mistake the
blocks exist to avoid.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.intervals import across_seeds, block_indices, block_length, bootstrap, mean_interval, mean_intervals

PHI, N = 0.9, 800


def ar1(n: int, phi: float, rng: np.random.Generator) -> np.ndarray:
    x = np.empty(n)
    x[0] = rng.normal() / np.sqrt(1 - phi ** 2)  # stationary start
    shocks = rng.normal(size=n)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + shocks[t]
    return x


def true_half_width(n: int, phi: float) -> float:
    k = np.arange(1, n)
    var = (1 + 2 * np.sum((1 - k / n) * phi ** k)) / (n * (1 - phi ** 2))
    return 1.959964 * np.sqrt(var)


def coverage(block: int, replications: int = 160) -> tuple[float, float]:
    rng = np.random.default_rng(7)
    hits, widths = 0, []
    for r in range(replications):
        series = ar1(N, PHI, rng)
        interval = mean_interval(series, block=block, resamples=400, seed=r)
        hits += interval.lo <= 0.0 <= interval.hi
        widths.append((interval.hi - interval.lo) / 2)
    return hits / replications, float(np.mean(widths))


def test_the_block_bootstrap_matches_the_known_interval_and_covers_the_truth():
    rate, width = coverage(block=100)
    assert 0.88 <= rate <= 0.99, rate
    assert width == pytest.approx(true_half_width(N, PHI), rel=0.25)


def test_an_iid_bootstrap_over_overlapping_windows_is_far_too_narrow():
    rate, width = coverage(block=1)
    assert rate < 0.6 and width < 0.5 * true_half_width(N, PHI)


def test_block_indices_are_runs_of_consecutive_windows_within_range():
    idx = block_indices(103, 10, 50, seed=3)
    assert idx.shape == (50, 103) and idx.min() >= 0 and idx.max() <= 102
    runs = idx[:, :100].reshape(50, 10, 10)
    assert (np.diff(runs, axis=-1) == 1).all()
    assert (block_indices(103, 10, 50, seed=3) == idx).all()  # seeded


def test_paired_resampling_gives_the_interval_of_the_difference_itself():
    rng = np.random.default_rng(0)
    shared = ar1(500, 0.9, rng) * 10  # a large common component (the windows' difficulty)
    a, b = shared + rng.normal(size=500) * 0.1, shared + 0.5 + rng.normal(size=500) * 0.1
    est, lo, hi = mean_intervals(np.stack([a, b, b - a], axis=1), block=50, seed=1)
    diff_est, diff_lo, diff_hi = bootstrap(np.stack([a, b], 1), block=50, seed=1,
                                           statistic=lambda v: v[:, 1].mean() - v[:, 0].mean())
    assert diff_lo == pytest.approx(lo[2]) and diff_hi == pytest.approx(hi[2])  # the same resampled windows
    assert hi[2] - lo[2] < 0.1 * (hi[0] - lo[0])  # pairing removes the common component
    assert lo[2] <= est[2] <= hi[2] and abs(est[2] - 0.5) < 0.05


def test_block_length_is_the_rows_one_window_reads():
    assert block_length(96, 24, 2000) == 120 and block_length(96, 24, 50) == 50 and block_length(96, 24, 1) == 1


def test_across_seeds_counts_the_seeds_where_the_sign_holds():
    table = pd.DataFrame({"head": [0, 0, 0, 1, 1, 1], "seed": [0, 1, 2] * 2, "delta": [0.2, 0.3, 0.1, -0.1, 0.2, 0.0]})
    out = across_seeds(table, ["head"], "delta").set_index("head")
    assert out.loc[0, "positive_in"] == 3 and out.loc[1, "positive_in"] == 1 and out.loc[1, "negative_in"] == 1
    assert out.loc[0, "delta_mean"] == pytest.approx(0.2)
    assert out.loc[0, "delta_seeds_lo"] < 0.2 < out.loc[0, "delta_seeds_hi"]


def test_interval_sign_reads_an_interval_and_ignores_float_rounding():
    from analysis.intervals import interval_sign
    assert interval_sign(0.01, 0.2) == 1 and interval_sign(-0.3, -0.01) == -1 and interval_sign(-0.1, 0.1) == 0
    assert interval_sign(float("nan"), 0.1) is None
    assert interval_sign(3e-17, 8e-17, scale=0.8) == 0  # the same weights through two scalers
    assert interval_sign(1e-6, 2e-6, scale=0.8) == 1  # small, but a real difference


def test_too_few_seeds_give_no_interval_and_an_mse_interval_respects_its_floor():
    """Two seeds: t quantile 12.7, an interval for a test MSE that ran to -2.42; now none, and it says why. With
    three or more, the t interval of a non-negative metric is cut at 0 (it cannot claim a negative MSE)."""
    two = pd.DataFrame({"key": ["m", "m"], "seed": [0, 1], "mse": [0.3, 0.9]})
    out = across_seeds(two, ["key"], "mse", floor=0.0).iloc[0]
    assert np.isnan(out["mse_seeds_lo"]) and np.isnan(out["mse_seeds_hi"]) and "too few" in out["interval"]
    three = pd.DataFrame({"key": ["m"] * 3, "seed": [0, 1, 2], "mse": [0.05, 0.9, 0.1]})
    out = across_seeds(three, ["key"], "mse", floor=0.0).iloc[0]
    from scipy import stats
    half = stats.t.ppf(0.975, 2) * np.std([0.05, 0.9, 0.1], ddof=1) / np.sqrt(3)
    assert out["mse_seeds_lo"] == 0.0 and out["mse_seeds_hi"] == pytest.approx(np.mean([0.05, 0.9, 0.1]) + half)
    assert "floor" in out["interval"]
