"""The augmented Dickey–Fuller test that picks the input columns the lags embedding reads as differences."""
import numpy as np
import pytest
from scipy import signal, stats

from informer_lab.analysis.learning.unit_root import (CRITICAL_5, MAX_ROWS, augment_lags, dickey_fuller_t,
                                                      has_unit_root, unit_root_channels)


def ar1(rng, n: int, rho: float) -> np.ndarray:
    """x_t = ρ·x_{t−1} + e_t from x_0 = e_0."""
    return signal.lfilter([1.0], [1.0, -rho], rng.standard_normal(n))


def test_without_augmentation_t_is_the_slopes_t_of_the_simple_regression():
    x = np.random.default_rng(0).standard_normal(800).cumsum()
    fit = stats.linregress(x[:-1], np.diff(x))  # Δx_t = a + b·x_{t−1}
    assert dickey_fuller_t(x, 0) == pytest.approx(fit.slope / fit.stderr, rel=1e-9)


def test_with_augmentation_t_is_the_frisch_waugh_lovell_t():
    """b's t statistic from the residuals of Δx_t and x_{t−1} on the constant and the lagged differences."""
    x = ar1(np.random.default_rng(1), 600, 0.95) + np.random.default_rng(2).standard_normal(600).cumsum() * 0.1
    p = 5
    dx = np.diff(x)
    y, level = dx[p:], x[p:-1]
    others = np.column_stack([np.ones_like(y)] + [dx[p - j:dx.size - j] for j in range(1, p + 1)])
    project = others @ np.linalg.pinv(others)
    ry, rx = y - project @ y, level - project @ level
    b = (rx @ ry) / (rx @ rx)
    dof = y.size - others.shape[1] - 1
    se = np.sqrt(((ry - b * rx) @ (ry - b * rx)) / dof / (rx @ rx))
    assert dickey_fuller_t(x, p) == pytest.approx(b / se, rel=1e-8)


def test_the_test_holds_its_size_on_random_walks_and_finds_stationary_columns():
    rng = np.random.default_rng(3)
    kept = [has_unit_root(rng.standard_normal(1000).cumsum()) for _ in range(300)]
    rejected = 1 - np.mean(kept)  # a 5 % test: 300 walks give 0.05 ± 0.013
    assert 0.015 <= rejected <= 0.095
    assert not any(has_unit_root(ar1(rng, 1000, 0.8)) for _ in range(20))
    seasonal = np.sin(np.arange(2000) * 2 * np.pi / 24) + 0.3 * rng.standard_normal(2000)
    assert not has_unit_root(seasonal)


def test_columns_it_cannot_test_keep_their_level():
    assert not has_unit_root(np.full(500, 3.0))
    assert not has_unit_root(np.random.default_rng(0).standard_normal(20).cumsum())  # under MIN_ROWS
    walk = np.random.default_rng(0).standard_normal(500).cumsum()
    walk[7] = np.nan
    assert np.isnan(dickey_fuller_t(walk)) and not has_unit_root(walk)


def test_a_long_column_is_tested_on_its_last_rows():
    """60,000 rows: a walk that turns stationary for its last MAX_ROWS rows is judged by those."""
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(60_000 - MAX_ROWS).cumsum(), ar1(rng, MAX_ROWS, 0.5)])
    assert not has_unit_root(x) and dickey_fuller_t(x[-MAX_ROWS:]) < CRITICAL_5 < dickey_fuller_t(x)
    assert has_unit_root(x[: 60_000 - MAX_ROWS])
    assert augment_lags(MAX_ROWS) == 24 and augment_lags(100) == 10 and augment_lags(1000) == 21


def test_only_the_input_only_columns_are_candidates():
    rng = np.random.default_rng(5)
    walk, driver, target_walk = rng.standard_normal(3000).cumsum(), ar1(rng, 3000, 0.8), rng.standard_normal(3000).cumsum()
    values = np.column_stack([driver, walk, target_walk])
    assert unit_root_channels(values, 2) == (1,)
    assert unit_root_channels(values, 0) == ()
