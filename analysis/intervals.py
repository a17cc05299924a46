"""Intervals for findings: a paired moving-block bootstrap over windows, and summaries over seeds.

Why blocks. Windows slide by one step, so window w and window w + 1 share all but one of their seq_len + pred_len
rows: their errors are strongly correlated. An i.i.d. bootstrap over windows treats them as independent draws and
gives intervals far too narrow (tests/analysis/test_intervals.py measures it: on an AR(1) series the i.i.d. 95 %
interval of a mean covers the truth in about a third of the replications, the block bootstrap in about 95 %).
The moving-block bootstrap (Künsch 1989) resamples runs of `block` consecutive windows; with blocks at least as
long as the span of rows a window reads (seq_len + pred_len, DESIGN §5), windows in different blocks share no
row, and the dependence that remains is within blocks, where it is kept.

Why paired. Two masks (or two models) scored on the same windows differ by far less than either varies across
windows. Every statistic that compares is computed on the same resampled windows for both sides (the resampled
indices are drawn once and applied to every column of `values`), so the interval is that of the difference itself.

Everything is seeded: the same values, block length, number of resamples and seed give the same interval.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

LEVEL = 0.95
RESAMPLES = 1000
MIN_BLOCKS = 2  # windows must hold at least this many blocks for an interval


@dataclass(frozen=True)
class Interval:
    """A point estimate and its percentile interval at `level`; `block` windows per resampled block."""

    estimate: float
    lo: float
    hi: float
    level: float
    block: int
    resamples: int


def block_length(seq_len: int, pred_len: int, windows: int) -> int:
    """The block of windows resampled together: seq_len + pred_len (the rows one window reads), at most the
    number of windows; 1 for a single window."""
    return int(max(1, min(windows, seq_len + pred_len)))


def block_indices(n: int, block: int, resamples: int, seed: int) -> np.ndarray:
    """[resamples, n] window indices: each row concatenates ⌈n / block⌉ runs of `block` consecutive windows with
    uniformly drawn starts in [0, n − block], cut to n (the moving-block bootstrap)."""
    if n < 1:
        raise ValueError("need at least one window")
    block = int(min(max(1, block), n))
    rng = np.random.default_rng(seed)
    blocks = -(-n // block)
    starts = rng.integers(0, n - block + 1, size=(resamples, blocks))  # [R, blocks]
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(resamples, -1)  # [R, blocks·block]
    return idx[:, :n]


def bootstrap(values: np.ndarray, *, block: int, statistic: Callable[[np.ndarray], np.ndarray] | None = None,
              resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> tuple[np.ndarray, np.ndarray,
                                                                                            np.ndarray]:
    """Percentile intervals of a statistic of per-window values, by the paired moving-block bootstrap.

    values: [n_windows, ...] (window order = time order); statistic: [n_windows, ...] → [...] (default: the mean
    over windows). Every column is resampled with the same window indices (paired). Returns (estimate, lo, hi),
    each shaped like the statistic.
    """
    values = np.asarray(values, dtype=np.float64)
    statistic = statistic or (lambda v: v.mean(axis=0))
    estimate = np.asarray(statistic(values), dtype=np.float64)
    if len(values) < MIN_BLOCKS * max(1, block):
        return estimate, np.full_like(estimate, np.nan), np.full_like(estimate, np.nan)
    idx = block_indices(len(values), block, resamples, seed)
    stats = np.stack([np.asarray(statistic(values[row]), dtype=np.float64) for row in idx])  # [R, ...]
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha], axis=0)
    return estimate, lo, hi


def mean_interval(values, *, block: int, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> Interval:
    """The mean of per-window values [n_windows] with its block-bootstrap interval."""
    estimate, lo, hi = bootstrap(np.asarray(values, dtype=np.float64), block=block, resamples=resamples, level=level,
                                 seed=seed)
    return Interval(float(estimate), float(lo), float(hi), level, int(min(block, len(values))), resamples)


def mean_intervals(values: np.ndarray, *, block: int, resamples: int = RESAMPLES, level: float = LEVEL,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means of [n_windows, k] per-window values and their paired block-bootstrap intervals (each [k]).
    Done by matrix products (the resampled means are counts @ values / n), so 1,000 resamples of thousands of
    windows × hundreds of columns take milliseconds.

    With fewer than two blocks of windows there is no second independent stretch to resample: the intervals are
    NaN (unknown), never the zero width a single block would give."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n < MIN_BLOCKS * min(max(1, block), n) or n < 2:
        nan = np.full(values.shape[1:], np.nan)
        return values.mean(axis=0), nan, nan.copy()
    idx = block_indices(n, block, resamples, seed)  # [R, n]
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.repeat(np.arange(resamples), n), idx.ravel()), 1.0)
    means = counts @ values.reshape(n, -1) / n  # [R, k]
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha], axis=0)
    shape = values.shape[1:]
    return values.mean(axis=0), lo.reshape(shape), hi.reshape(shape)


def add_interval_columns(table: pd.DataFrame, metric: str, lo: np.ndarray, hi: np.ndarray) -> pd.DataFrame:
    """A copy with `<metric>_lo` and `<metric>_hi` right after `metric`."""
    out = table.copy()
    at = out.columns.get_loc(metric) + 1
    out.insert(at, f"{metric}_hi", np.asarray(hi, dtype=np.float64))
    out.insert(at, f"{metric}_lo", np.asarray(lo, dtype=np.float64))
    return out


# ---------------------------------------------------------------------------------------------
# Over seeds
# ---------------------------------------------------------------------------------------------
MIN_SEEDS = 3  # fewer seeds give no interval: with 2, the t quantile is 12.7 and the interval says nothing


def across_seeds(table: pd.DataFrame, keys: list[str], metric: str, *, seed_column: str = "seed",
                 level: float = LEVEL, floor: float | None = None, min_seeds: int = MIN_SEEDS) -> pd.DataFrame:
    """Per `keys` group, a metric over seeds: seeds, mean, std (ddof 1), a t interval of the mean over seeds
    (`<metric>_seeds_lo/_hi`), and in how many seeds it is positive and negative (does its sign hold?).

    With fewer than `min_seeds` seeds there is no interval (NaN bounds, and `interval` says why): two seeds give a t
    interval 12.7 standard errors wide, which for a test MSE ran to -2.4. `floor` is the metric's lower limit (0 for
    an MSE): the interval is cut there, so it never claims values the metric cannot take."""
    from scipy import stats

    rows = []
    for key, part in table.groupby(keys, sort=False):
        values = part[metric].to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        n = len(values)
        mean = float(values.mean()) if n else float("nan")
        std = float(values.std(ddof=1)) if n > 1 else float("nan")
        if n >= max(2, min_seeds):
            half = float(stats.t.ppf(0.5 + level / 2, n - 1) * std / np.sqrt(n))
            lo, hi, note = mean - half, mean + half, ""
            if floor is not None and lo < floor:
                lo, note = floor, f"cut at {floor:g}, the metric's floor"
        else:
            lo = hi = float("nan")
            note = f"{n} seed{'s' if n != 1 else ''}: too few for an interval (needs {max(2, min_seeds)})"
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        row.update({"seeds": part[seed_column].nunique(), f"{metric}_mean": mean, f"{metric}_std": std,
                    f"{metric}_seeds_lo": lo, f"{metric}_seeds_hi": hi, "interval": note,
                    "positive_in": int((values > 0).sum()), "negative_in": int((values < 0).sum())})
        rows.append(row)
    return pd.DataFrame(rows)


def interval_sign(lo: float, hi: float, scale: float = 1.0, tol: float = 1e-9) -> int | None:
    """What an interval of a difference lets one say: +1 (all of it above 0), −1 (all below), 0 (it holds 0), None
    (no interval). Bounds within tol × scale of 0 count as 0: two runs of the same weights differ by float
    rounding (~1e-16), which is no finding."""
    if lo is None or hi is None or np.isnan(lo) or np.isnan(hi):
        return None
    eps = tol * max(abs(scale), 1e-300)
    return 1 if lo > eps else -1 if hi < -eps else 0


__all__ = ["Interval", "LEVEL", "MIN_SEEDS", "RESAMPLES", "across_seeds", "add_interval_columns", "block_indices",
           "block_length", "bootstrap", "interval_sign", "mean_interval", "mean_intervals"]
