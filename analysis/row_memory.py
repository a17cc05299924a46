"""How far the rows themselves remember: the part of a window figure's dependence that its own series cannot show.

Two windows whose origins lie d steps apart read rows at least d − (seq_len + pred_len) + 1 steps apart. If the
series forgets after L steps (its rows further apart are independent), their figures are independent once
d ≥ seq_len + pred_len + L; `analysis.intervals.overlap_span(seq_len, pred_len, stride, memory=L)` counts the
windows within that reach. The per-window figures alone cannot find L when the series remembers for days (a daily
season whose level persists from one day to the next): 256 windows of 15-minute data hold three weeks, the
figure's autocorrelation at a lag of days is estimated from a dozen independent stretches, and the test for memory
beyond the span (`intervals.memory_span`) misses it two times in three. Those that it misses are the windows whose
sample happened to look short-memoried, and their intervals covered 0.78–0.89, not 0.95 (benchmarks/coverage.py).
The rows are stride times as many values as the windows and show the same memory directly, so it is measured
there, once per split.

L is the last lag (up to a quarter of the rows) at which some column's autocorrelation is significantly non-zero
(Bartlett's band, a Bonferroni z over the lags and columns tested) **and** at least √MEMORY_FLOOR in size: a
figure that squares the rows (an MSE) has about ρ² of their correlation, and lags where ρ² < MEMORY_FLOOR add
little to its long-run variance. Bartlett's band widens with every earlier lag's ρ̂², so a season's spikes, with
little between them, stay visible far out, while a trend or a near unit root (ρ̂ near 1 at every lag) stops being
significant after some hundred lags: that kind of memory is a drift of the figure itself, and the figure's own
test of its lowest frequencies (`intervals.flat_dof`) takes the interval away there. A calendar's fixed profile
(the mean of each time of day, of each day of the week) is taken out first: a season that repeats exactly is not
memory, and a figure's mean over windows spread across its phases does not vary with it. A season whose level
wanders stays in, and where its memory reaches the quarter of the rows L does too and the figures get no interval:
the rows hold too few independent stretches to say.
"""
from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from informer_lab.analysis.intervals import MEMORY_ALPHA, autocorrelations, overlap_span

MEMORY_FLOOR = 0.05  # ρ² below this is not counted as memory (a squared figure keeps about ρ² of the correlation)
_COLUMNS_AT_ONCE = 16  # columns transformed together: 2^17 rows × 16 columns of complex FFT ≈ 34 MB
_PROFILE_MIN_CYCLES = 3  # a calendar profile is taken out only where every phase is seen this many times


def without_profiles(rows: np.ndarray, phases: list[np.ndarray]) -> np.ndarray:
    """[T, k] rows minus the mean of each phase of each calendar profile in turn (phases: [T] integer labels, e.g.
    the time of day); a profile whose phases are not each seen `_PROFILE_MIN_CYCLES` times is left in."""
    out = np.asarray(rows, dtype=np.float64).copy()
    for labels in phases:
        labels = np.asarray(labels)
        _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
        if len(counts) < 2 or counts.min() < _PROFILE_MIN_CYCLES:
            continue
        sums = np.zeros((len(counts), out.shape[1]))
        np.add.at(sums, inverse, out)
        out -= (sums / counts[:, None])[inverse]
    return out


def row_memory(rows: np.ndarray, phases: list[np.ndarray] | None = None, *, alpha: float = MEMORY_ALPHA,
               floor: float = MEMORY_FLOOR) -> int:
    """The rows' memory L in steps (module docstring): 0 when no lag 1 … T/4 of any column is both significant and
    of ρ² ≥ floor. rows: [T] or [T, k] in time order; phases: calendar labels whose profiles are taken out first."""
    rows = np.asarray(rows, dtype=np.float64)
    rows = rows.reshape(len(rows), -1)
    T, k = rows.shape
    top = T // 4
    if top < 1 or k == 0:
        return 0
    rows = without_profiles(rows, phases or [])
    from scipy.stats import norm

    z = norm.isf(alpha / (top * k))
    lags = np.arange(1, top + 1)
    memory = 0
    for start in range(0, k, _COLUMNS_AT_ONCE):
        rho = np.nan_to_num(autocorrelations(rows[:, start:start + _COLUMNS_AT_ONCE], top))  # [top + 1, c]
        squares = np.cumsum(rho[1:] ** 2, axis=0)  # Σ_{j ≤ m} ρ̂_j²
        band = np.sqrt((1 + 2 * np.vstack([np.zeros((1, rho.shape[1])), squares[:-1]])) / T)  # Bartlett, lag m
        kept = (np.abs(rho[1:]) > z * band) & (rho[1:] ** 2 >= floor)
        hits = np.flatnonzero(kept.any(axis=1))
        if len(hits):
            memory = max(memory, int(lags[hits[-1]]))
    return memory


def calendar_phases(timestamps: pd.DatetimeIndex) -> list[np.ndarray]:
    """The fixed profiles a calendar series may carry: the time of day (steps shorter than a day) and the day of the
    week (steps of at most a day). Empty for timestamps without a regular step under a week."""
    if len(timestamps) < 3:
        return []
    step = pd.Series(timestamps).diff().median()
    if pd.isna(step) or step <= pd.Timedelta(0):
        return []
    phases = []
    if step < pd.Timedelta(days=1):
        phases.append(((timestamps - timestamps.normalize()) // step).to_numpy())
    if step <= pd.Timedelta(days=1):
        phases.append(np.asarray(timestamps.day_of_week))
    return phases


_MEMORY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def split_memory(prepared, split: str = "test") -> int:
    """The memory of a prepared split's rows (every input column, scaled), computed once per prepared data."""
    known = _MEMORY.setdefault(prepared, {})
    if split not in known:
        part = prepared.split(split)
        known[split] = row_memory(part.values, calendar_phases(part.timestamps))
    return known[split]


def data_span(prepared, split: str = "test", stride: int = 1, pred_len: int | None = None) -> int:
    """The windows of `split`, `stride` steps apart, that one window's figure depends on: those that share its rows
    or read rows within the series' memory of them (`overlap_span` with `split_memory`)."""
    pred_len = prepared.spec.pred_len if pred_len is None else pred_len
    return overlap_span(prepared.spec.seq_len, pred_len, stride, memory=split_memory(prepared, split))


__all__ = ["MEMORY_FLOOR", "calendar_phases", "data_span", "row_memory", "split_memory", "without_profiles"]
