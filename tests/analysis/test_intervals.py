"""Intervals against the mathematics they claim, and their coverage on small but hard cases.

The cosine (EWC) interval must reduce to the textbook t interval for independent values, give its degrees of freedom
from the span as the Fejér spectrum says, and cover the truth on overlapping windows: a moving average of white row
noise over the window's rows is the case where few independent stretches and strong dependence meet, and where the
moving-block bootstrap the lab used before covered far less than 95 % (benchmarks/coverage.py measures the rest).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from informer_lab.analysis.intervals import (MIN_DOF, across_seeds, cosine_dof, flat_dof, mean_interval, median_interval,
                                memory_span, overlap_span, pairwise_mean_interval, ratio_interval, t_p_values,
                                window_means, windows_needed)


def moving_average_windows(n: int, span: int, rng: np.random.Generator) -> np.ndarray:
    """[n] per-window means of white rows over each window's `span` rows: windows w and w + d share span − d rows,
    the triangular autocorrelation of overlapping windows. True mean 0."""
    rows = rng.standard_normal(n + span - 1)
    return np.convolve(rows, np.ones(span) / span, mode="valid")


def moving_block_bootstrap(values: np.ndarray, block: int, rng: np.random.Generator, resamples: int = 300):
    """The method the lab used before: percentile interval of the mean over moving blocks of `block` windows."""
    n = len(values)
    starts = rng.integers(0, n - block + 1, size=(resamples, -(-n // block)))
    idx = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :n]
    return np.quantile(values[idx].mean(axis=1), [0.025, 0.975])


def test_independent_values_get_the_textbook_t_interval_and_p_value():
    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 1.0, size=(40, 3))
    m = window_means(x, span=1, memory=False)
    assert (m.dof == 39).all()
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(0.95)
    np.testing.assert_allclose(m.lo, ci.low, rtol=1e-12)
    np.testing.assert_allclose(m.hi, ci.high, rtol=1e-12)
    np.testing.assert_allclose(m.p_values(), stats.ttest_1samp(x, 0.0).pvalue, rtol=1e-10)
    np.testing.assert_allclose(m.p_values(0.1, "greater"), stats.ttest_1samp(x, 0.1, alternative="greater").pvalue,
                               rtol=1e-10)
    np.testing.assert_allclose(m.p_values(0.1, "less"), stats.ttest_1samp(x, 0.1, alternative="less").pvalue,
                               rtol=1e-10)


def test_the_degrees_of_freedom_follow_the_fejer_spectrum_of_the_span():
    assert cosine_dof(500, 1) == 499
    dofs = [cosine_dof(2000, span) for span in (2, 10, 60, 120, 240)]
    assert dofs == sorted(dofs, reverse=True) and dofs[-1] >= 1
    # the definition: the mean Fejér ratio over the first ν frequencies is ≥ 0.97, over ν + 1 it is not
    n, span = 2000, 120
    nu = cosine_dof(n, span)
    j = np.arange(1, nu + 2)
    lam = np.pi * j / n
    ratio = (np.sin(span * lam / 2) / (span * np.sin(lam / 2))) ** 2
    assert ratio[:nu].mean() >= 0.97 > ratio.mean()
    assert cosine_dof(windows_needed(120), 120) >= MIN_DOF > cosine_dof(windows_needed(120) - 60, 120)


def test_too_few_independent_stretches_give_no_interval_and_say_why():
    rng = np.random.default_rng(1)
    values = moving_average_windows(1024, 216, rng)  # 4.7 spans: the sweep of the planted null
    m = window_means(values, span=216)
    assert np.isnan(m.lo) and np.isnan(m.hi) and np.isnan(m.p_values())
    reason = m.reasons()[0]
    assert "no interval" in reason and "1,024 windows" in reason and "216" in reason
    assert mean_interval(values, span=216).reason == reason


def test_overlapping_windows_are_covered_where_the_moving_block_bootstrap_was_not():
    """20 spans of windows, each a moving average of white rows: the cosine interval covers 0 in ≥ 93 % of 1,000
    replications; the moving-block bootstrap over the same blocks in clearly fewer (it fails the same bar)."""
    rng = np.random.default_rng(2)
    span, n, reps = 48, 960, 1000
    lab = mbb = shown = 0
    for _ in range(reps):
        values = moving_average_windows(n, span, rng)
        m = window_means(values, span=span)
        if np.isfinite(m.lo):
            shown += 1
            lab += m.lo <= 0.0 <= m.hi
        lo, hi = moving_block_bootstrap(values, span, rng)
        mbb += lo <= 0.0 <= hi
    assert shown >= 0.9 * reps
    assert lab / shown >= 0.93, lab / shown
    assert mbb / reps < 0.91, mbb / reps


def test_the_span_of_windows_scored_a_stride_apart():
    assert overlap_span(96, 24) == 120 and overlap_span(96, 24, 8) == 15 and overlap_span(96, 24, 500) == 1


def test_memory_beyond_the_span_is_found_and_white_values_keep_their_span():
    rng = np.random.default_rng(3)
    white = rng.standard_normal(4000)
    assert memory_span(white[:, None], 1)[0] == 1
    # a figure whose level repeats every 100 windows with persistence 0.9: correlated far beyond a span of 10
    seasonal = np.zeros(4000)
    shocks = rng.standard_normal(4000)
    for t in range(4000):
        seasonal[t] = shocks[t] + (0.9 * seasonal[t - 100] if t >= 100 else 0.0)
    found = memory_span(seasonal[:, None], 10)[0]
    assert found > 200
    assert memory_span(np.ones((4000, 1)), 10)[0] == 10  # a constant column keeps its span


def test_a_spectrum_that_rises_towards_zero_loses_degrees_of_freedom():
    flat = np.ones(200)
    assert flat_dof(flat, 40) == 40
    peaked = np.ones(200)
    peaked[:2] = 60.0
    assert flat_dof(peaked, 40) < 40


def test_a_zero_difference_has_a_zero_width_interval_and_p_value_one():
    m = window_means(np.zeros((500, 2)), span=10)
    assert (m.lo == 0).all() and (m.hi == 0).all() and (m.p_values() == 1).all()
    assert t_p_values(0.5, 0.0, 10, 0.0, "greater") == 0.0 and t_p_values(-0.5, 0.0, 10, 0.0, "greater") == 1.0


def test_the_ratio_of_means_covers_its_truth():
    rng = np.random.default_rng(4)
    hits = shown = 0
    for _ in range(300):
        b = rng.gamma(4.0, 0.25, size=200)  # mean 1
        a = 1.5 * b + rng.normal(0, 0.3, size=200)  # E a / E b = 1.5
        interval = ratio_interval(a, b, span=1)
        if np.isfinite(interval.lo):
            shown += 1
            hits += interval.lo <= 1.5 <= interval.hi
    assert shown == 300 and hits / shown >= 0.93


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=60))
def test_the_median_interval_is_the_order_statistic_interval_with_binomial_coverage(n):
    values = np.arange(n, dtype=float)[::-1].copy()
    interval = median_interval(values)
    coverage = [1 - 2 * stats.binom.cdf(r - 1, n, 0.5) for r in range(1, n // 2 + 1)]
    best = max([r for r, c in zip(range(1, n // 2 + 1), coverage) if c >= 0.95], default=0)
    if best == 0:
        assert np.isnan(interval.lo)
    else:
        assert (interval.lo, interval.hi) == (float(best - 1), float(n - best))
        assert interval.lo <= interval.estimate <= interval.hi


def test_the_pairwise_mean_over_seeds_is_the_jackknife_of_the_u_statistic():
    rng = np.random.default_rng(5)
    S = 6
    m = rng.uniform(-1, 1, (S, S))
    m = (m + m.T) / 2
    interval = pairwise_mean_interval(m)
    i, j = np.triu_indices(S, 1)
    assert interval.estimate == pytest.approx(m[i, j].mean())
    loo = np.array([np.mean([m[a, b] for a, b in zip(i, j) if s not in (a, b)]) for s in range(S)])
    se = np.sqrt((S - 1) / S * ((loo - loo.mean()) ** 2).sum())
    half = stats.t.ppf(0.975, S - 1) * se
    assert interval.lo == pytest.approx(interval.estimate - half) and interval.hi == pytest.approx(
        interval.estimate + half)
    assert np.isnan(pairwise_mean_interval(m[:2, :2]).lo)  # two seeds: no interval


def test_across_seeds_counts_the_seeds_where_the_sign_holds():
    table = pd.DataFrame({"head": [0, 0, 0, 1, 1, 1], "seed": [0, 1, 2] * 2, "delta": [0.2, 0.3, 0.1, -0.1, 0.2, 0.0]})
    out = across_seeds(table, ["head"], "delta").set_index("head")
    assert out.loc[0, "positive_in"] == 3 and out.loc[1, "positive_in"] == 1 and out.loc[1, "negative_in"] == 1
    assert out.loc[0, "delta_mean"] == pytest.approx(0.2)
    assert out.loc[0, "delta_seeds_lo"] < 0.2 < out.loc[0, "delta_seeds_hi"]


def test_interval_sign_reads_an_interval_and_ignores_float_rounding():
    from informer_lab.analysis.intervals import interval_sign
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
    half = stats.t.ppf(0.975, 2) * np.std([0.05, 0.9, 0.1], ddof=1) / np.sqrt(3)
    assert out["mse_seeds_lo"] == 0.0 and out["mse_seeds_hi"] == pytest.approx(np.mean([0.05, 0.9, 0.1]) + half)
    assert "floor" in out["interval"]


def test_sixty_thousand_windows_at_seq_len_1440_get_their_degrees_of_freedom_and_an_interval():
    """The branch only long splits reach: 60,000 windows of span 1,536 (seq_len 1440 + pred_len 96), 39 spans."""
    rng = np.random.default_rng(6)
    values = moving_average_windows(60_000, 1536, rng)[:, None] + rng.normal(0, 0.01, size=(60_000, 2))
    m = window_means(values, span=1536)
    assert (m.dof >= MIN_DOF).all() and np.isfinite(m.lo).all()
    assert (m.dof == cosine_dof(60_000, 1536)).all() and 10 <= m.dof[0] <= 16
    assert windows_needed(1536) < 60_000 and cosine_dof(windows_needed(1536), 1536) >= MIN_DOF
