"""Which input columns have a unit root on the training split: the augmented Dickey–Fuller test.

For each column x of the training rows, the regression

    Δx_t = a + b·x_{t−1} + Σ_{j=1..p} c_j·Δx_{t−j} + e_t

by least squares; the column is taken to have a unit root (b = 0, a random walk) unless the t statistic of b lies
below the 5 % critical value −2.86 (MacKinnon 2010, a constant and no trend, asymptotic: the value at 1,000 rows is
−2.864). p = ⌊12·(n/100)^¼⌋ (Schwert 1989), at most MAX_AUGMENT, over the split's last MAX_ROWS rows.

Why it matters: on a finite training split a random walk's level drifts with the target's slow movements, and a
model may read that level as a predictor; on the test split the level leaves the range it was trained on. With
`ModelSize(unit_roots="withhold")` the lags embedding does not read such a column's level (model/lags.py,
`InformerConfig.level_free`); it still reads the column's values within each window, standardised. A stationary
column keeps its level. Not the default: since the lags models' decoder placeholders repeat each window's last value
(model/lags.py), withholding changes little (a planted random-walk input 1.02 → 1.01x the Bayes MSE; ETTh2's OT, which
follows its drifting loads, 1.00–1.11x the test MSE of keeping them; benchmarks/unit_roots.py, docs/measurements.md).

Plain numpy; statsmodels' `adfuller` computes the same regression, but the lab does not depend on statsmodels for
one regression.
"""
from __future__ import annotations

import numpy as np

CRITICAL_5 = -2.86  # MacKinnon (2010), table 1: constant, no trend, 5 %, asymptotic
MAX_AUGMENT = 24
MAX_ROWS = 20_000
MIN_ROWS = 50  # fewer rows than this: no column is tested (and none has its level withheld)
UNIT_ROOTS = ("keep", "withhold")  # ModelSize.unit_roots: read every level, or withhold such columns' levels


def augment_lags(rows: int) -> int:
    """Schwert's rule p = ⌊12·(n/100)^¼⌋, at most MAX_AUGMENT and at most a tenth of the rows."""
    return int(min(MAX_AUGMENT, np.floor(12 * (rows / 100) ** 0.25), rows // 10))


def dickey_fuller_t(x: np.ndarray, augment: int | None = None) -> float:
    """The t statistic of b in the augmented Dickey–Fuller regression of x (one column); nan where it is undefined
    (a constant column, non-finite values, too few rows)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < MIN_ROWS or not np.all(np.isfinite(x)) or np.ptp(x) == 0:
        return float("nan")
    p = augment_lags(x.size) if augment is None else int(augment)
    dx = np.diff(x)
    y = dx[p:]  # Δx_t for t = p + 1 … n − 1
    columns = [np.ones_like(y), x[p:-1]] + [dx[p - j:dx.size - j] for j in range(1, p + 1)]
    design = np.column_stack(columns)
    coef, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    dof = y.size - design.shape[1]
    if rank < design.shape[1] or dof < 1:
        return float("nan")
    residual = y - design @ coef
    sigma2 = residual @ residual / dof
    try:
        precision = np.linalg.inv(design.T @ design)
    except np.linalg.LinAlgError:
        return float("nan")
    se = np.sqrt(sigma2 * precision[1, 1])
    return float(coef[1] / se) if se > 0 else float("nan")


def has_unit_root(x: np.ndarray) -> bool:
    """True where the test does not reject a unit root at 5 % (over the last MAX_ROWS values); False for a column
    it cannot test (constant, non-finite, fewer than MIN_ROWS values)."""
    t = dickey_fuller_t(np.asarray(x)[-MAX_ROWS:])
    return bool(np.isfinite(t) and t > CRITICAL_5)


def unit_root_channels(values: np.ndarray, candidates: int) -> tuple[int, ...]:
    """Of the first `candidates` columns of values [N, C] (the input-only columns: the targets come last), those
    with a unit root."""
    return tuple(c for c in range(min(candidates, values.shape[1])) if has_unit_root(values[:, c]))


__all__ = ["CRITICAL_5", "MAX_ROWS", "UNIT_ROOTS", "augment_lags", "dickey_fuller_t", "has_unit_root",
           "unit_root_channels"]
