"""Intervals for findings over windows, and summaries over seeds.

The problem. Windows slide by one step, so window w and window w + 1 share all but one of the seq_len + pred_len
rows they read: a per-window figure (an MSE, a head's ΔMSE, a top-u overlap) is a strongly dependent series. Its
mean has the variance of the series' spectral density at frequency 0 (the long-run variance), divided by n, and
1,024 windows of span 216 hold fewer than five independent stretches. A moving-block bootstrap over so few blocks
cannot see the variance between them: on a planted null its 95 % intervals excluded 0 for 17 % of heads
(`benchmarks/coverage.py` measures it).

The method: a t interval whose variance comes from the lowest frequencies of the window series, the equal-weighted
cosine (EWC) estimator of the long-run variance (Müller 2007; Lazarus, Lewis, Stock & Watson 2018, "HAR inference:
recommendations for practice"). With Λ_j = √(2/n) Σ_t x_t cos(π j (t − ½) / n), the DCT-II of the window series,

    Ω̂ = (1/ν) Σ_{j=1..ν} Λ_j²,     se = √(Ω̂ / n),     (x̄ − μ) / se  ~  t_ν,

exactly when the spectral density is flat over the ν lowest frequencies (a Gaussian series), and close to it
otherwise. ν is the honest number of degrees of freedom: the largest ν at which a series whose windows share rows
over `span` neighbours (a triangular autocorrelation, the Fejér spectrum of width span) loses at most
`BIAS` (3 %) of its variance to the slope of its spectrum (`cosine_dof`). It comes to about 0.33·n/span; with
independent values (span 1) ν = n − 1 and the interval is the textbook t interval. With fewer than `MIN_DOF`
degrees of freedom (about 11 spans of windows) the lab shows **no interval** and says why (`WindowMeans.reasons`).

Memory beyond the span. Windows further apart than the span share no row, but a process with long memory (a strong
daily or weekly season, a near unit root) still correlates their figures: the callers measure that memory on the
rows (`analysis.row_memory`) and pass it in the span. Before ν is chosen, the autocorrelation of
each column beyond the span is tested lag by lag against Bartlett's band (a Bonferroni z over the lags tested); the
span becomes the last lag with a significant positive autocorrelation when that is longer (`memory_span`). Then the
ν frequencies themselves are checked: a figure that drifts across the split puts most of its variance in the lowest
of them, where the estimator would miss how much more lies at frequency 0; while an F test of the lowest against the
rest rejects, ν is halved (`flat_dof`). Both tests can only widen an interval or take it away.

Paired. Comparisons are computed per window first (mask − baseline, model − seasonal naive), so the interval is that
of the paired difference itself: a common component of the windows (their difficulty) cancels.

Deterministic: no resampling, so the same values give the same interval on any machine.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

LEVEL = 0.95
BIAS = 0.03  # the share of the long-run variance the slope of a span-wide spectrum may cost over the ν frequencies
MIN_DOF = 3  # fewer degrees of freedom: no interval (t_3: 3.18 standard errors; coverage measured down to 2)
MEMORY_ALPHA = 0.05  # family-wise level of the tests for memory beyond the span
_F_ISF = functools.lru_cache(maxsize=65536)(lambda q, a, b: float(__import__("scipy.stats").stats.f.isf(q, a, b)))
METHOD = ("95 % t intervals over windows: the long-run variance from the windows' lowest frequencies, windows that "
          "share rows counted as dependent; none where too few windows give an honest one")


def overlap_span(seq_len: int, pred_len: int, stride: int = 1, memory: int = 0) -> int:
    """How many of the scored windows share a row with one of them (itself included): ⌈(seq_len + pred_len) /
    stride⌉ for windows `stride` steps apart; 1 once they are a whole span apart. memory: the rows' own memory in
    steps (`analysis.row_memory`): windows that read rows within it of one another's count too."""
    return max(1, math.ceil((seq_len + pred_len + max(0, int(memory))) / max(1, stride)))


def _fejer(frequencies: np.ndarray, span: int) -> np.ndarray:
    """The Fejér kernel of width `span` over its value at 0: the spectrum of a triangular autocorrelation."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(frequencies == 0, 1.0, (np.sin(span * frequencies / 2) / (span * np.sin(frequencies / 2))) ** 2)


@functools.lru_cache(maxsize=4096)
def cosine_dof(n: int, span: int, bias: float = BIAS) -> int:
    """The largest ν ≤ n − 1 whose ν lowest cosine frequencies (π j / n) see on average at least (1 − bias) of a
    span-wide Fejér spectrum's value at 0. span ≤ 1 (independent values): n − 1."""
    if n < 2 or span <= 1:
        return max(0, n - 1)
    j = np.arange(1, n)
    mean_ratio = np.cumsum(_fejer(np.pi * j / n, span)) / j
    ok = np.flatnonzero(mean_ratio >= 1 - bias)
    return int(ok[-1] + 1) if len(ok) else 0


def windows_needed(span: int, dof: int = MIN_DOF, bias: float = BIAS) -> int:
    """The fewest windows that give `dof` degrees of freedom at this span (for the messages)."""
    if span <= 1:
        return dof + 1
    n = max(dof + 1, int(dof * span / 0.33) - span)
    while cosine_dof(n, span, bias) < dof:
        n += max(1, span // 8)
    return n


def autocorrelations(values: np.ndarray, max_lag: int) -> np.ndarray:
    """[max_lag + 1, k] sample autocorrelations of each column (NaN for a constant column)."""
    from scipy import fft
    n = len(values)
    size = fft.next_fast_len(n + max_lag + 1, real=True)  # no wrap-around up to max_lag
    spectrum = fft.rfft(values - values.mean(axis=0), size, axis=0)
    acov = fft.irfft(spectrum * np.conj(spectrum), size, axis=0)[:max_lag + 1] / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return acov / acov[0]


def memory_span(values: np.ndarray, span: int, *, alpha: float = MEMORY_ALPHA) -> np.ndarray:
    """[k] the dependence span of each column: `span`, or one more than the last lag ≥ span (up to n / 4) whose
    autocorrelation is significantly positive against Bartlett's band √((1 + 2 Σ_{j<k} ρ̂_j²) / n), at a
    Bonferroni z over the lags tested. A constant column keeps `span`."""
    values = np.asarray(values, dtype=np.float64)
    n, k = values.shape
    top = n // 4
    out = np.full(k, int(span))
    if top <= span or n < 16:
        return out
    rho = autocorrelations(values, top)  # [top + 1, k]
    from scipy.stats import norm

    squares = np.concatenate([np.zeros((1, k)), np.cumsum(np.nan_to_num(rho[1:]) ** 2, axis=0)])  # Σ_{j≤m} ρ̂_j²
    lags = np.arange(max(1, span), top + 1)
    z = norm.isf(alpha / len(lags))
    band = np.sqrt((1 + 2 * squares[lags - 1]) / n)  # [lags, k]: Bartlett's band at lag k under ρ_j = 0 for j ≥ k
    significant = np.isfinite(rho[lags]) & (rho[lags] > z * band)
    for c in range(k):
        hits = np.flatnonzero(significant[:, c])
        if len(hits):
            out[c] = int(lags[hits[-1]]) + 1
    return out


def flat_dof(squares: np.ndarray, dof: int, *, alpha: float = MEMORY_ALPHA) -> int:
    """The degrees of freedom the spectrum allows: `dof`, halved while the lowest cosine frequencies carry more
    power than the rest of the ν (Λ² [n − 1] of one column). Under a flat spectrum mean(Λ²_1…a) / mean(Λ²_a+1…ν)
    is F(a, ν − a); a = 1, 2, 4, … < ν/2, each at a Bonferroni share of `alpha`. A spectrum that rises towards
    frequency 0 within the band is memory longer than the span: the estimator would miss its variance."""
    while dof >= MIN_DOF:
        splits = [a for a in (1, 2, 4, 8, 16, 32) if a <= dof // 2]
        rest = [squares[a:dof].mean() for a in splits]
        ratios = [squares[:a].mean() / r if r > 0 else (np.inf if squares[:a].mean() > 0 else 1.0)
                  for a, r in zip(splits, rest)]
        if not any(ratio > _F_ISF(alpha / len(splits), a, dof - a) for a, ratio in zip(splits, ratios)):
            return dof
        dof //= 2
    return dof


@dataclass(frozen=True)
class WindowMeans:
    """Column means of per-window values with t intervals at `level` (see the module docstring), all [k].

    dof: the degrees of freedom (fewer than MIN_DOF: no interval, lo/hi NaN); span: the windows one window depends
    on (the span given, or the memory found beyond it); overlap: the span given, one or one per column; windows: n."""

    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    se: np.ndarray
    dof: np.ndarray
    span: np.ndarray
    windows: int
    level: float = LEVEL
    overlap: int | np.ndarray = 1
    cut: np.ndarray | None = None  # where the interval was cut at the figure's limits (floor, ceiling: them)
    floor: np.ndarray | None = None
    ceiling: np.ndarray | None = None

    def notes(self) -> list[str]:
        """Per column: '' or where the interval was cut ('cut at 0, the figure's limit': an MSE is never negative)."""
        if self.cut is None:
            return [""] * np.size(self.estimate)
        parts = zip(*(np.ravel(a) for a in (self.cut, self.floor, self.ceiling, self.lo, self.hi)))
        return [f"cut at {' and '.join(f'{b:g}' for b, hit in ((f, lo == f), (c, hi == c)) if hit)}, the figure's "
                "limit" if cut else "" for cut, f, c, lo, hi in parts]

    def p_values(self, null: float | np.ndarray = 0.0, alternative: str = "two-sided") -> np.ndarray:
        """p-values of H0: mean = null (two-sided), ≤ null ("greater": the mean is above it) or ≥ null ("less").
        NaN where there is no interval. A column with se 0 gets p 0 when its estimate lies on the alternative's
        side of the null and 1 otherwise."""
        return t_p_values(self.estimate, self.se, self.dof, null, alternative)

    def reasons(self) -> list[str]:
        """Per column: '' where there is an interval, else why there is none."""
        overlaps = np.broadcast_to(np.asarray(self.overlap), np.shape(self.dof)).ravel()
        return [no_interval_reason(self.windows, int(s), int(o)) if d < MIN_DOF else ""
                for d, s, o in zip(np.ravel(self.dof), np.ravel(self.span), overlaps)]


def no_interval_reason(windows: int, span: int, overlap: int | None = None) -> str:
    """Why `windows` windows of dependence span `span` give no honest interval, in a sentence. overlap: the windows
    that share rows (span is longer when memory beyond them was found)."""
    overlap = span if overlap is None else overlap
    if windows < 2:
        return "one window: no interval"
    if cosine_dof(windows, overlap) < MIN_DOF:
        return (f"no interval: {windows:,} windows hold {windows / max(1, overlap):.1f} independent stretches of "
                f"{overlap:,} windows (those that share rows with one window, or read rows the series still "
                f"remembers); an honest 95 % interval needs about {windows_needed(overlap):,} windows")
    if span > overlap and cosine_dof(windows, span) < MIN_DOF:
        return (f"no interval: the figure stays correlated over {span:,} windows, beyond the {overlap:,} that share "
                f"rows (memory of the series), so {windows:,} windows hold too few independent stretches; an honest "
                f"95 % interval needs about {windows_needed(span):,} windows")
    return ("no interval: the figure drifts over the windows scored (its slowest variation carries most of its "
            "variance), so its mean over this split has no honest interval")


def t_p_values(estimate, se, dof, null=0.0, alternative: str = "two-sided") -> np.ndarray:
    """p-values of t statistics (estimate − null) / se with `dof` degrees of freedom (NaN where dof < MIN_DOF)."""
    from scipy import stats

    estimate, se, dof = (np.asarray(a, dtype=np.float64) for a in (estimate, se, dof))
    diff = estimate - np.asarray(null, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.sign(diff) * np.inf)
        t = np.where((se == 0) & (diff == 0), 0.0, t)
        safe = np.maximum(dof, 1)
        if alternative == "two-sided":
            p = 2 * stats.t.sf(np.abs(t), safe)
            p = np.where((se == 0) & (diff == 0), 1.0, p)
        elif alternative == "greater":
            p = stats.t.sf(t, safe)
            p = np.where((se == 0) & (diff <= 0), 1.0, p)
        elif alternative == "less":
            p = stats.t.cdf(t, safe)
            p = np.where((se == 0) & (diff >= 0), 1.0, p)
        else:
            raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    return np.where(dof >= MIN_DOF, np.minimum(p, 1.0), np.nan)


def window_means(values, *, span, level: float = LEVEL, memory: bool = True, floor=None,
                 ceiling=None) -> WindowMeans:
    """Means of the columns of per-window values [n] or [n, k] (window order = time order), each with its t
    interval from the cosine estimator of the long-run variance (module docstring). span: how many windows one
    window's figure depends on (`overlap_span`, with the rows' memory: `analysis.row_memory.data_span`), one for
    all columns or one per column; memory: also test for dependence beyond it (`memory_span`). floor,
    ceiling: the figure's limits (0 for an MSE, 1 for a share; a number or one per column, NaN for none): an
    interval is cut there, never claiming values the figure cannot take, and `WindowMeans.cut` says where."""
    from scipy import stats
    from scipy.fft import dct

    values = np.asarray(values, dtype=np.float64)
    shape = values.shape[1:]
    flat = values.reshape(len(values), -1)
    n, k = flat.shape
    estimate = flat.mean(axis=0) if n else np.full(k, np.nan)
    given = np.broadcast_to(np.maximum(1, np.asarray(span, dtype=np.int64)), (k,))  # one span, or one per column
    spans = given.copy()
    for s in np.unique(given) if memory and n else ():
        spans[given == s] = memory_span(flat[:, given == s], int(s))
    dof = np.array([cosine_dof(int(n), int(s)) for s in spans], dtype=np.int64)
    se = np.full(k, np.nan)
    if n >= 2:
        squares = dct(flat, type=2, norm="ortho", axis=0)[1:] ** 2  # [n − 1, k]: Λ_1² … Λ_{n−1}²
        for c in range(k):
            if dof[c] >= 1:
                dof[c] = flat_dof(squares[:, c], int(dof[c]))
                se[c] = math.sqrt(squares[:dof[c], c].mean() / n) if dof[c] else math.nan
    shown = dof >= MIN_DOF
    quantile = stats.t.ppf(0.5 + level / 2, np.maximum(dof, 1))
    half = np.where(shown, quantile * se, np.nan)
    lo, hi = estimate - half, estimate + half
    low, high = (np.broadcast_to(np.asarray(np.nan if b is None else b, np.float64).ravel(), (k,))
                 for b in (floor, ceiling))
    cut = (lo < low) | (hi > high)
    lo, hi = np.where(lo < low, low, lo), np.where(hi > high, high, hi)
    return WindowMeans(estimate.reshape(shape), lo.reshape(shape), hi.reshape(shape),
                       np.where(shown, se, np.nan).reshape(shape), dof.reshape(shape), spans.reshape(shape), n,
                       level, int(given[0]) if (given == given[0]).all() else given.reshape(shape),
                       cut.reshape(shape), low.reshape(shape), high.reshape(shape))


def mean_intervals(values: np.ndarray, *, span: int, level: float = LEVEL, **limits) -> tuple[np.ndarray, ...]:
    m = window_means(values, span=span, level=level, **limits)  # (estimate, lo, hi), each shaped like a row
    return m.estimate, m.lo, m.hi


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval at `level`; dof 0: no interval (lo, hi NaN), `reason` says why."""

    estimate: float
    lo: float
    hi: float
    level: float
    dof: int
    reason: str = ""


def mean_interval(values, *, span: int, level: float = LEVEL) -> Interval:
    m = window_means(np.asarray(values, dtype=np.float64)[:, None], span=span, level=level)  # `window_means`, one
    return Interval(float(m.estimate[0]), float(m.lo[0]), float(m.hi[0]), level, int(m.dof[0]), m.reasons()[0])


def ratio_interval(numerator, denominator, *, span: int, level: float = LEVEL) -> Interval:
    """mean(numerator) / mean(denominator) over windows, with the delta-method interval: the per-window influence
    (a_t − r·b_t) / b̄ has mean 0 and the ratio's long-run variance, estimated as in `window_means`."""
    a, b = (np.asarray(v, dtype=np.float64) for v in (numerator, denominator))
    ratio = float(a.mean() / b.mean()) if b.mean() != 0 else float("nan")
    if not np.isfinite(ratio):
        return Interval(ratio, math.nan, math.nan, level, 0, "the denominator's mean is 0")
    influence = (a - ratio * b) / b.mean()
    m = window_means(influence[:, None], span=span, level=level)
    half = float(m.hi[0] - m.estimate[0])
    return Interval(ratio, ratio - half, ratio + half, level, int(m.dof[0]), m.reasons()[0])


def median_interval(values, *, level: float = LEVEL) -> Interval:
    """The median of independent values with the distribution-free order-statistic interval (x_(r), x_(n+1−r)):
    the largest r whose binomial coverage 1 − 2·P(Bin(n, ½) < r) is at least `level`. Too few values (n < 6 at
    95 %): no interval."""
    from scipy.stats import binom

    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    estimate = float(np.median(x)) if n else math.nan
    best = 0
    for r in range(1, n // 2 + 1):
        if 1 - 2 * binom.cdf(r - 1, n, 0.5) >= level:
            best = r
    if not best:
        return Interval(estimate, math.nan, math.nan, level, 0, f"{n} values: too few for a {level:.0%} interval "
                                                                  "of a median")
    return Interval(estimate, float(x[best - 1]), float(x[n - best]), level, n - 1)


def add_interval_columns(table: pd.DataFrame, metric: str, lo: np.ndarray, hi: np.ndarray) -> pd.DataFrame:
    out, at = table.copy(), table.columns.get_loc(metric) + 1  # `<metric>_lo` and `<metric>_hi` right after `metric`
    for name, bound in ((f"{metric}_hi", hi), (f"{metric}_lo", lo)):
        out.insert(at, name, np.asarray(bound, dtype=np.float64))
    return out


# ------------------------------------------------------------------------------------------- Over seeds
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


def pairwise_mean_interval(pair_values: np.ndarray, *, level: float = LEVEL) -> Interval:
    """The mean of a statistic over every pair of seeds (an order-2 U-statistic: pair_values [S, S], symmetric,
    diagonal ignored) with a t interval over seeds from the jackknife: the seeds are the independent units, not the
    pairs (every seed sits in S − 1 of them). Fewer than MIN_SEEDS seeds: no interval."""
    from scipy import stats

    matrix = np.asarray(pair_values, dtype=np.float64)
    S = matrix.shape[0]
    i, j = np.triu_indices(S, k=1)
    estimate = float(np.nanmean(matrix[i, j])) if len(i) else math.nan
    if S < MIN_SEEDS or not np.isfinite(estimate):
        return Interval(estimate, math.nan, math.nan, level, 0,
                        f"{S} seed{'s' if S != 1 else ''}: too few for an interval (needs {MIN_SEEDS})")
    leave_out = np.empty(S)
    for s in range(S):
        keep = (i != s) & (j != s)
        leave_out[s] = np.nanmean(matrix[i[keep], j[keep]])
    se = math.sqrt((S - 1) / S * np.sum((leave_out - leave_out.mean()) ** 2))
    half = float(stats.t.ppf(0.5 + level / 2, S - 1) * se)
    return Interval(estimate, estimate - half, estimate + half, level, S - 1)


def interval_sign(lo: float, hi: float, scale: float = 1.0, tol: float = 1e-9) -> int | None:
    """What an interval of a difference lets one say: +1 (all of it above 0), −1 (all below), 0 (it holds 0), None
    (no interval). Bounds within tol × scale of 0 count as 0: two runs of the same weights differ by float
    rounding (~1e-16), which is no finding."""
    if lo is None or hi is None or np.isnan(lo) or np.isnan(hi):
        return None
    eps = tol * max(abs(scale), 1e-300)
    return 1 if lo > eps else -1 if hi < -eps else 0


__all__ = ["BIAS", "Interval", "LEVEL", "METHOD", "MIN_DOF", "MIN_SEEDS", "WindowMeans", "across_seeds",
           "add_interval_columns", "cosine_dof", "interval_sign", "mean_interval", "mean_intervals", "median_interval",
           "memory_span", "no_interval_reason", "overlap_span", "pairwise_mean_interval", "ratio_interval",
           "t_p_values", "window_means", "windows_needed"]
