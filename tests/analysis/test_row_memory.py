"""The rows' memory (analysis.row_memory) against processes whose autocorrelation is known in closed form, and the
intervals it feeds: a seasonal process remembered for days gives no interval on three weeks of windows, where the
figures' own test for memory used to miss it."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st
from scipy.signal import lfilter

from informer_lab.analysis.intervals import MIN_DOF, overlap_span, window_means
from informer_lab.analysis.row_memory import MEMORY_FLOOR, calendar_phases, row_memory, without_profiles


def ar(coefficients: dict[int, float], length: int, seed: int) -> np.ndarray:
    """[length] stationary rows of x_t = Σ c_k x_{t−k} + ε_t (a burn-in of 20 of its longest lags dropped)."""
    a = np.zeros(1 + max(coefficients))
    a[0] = 1.0
    for lag, c in coefficients.items():
        a[lag] = -c
    burn = 20 * len(a)
    return lfilter([1.0], a, np.random.default_rng(seed).standard_normal(length + burn))[burn:]


def test_white_noise_has_no_memory():
    assert row_memory(np.random.default_rng(0).standard_normal((20_000, 3))) == 0


def test_ar1_memory_ends_where_rho_squared_falls_under_the_floor():
    # ρ(ℓ) = φ^ℓ: the last lag with ρ² ≥ MEMORY_FLOOR is ⌊log √floor / log φ⌋ = 14 for φ = 0.9
    expected = math.floor(math.log(math.sqrt(MEMORY_FLOOR)) / math.log(0.9))
    found = [row_memory(ar({1: 0.9}, 40_000, seed)) for seed in range(5)]
    assert all(abs(m - expected) <= 3 for m in found), (expected, found)


def test_a_persistent_daily_season_is_remembered_for_days():
    # x_t = 0.8 x_{t−96} + ε: ρ(96 k) = 0.8^k, ≥ √0.05 up to k = 6 days; nothing between the seasonal lags
    found = row_memory(ar({96: 0.8}, 40_000, 1))
    assert 5 * 96 <= found <= 7 * 96 and found % 96 in (0, 95, 1), found


def test_a_fixed_calendar_profile_is_not_memory_but_a_wandering_level_is():
    times = pd.date_range("2024-01-01", periods=24 * 7 * 20, freq="h")
    rng = np.random.default_rng(2)
    profile = 3.0 * np.sin(2 * np.pi * times.hour.to_numpy() / 24) + np.where(times.day_of_week >= 5, -2.0, 0.0)
    rows = profile + rng.standard_normal(len(times))
    assert row_memory(rows) >= 24 * 7  # without the calendar the repeating profile looks like memory
    assert row_memory(rows, calendar_phases(times)) == 0
    walk = np.cumsum(rng.standard_normal(len(times)))  # a random walk: remembered for days (Bartlett's band widens
    assert row_memory(profile + walk, calendar_phases(times)) >= 48  # with its ρ̂ near 1; its drift is flat_dof's)


def test_calendar_phases_follow_the_step():
    assert len(calendar_phases(pd.date_range("2024-01-01", periods=500, freq="15min"))) == 2
    assert len(calendar_phases(pd.date_range("2024-01-01", periods=500, freq="D"))) == 1
    assert calendar_phases(pd.date_range("2024-01-01", periods=50, freq="MS")) == []


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=24, max_size=24), st.integers(0, 10_000))
def test_adding_a_profile_changes_nothing_once_profiles_are_taken_out(profile, seed):
    times = pd.date_range("2024-01-01", periods=24 * 30, freq="h")
    phases = calendar_phases(times)
    rows = ar({1: 0.7}, len(times), seed)
    moved = rows + np.asarray(profile)[times.hour.to_numpy()]
    assert np.allclose(without_profiles(rows[:, None], phases), without_profiles(moved[:, None], phases), atol=1e-9)
    assert row_memory(rows, phases) == row_memory(moved, phases)


def test_memory_widens_the_span():
    assert overlap_span(96, 24, 8, memory=0) == overlap_span(96, 24, 8) == 15
    assert overlap_span(96, 24, 8, memory=480) == 75 and overlap_span(96, 24, 1, memory=5) == 125


def test_one_span_per_column_is_each_columns_own_interval():
    values = np.random.default_rng(3).standard_normal((600, 3))
    together = window_means(values, span=np.array([1, 20, 60]))
    for c, span in enumerate((1, 20, 60)):
        alone = window_means(values[:, c], span=span)
        assert together.dof[c] == alone.dof and np.isclose(together.lo[c], alone.lo, equal_nan=True)
    assert len(together.reasons()) == 3


def test_three_weeks_of_a_persistent_season_give_no_interval():
    """256 windows (seq_len 96, pred_len 24) every 8th step of 15-minute rows x_t = 0.8 x_{t−96} + ε: a window's
    MSE-like figure (x² at its origin) stays correlated for days. With the rows' memory in the span no interval is
    shown; with the overlap alone, some were, and those covered about 0.8 (benchmarks/coverage.py)."""
    S, P, stride, n = 96, 24, 8, 256
    length = (n - 1) * stride + S + P + 1
    origins = np.arange(n) * stride + S - 1
    shown = 0
    for seed in range(40):
        x = ar({96: 0.8}, length, seed)
        t = np.arange(length)
        span = overlap_span(S, P, stride, memory=row_memory(x, [t % 96, (t // 96) % 7]))
        shown += int(window_means(x[origins] ** 2, span=span).dof >= MIN_DOF)
    assert shown <= 2, shown


def test_every_column_counts_however_many_there_are():
    """Columns are transformed 16 at a time: one remembering column among 40 white ones, in the last group, sets the
    memory of them all."""
    rows = np.random.default_rng(4).standard_normal((20_000, 40))
    rows[:, 37] = ar({1: 0.9}, 20_000, 5)
    assert row_memory(rows) == row_memory(rows[:, 37]) > 10
