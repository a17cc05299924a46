"""Do the lab's 95 % intervals cover 95 %? Planted nulls and planted effects with the dependence of real windows.

Every replication draws a row process (AR(1), a daily seasonal AR of hourly data, a daily seasonal AR of
15-minute data, white noise), slides `windows` overlapping windows of seq_len + pred_len rows over it (stride 1, or
every 8th window as the verdict scores them) and computes the per-window figures the lab reports, whose true means
are known:

    head_null   a head that adds ±g to the forecast, g a random linear filter of the window's inputs, under the
                Bayes forecast of the process: ΔMSE_w = −4·g_w·ē_w (ē the mean error over the horizon), mean 0
                exactly. Sixteen such heads per model share the errors, as the heads of one model share windows.
    head_effect a head the model needs (the effects people look for): without it the forecast's error is e + g, so
                ΔMSE_w = g_w² + 2·g_w·ē_w, positive and skewed (a χ²-like square of the inputs), mean E[g²] = f'Γf
                exactly from the process's autocovariance Γ. Sixteen per model, as above.
    paired      the model (error e + β·x_T) against a baseline (error e + β₂·x_{T−12}): mean (β² − β₂²)·Var(x).
    mse         the model's MSE: mean Σ_h Var(e_h)/P + β²·Var(x).
    ratio       the model's MSE over the Bayes MSE (the self-test's `learned` row), by the delta method.
    topu        the overlap of a window's top-u positions by |x| with those by |x + noise|: a bounded, skewed
                figure (truth: the mean over about 4 million windows of independent series).
    seeds_rho   the mean Spearman ρ between the head importances of every pair of seeds (16 heads, 3 to 20 seeds;
                importance = a head's own level + seed noise), truth by simulation of many seeds.

Methods: `lab` (analysis.intervals: the cosine long-run variance with a t quantile, no interval below MIN_DOF,
the dependence span the windows' overlap plus the memory of the replication's own rows as analysis.row_memory
measures it, time-of-day and day-of-week profiles taken out; the jackknife over seeds for seeds_rho), and with --before `mbb` (the moving-block bootstrap over windows with blocks
of seq_len + pred_len windows, and the bootstrap over heads for seeds_rho: what the lab used before), for comparison.
Coverage is counted over the replications that show an interval; `shown` says how many did; `± binomial` is 1.96
binomial standard errors over the independent replications (the heads of one model count once).

Under the planted null, every head's p-value (from the same t statistic as its interval) goes through
Benjamini–Hochberg at q = 0.05 across the model's 16 heads: `false_heads_per_model_null` is the mean number of
heads declared (all false), raw and adjusted.

    python benchmarks/coverage.py                 # every setting, 400 replications each, one process per core
    python benchmarks/coverage.py --reps 200 --quick
    python benchmarks/coverage.py --before        # also the moving-block bootstrap (slower)
    python benchmarks/coverage.py --jobs 1        # in this process alone

Every setting draws from a random stream of its own (the seed and the setting's place in the list), so the figures
are the same whatever --jobs is; the settings run in --jobs processes (default: the machine's cores), the top-u truths
first, each once.

A cell under the goal (0.93) is then measured again (`--confirm`, 1,600 replications) on its setting's second random
stream: among a few hundred cells of true coverage 0.95, some fall under 0.93 at 400 replications by chance, and the
least of them is biased low; the confirmation was not selected for being low, so its rate is the cell's.

Last lines: `min_coverage_95: X` (the lab's methods at the first stage, every cell with intervals in at least
MIN_SHOWN independent replications, whatever share of them that is), `cells_below_0.93_beyond_their_error: N` (cells
whose coverage plus its binomial error is under 0.93), `cells_below_0.93_after_confirmation: N` (cells whose
confirmation is under 0.93, or showed too few intervals to measure) and `false_heads_per_model_null: X`.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import numpy as np
from scipy.signal import fftconvolve, lfilter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from informer_lab.analysis.discoveries import benjamini_hochberg  # noqa: E402
from informer_lab.analysis.intervals import MIN_DOF, overlap_span, ratio_interval, window_means  # noqa: E402
from informer_lab.analysis.row_memory import row_memory  # noqa: E402
from benchmarks.coverage_cells import (GOAL, HEADS, Tally, cell_rate, counts, print_cells,  # noqa: E402
                                     print_confirmation, setting_of, under_goal)
from benchmarks.coverage_seeds import seeds_setting  # noqa: E402

PROCESSES = {"white": {}, "ar1": {1: 0.9}, "daily_h": {24: 0.8}, "daily_15min": {96: 0.8}}
# A stress case outside the goal: a daily season so persistent (0.9 from one day to the next) that a figure's
# variance from the window's level (x²) stays correlated for weeks. Reported on its own line.
STRESS = {"daily_15min_strong": {96: 0.9}}
PROCESSES.update(STRESS)
SHAPES = [(96, 24), (192, 24), (336, 96), (1440, 96)]
WINDOWS = [32, 256, 1024, 4096]
PERIODS = {"daily_15min": 96, "daily_15min_strong": 96}  # steps per day (hourly otherwise)
BETA, BETA2 = 0.5, 0.3
Q = 0.05


def ar_polynomial(kind: str) -> np.ndarray:
    coefs = PROCESSES[kind]
    a = np.zeros(1 + max(coefs, default=0))
    a[0] = 1.0
    for lag, c in coefs.items():
        a[lag] = -c
    return a


def draw(kind: str, reps: int, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """[reps, length] stationary rows of the process and their innovations (a burn-in of 20 seasons dropped)."""
    a = ar_polynomial(kind)
    burn = 20 * len(a) + 200
    eps = rng.standard_normal((reps, length + burn))
    return lfilter([1.0], a, eps, axis=1)[:, burn:], eps[:, burn:]


def stationary_variance(kind: str) -> float:
    coefs = PROCESSES[kind]
    return 1.0 / (1.0 - sum(c * c for c in coefs.values())) if coefs else 1.0


def horizon_errors(kind: str, eps: np.ndarray, origins: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The Bayes forecast's errors from each origin (the last input row) over steps 1…P: their mean ē and mean
    square per window [reps, n], and the mean of Var(e_h) over h (the Bayes MSE)."""
    coefs = PROCESSES[kind]
    columns: list[np.ndarray] = []
    total = np.zeros((eps.shape[0], len(origins)))
    square = np.zeros_like(total)
    psi = lfilter([1.0], ar_polynomial(kind), np.r_[1.0, np.zeros(P - 1)])
    for h in range(P):
        e = eps[:, origins + h + 1].copy()
        for lag, c in coefs.items():
            if h - lag >= 0:
                e += c * columns[h - lag]
        columns.append(e)
        total += e
        square += e * e
    return total / P, square / P, float(np.mean(np.cumsum(psi ** 2)))


def topu_count(S: int) -> int:
    """u of the top-u figure: the paper's 5·⌈ln S⌉ active queries (its coverage, not the lab's default factor, is
    what is measured)."""
    return min(S, 5 * math.ceil(math.log(S)))


def measures_topu(S: int, n: int) -> bool:
    """Whether a setting of n windows of S steps measures the top-u figure (its cost grows with S·n)."""
    return S * n <= 4096 * 336


@functools.lru_cache(maxsize=None)
def topu_truth(S: int, noise: float, u: int, seed: int, kind: str) -> float:
    """E[overlap] by simulation: 100 independent series of 40,000 rows, every (S // 8)-th window of each (windows
    closer than that share almost all their rows and add little). Its Monte-Carlo error, the spread of the 100
    series' means over √100, goes to stderr: under a tenth of the spread of one replication's mean over 4,096
    windows."""
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(100):
        x, _ = draw(kind, 1, 40_000 + S - 1, rng)
        windows = np.lib.stride_tricks.sliding_window_view(x[0], S)[::max(1, S // 8)]
        means.append(float(overlap(windows, noise, u, rng).mean()))
    print(f"# top-u truth, {kind} seq_len {S}: {np.mean(means):.4f} ± {np.std(means, ddof=1) / 10:.4f} (Monte Carlo)",
          file=sys.stderr, flush=True)
    return float(np.mean(means))


def overlap(windows: np.ndarray, noise: float, u: int, rng: np.random.Generator) -> np.ndarray:
    """|top-u of |x| ∩ top-u of |x + η|| / u per window ([n, S] → [n]); η's scale is `noise` × the window's own
    standard deviation, as a key sample's error scales with the scores it estimates."""
    exact = np.argpartition(-np.abs(windows), u, axis=1)[:, :u]
    scale = noise * windows.std(axis=1, keepdims=True)
    sampled = np.argpartition(-np.abs(windows + scale * rng.standard_normal(windows.shape)), u, axis=1)[:, :u]
    hit = np.zeros(windows.shape, dtype=bool)
    np.put_along_axis(hit, exact, True, axis=1)
    return np.take_along_axis(hit, sampled, axis=1).mean(axis=1)


def mbb(values: np.ndarray, block: int, rng: np.random.Generator, resamples: int = 400) -> tuple[np.ndarray, ...]:
    """The moving-block bootstrap's percentile interval of column means (the lab's method before)."""
    n = len(values)
    block = min(max(1, block), n)
    if n < 2 * block:
        nan = np.full(values.shape[1:], np.nan)
        return nan, nan
    blocks = -(-n // block)
    starts = rng.integers(0, n - block + 1, size=(resamples, blocks))
    idx = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :n]
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.repeat(np.arange(resamples), n), idx.ravel()), 1.0)
    means = counts @ values.reshape(n, -1) / n
    lo, hi = np.quantile(means, [0.025, 0.975], axis=0)
    return lo.reshape(values.shape[1:]), hi.reshape(values.shape[1:])


def autocovariance(kind: str, lags: int) -> np.ndarray:
    """γ(0…lags − 1) of the process (unit innovations), from its MA(∞) weights ψ: γ(h) = Σ_i ψ_i ψ_{i+h}, the
    weights taken until they are below 1e-9 of the first."""
    a = ar_polynomial(kind)
    coefs = PROCESSES[kind]
    length = lags + (max(coefs) * int(math.log(1e-9) / math.log(max(coefs.values()))) if coefs else 1) + 1
    psi = lfilter([1.0], a, np.r_[1.0, np.zeros(length - 1)])
    full = fftconvolve(psi, psi[::-1], mode="full")[len(psi) - 1:]
    return full[:lags]


def filter_power(filters: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """E[g²] for g = Σ_k f_k x_{T−k} per row of `filters` [heads, S]: Σ_{j,k} f_j f_k γ(|j − k|)."""
    S = filters.shape[1]
    lagged = fftconvolve(filters, filters[:, ::-1], mode="full", axes=1)[:, S - 1:]  # Σ_i f_i f_{i+h}, h = 0…S − 1
    return lagged[:, 0] * gamma[0] + 2 * (lagged[:, 1:] * gamma[1:S]).sum(axis=1)


def window_setting(tally: Tally, false_heads: dict, kind: str, S: int, P: int, n: int, stride: int, reps: int,
                   rng: np.random.Generator, chunk: int, before: bool, truths: dict | None = None) -> None:
    """One setting: `reps` replications in chunks of `chunk`, every chunk's replications the columns of one call of
    the lab's method (its intervals are per column). The moving-block bootstrap (`before`) draws one set of
    resampled blocks per chunk for all its columns: each column's interval is still that method's, only the
    replications of a chunk share their resampling noise. truths: the top-u truths by (kind, seq_len), computed
    here where one is missing."""
    span_rows = S + P
    length = (n - 1) * stride + span_rows + 1
    origins = np.arange(n) * stride + S - 1
    span = overlap_span(S, P, stride)
    vx = stationary_variance(kind)
    gamma = autocovariance(kind, S)
    u = topu_count(S)
    topu_on = measures_topu(S, n)
    truth_topu = (truths or {}).get((kind, S)) if topu_on else None
    if topu_on and truth_topu is None:
        truth_topu = topu_truth(S, 1.0, u, 99, kind)
    setting = (kind, S, P, n, stride)
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        x, eps = draw(kind, r, length, rng)
        # the span per replication, as the lab measures it: the overlap plus the memory of the rows the windows read
        # (their time-of-day and day-of-week profiles taken out first, as for a calendar series)
        t = np.arange(length)
        period = PERIODS.get(kind, 24)
        spans = np.array([overlap_span(S, P, stride, memory=row_memory(x[i], [t % period, (t // period) % 7]))
                          for i in range(r)])
        ebar, esq, bayes = horizon_errors(kind, eps, origins, P)  # [r, n]
        xo, xb = x[:, origins], x[:, origins - 12]
        filters = rng.standard_normal((r, HEADS, S)) / math.sqrt(S)
        g = np.stack([fftconvolve(x[i][None, :], filters[i][:, ::-1], mode="valid", axes=1)[:, origins - S + 1].T
                      for i in range(r)], axis=1)  # [n, r, 16]
        e = ebar.T[:, :, None]  # [n, r, 1]
        model = esq + 2 * BETA * xo * ebar + BETA ** 2 * xo ** 2  # [r, n]
        base = esq + 2 * BETA2 * xb * ebar + BETA2 ** 2 * xb ** 2
        # (values [n, columns], truth [columns]) per statistic
        columns = {
            "head_null": ((-4.0 * g * e).reshape(n, -1), np.zeros(r * HEADS)),
            # a head the model needs: without it the error is e + g, so ΔMSE_w = g² + 2·g·ē, positive and skewed,
            # mean E[g²] (exact, from the process's autocovariance)
            "head_effect": ((g * g + 2 * g * e).reshape(n, -1),
                            np.concatenate([filter_power(filters[i], gamma) for i in range(r)])),
            "mse": (model.T, np.full(r, bayes + BETA ** 2 * vx)),
            "paired": ((model - base).T, np.full(r, (BETA ** 2 - BETA2 ** 2) * vx))}
        if topu_on:
            windows = np.lib.stride_tricks.sliding_window_view(x, S, axis=1)[:, origins - S + 1]  # [r, n, S]
            columns["topu"] = (overlap(windows.reshape(r * n, S), 1.0, u, rng).reshape(r, n).T, np.full(r, truth_topu))
        for name, (values, truth) in columns.items():
            per = HEADS if name.startswith("head") else 1
            m = window_means(values, span=np.repeat(spans, per))
            tally.add((name, *setting, "lab"), m.lo, m.hi, truth, per)
            if before:
                lo, hi = mbb(values, span, rng)
                tally.add((name, *setting, "mbb"), lo, hi, truth, per)
            if name == "head_null":
                p = m.p_values().reshape(r, HEADS)
                found = false_heads.setdefault(setting, [0, 0.0, 0.0])
                for row in p:
                    found[0] += 1
                    if np.isfinite(row).all():
                        found[1] += float((row < Q).sum())
                        found[2] += float(benjamini_hochberg(row, Q).sum())
        for i in range(r):
            ratio = ratio_interval(model[i], esq[i], span=int(spans[i]))
            tally.add(("ratio", *setting, "lab"), ratio.lo, ratio.hi, (bayes + BETA ** 2 * vx) / bayes)


def settings_of(args) -> list[tuple]:
    """Every setting of the run, the dearest first (a process pool then ends with the cheap ones): ("windows", kind, S,
    P, n, stride) and ("seeds", seeds, noise)."""
    shapes = [(S, P) for S, P in (SHAPES[:2] if args.quick else SHAPES) if not args.seq_lens or S in args.seq_lens]
    counts = [n for n in ([256, 4096] if args.quick else WINDOWS) if not args.windows or n in args.windows]
    windows = [("windows", kind, S, P, n, stride) for kind in args.processes for S, P in shapes for n in counts
               for stride in (1, 8) if not (stride > 1 and n * stride > 8192)]
    windows.sort(key=lambda w: -w[4] * w[5] * (w[2] + w[3]))
    return windows + [("seeds", seeds, noise) for seeds in (3, 5, 8, 20) for noise in (0.5, 1.5)]


def run_setting(setting: tuple, index: int, seed: int, reps: int, before: bool, truths: dict, stage: int = 0) -> tuple:
    """One setting on its own random stream (seed, index; a confirmation's stage 1 on another) → (its cells, its
    false-head counts, seconds)."""
    began = time.perf_counter()
    rng = np.random.default_rng([seed, index] if stage == 0 else [seed, index, stage])
    tally, false_heads = Tally(), {}
    if setting[0] == "windows":
        _, kind, S, P, n, stride = setting
        chunk = max(1, min(50, 2_000_000 // (n * P)))
        window_setting(tally, false_heads, kind, S, P, n, stride, reps, rng, chunk, before, truths)
    else:
        seeds_setting(tally, setting[1], setting[2], reps, rng, before)  # cheap: as many as the windows
    return tally.cells, false_heads, time.perf_counter() - began


def _truth(kind: str, S: int) -> tuple:
    return (kind, S), topu_truth(S, 1.0, topu_count(S), 99, kind)


def _merge(into: dict, part: dict) -> None:
    for key, values in part.items():
        into[key] = [a + b for a, b in zip(into[key], values)] if key in into else list(values)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400, help="replications per setting")
    parser.add_argument("--quick", action="store_true", help="seq_len 96 and 192 only, 256 and 4096 windows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", nargs="*", default=list(PROCESSES))
    parser.add_argument("--seq-lens", nargs="*", type=int, help="only these input lengths (of 96, 192, 336, 1440)")
    parser.add_argument("--windows", nargs="*", type=int, help="only these window counts (of 32, 256, 1024, 4096)")
    parser.add_argument("--before", action="store_true",
                        help="also the moving-block bootstrap the lab used before (the `mbb` rows; slower)")
    parser.add_argument("--confirm", type=int, default=1600,
                        help="replications with which a cell under the goal is measured again (0: no confirmation)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes the settings run in (default: the machine's cores)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.confirm < 0:
        parser.error(f"--confirm must be 0 or more replications, got {args.confirm}")
    tally, false_heads = Tally(), {}
    settings = settings_of(args)
    needed = sorted({(w[1], w[2]) for w in settings if w[0] == "windows" and measures_topu(w[2], w[4])})
    began = time.perf_counter()

    def report(setting: tuple, part: tuple, into: Tally, heads_into: dict) -> None:
        cells, heads, seconds = part
        _merge(into.cells, cells)
        _merge(heads_into, heads)
        print(f"# {' '.join(map(str, setting[1:]))}: {seconds:.0f} s ({time.perf_counter() - began:.0f} s in all)",
              file=sys.stderr, flush=True)

    def run_all(jobs: list[tuple], reps: int, stage: int, into: Tally, heads: dict) -> None:
        """jobs: (setting, its index in the run) → their cells into `into`, their false-head counts into `heads`."""
        def take(setting, part):
            report(setting, part, into, heads)
        if args.jobs == 1:
            for setting, index in jobs:
                take(setting, run_setting(setting, index, args.seed, reps, args.before, truths, stage))
            return
        futures = {pool.submit(run_setting, setting, index, args.seed, reps, args.before, truths, stage): setting
                   for setting, index in jobs}
        for future in as_completed(futures):
            take(futures[future], future.result())

    confirmation, still = Tally(), []
    with contextlib.ExitStack() as stack:
        if args.jobs == 1:
            truths = dict(_truth(kind, S) for kind, S in needed)
        else:
            for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread per process
                os.environ.setdefault(name, "1")
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")))
            truths = dict(pool.map(_truth, *zip(*needed))) if needed else {}
        run_all([(setting, index) for index, setting in enumerate(settings)], args.reps, 0, tally, false_heads)
        # a cell under the goal at the first stage is measured again, on its setting's second stream, with more
        # replications: among some hundred cells of true coverage 0.95 a few fall under 0.93 at 400 replications by
        # chance, and the least of them is biased low; the confirmation is not selected, so its rate is the cell's
        short = under_goal(tally.cells, set(STRESS))
        if args.confirm and short:
            again = sorted({setting_of(key) for key in short}, key=settings.index)
            print(f"# confirming {len(short)} cells under {GOAL} in {len(again)} settings, {args.confirm} "
                  "replications each", file=sys.stderr, flush=True)
            run_all([(setting, settings.index(setting)) for setting in again], args.confirm, 1, confirmation, {})
    print_cells(tally.cells)
    worst = {"lab": 1.0, "mbb": 1.0, "stress": 1.0}
    beyond = []  # cells whose coverage is below the goal by more than their binomial error
    for key, cell in tally.cells.items():
        which = counts(key, cell, set(STRESS))
        if which:
            rate, error, _ = cell_rate(cell)
            worst[which] = min(worst[which], rate)
            if which == "lab" and rate + error < GOAL:
                beyond.append(key)
    print()
    print("| process | seq_len | pred_len | windows | stride | models | false heads raw (p < 0.05) | after BH |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    null_rates = []
    for (process, S, P, n, stride), (models, raw, adjusted) in sorted(false_heads.items(), key=lambda kv: str(kv[0])):
        print(f"| {process} | {S} | {P} | {n} | {stride} | {models} | {raw / models:.3f} | {adjusted / models:.3f} |")
        null_rates.append(adjusted / models)
    if args.confirm and short:
        print(f"\nThe {len(short)} cells under {GOAL}, again with {args.confirm} replications on streams of their own:")
        still = print_confirmation(tally.cells, confirmation.cells, short)
    print(f"min_coverage_95_strong_memory: {worst['stress']:.3f}  (outside the goal: a stress case)")
    print()
    if args.before:
        print(f"min_coverage_95_before: {worst['mbb']:.3f}")
    print(f"min_coverage_95: {worst['lab']:.3f}")
    print(f"cells_below_{GOAL}_beyond_their_error: {len(beyond)}" + "".join(f"\n#   {k}" for k in sorted(beyond, key=str)))
    if args.confirm:
        print(f"cells_below_{GOAL}_after_confirmation: {len(still)}" + "".join(f"\n#   {k}" for k in still))
    print(f"false_heads_per_model_null: {max(null_rates):.3f}")
    print(f"# {time.perf_counter() - began:.0f} s, {args.reps} replications per setting, MIN_DOF {MIN_DOF}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
