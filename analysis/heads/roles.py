"""What each head does, in words that survive retraining: lag profiles, roles, and heads matched across runs.

A head's **lag profile** is the attention mass it puts at each lag (query step − key step, in input steps;
positive: the key lies in the past), averaged over its computed softmax rows in many windows. Its **role**:

- near uniform:  mean row entropy ≥ 95 % of a flat row's (it averages everything it may see);
- previous step: the dominant lag is one step of its layer (2^level input steps after distilling);
- seasonal k:    the dominant lag is within one layer step of a seasonal lag k of the data itself: the peaks of
                 the target's autocorrelation on the train split (`acf_lags`), not a period assumed from the
                 timestamps;
- local:         the dominant lag is within three layer steps (itself included);
- long range:    the mean attended distance exceeds a quarter of the encoder window;
- other:         none of these.

Heads of two runs are matched per site by their profiles: the assignment (scipy's `linear_sum_assignment`) that
minimises the summed Jensen–Shannon distance between matched profiles. A study then asks which roles appear in
every seed, and whether matched heads keep their importance (Spearman ρ between seeds, with an interval from
resampling the matched heads).
"""
from __future__ import annotations


from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import jensenshannon

from informer_lab.model import Informer

from informer_lab.analysis.attention.agreement import strided_windows
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.attention.positions import site_positions
from informer_lab.analysis.attention.recording import record_forward, window_batch

UNIFORM = 0.95
LOCAL_STEPS = 3
LONG_RANGE = 0.25  # of seq_len


def acf_lags(values: np.ndarray, max_lag: int, top: int = 3, threshold: float = 0.2) -> tuple[int, ...]:
    """Seasonal lags of a series: the lags ≥ 2 (up to max_lag) where its autocorrelation has a local maximum
    above `threshold`, the `top` highest first. values: [N] (the target's train rows)."""
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)] - np.nanmean(x)
    n = len(x)
    if n < 4 or not np.any(x):
        return ()
    spectrum = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[: n] / (x @ x)
    max_lag = min(max_lag, n - 2)
    peaks = [k for k in range(2, max_lag) if acf[k] > threshold and acf[k] >= acf[k - 1] and acf[k] >= acf[k + 1]]
    return tuple(sorted(peaks, key=lambda k: -acf[k])[:top])


@dataclass(frozen=True, eq=False)
class HeadProfiles:
    """Lag profiles of every head of one model over many windows.

    mass:  [n_sites, H, n_lags] mean attention mass at each lag in `lags` (each [site, head] sums to 1)
    table: one row per (site, head): site, kind, layer, replica, level, head, rows, dominant_lag (input steps),
           dominant_mass, distance (mean |lag| weighted by attention, input steps), entropy_ratio, role, role_lag
    """

    lags: np.ndarray
    mass: np.ndarray
    table: pd.DataFrame
    seasonal_lags: tuple[int, ...]


def _role(dominant: int, unit: int, entropy_ratio: float, distance: float, seq_len: int,
          seasonal: tuple[int, ...]) -> tuple[str, int]:
    if entropy_ratio >= UNIFORM:
        return "near uniform", 0
    if dominant == unit:
        return "previous step", unit
    for k in seasonal:
        if abs(abs(dominant) - k) <= unit:
            return f"seasonal {k}", k
    if abs(dominant) <= LOCAL_STEPS * unit:
        return "local", dominant
    if distance > LONG_RANGE * seq_len:
        return "long range", dominant
    return "other", dominant


@torch.no_grad()
def head_profiles(model: Informer, prepared: PreparedData, split: str = "val", *, max_windows: int = 256,
                  seed: int = 0, batch_size: int = 32) -> HeadProfiles:
    """Lag profiles and roles of every head, from the computed rows of `max_windows` windows strided through the
    split (lazy rows are not attention a head chose: they are left out)."""
    c = model.config
    span = c.seq_len + c.dec_len
    lags = np.arange(-span, span + 1)
    H = c.n_heads
    mass = np.zeros((model.n_sites, H, len(lags)))
    entropy = np.zeros((model.n_sites, H))
    rows = np.zeros((model.n_sites, H))
    windows, _ = strided_windows(prepared, split, max_windows)
    positions = {s.name: site_positions(c, s) for s in model.sites}
    for start in range(0, len(windows), batch_size):
        batch = window_batch(prepared, split, windows[start:start + batch_size])
        records = record_forward(model, batch, seed, "*.rows", "*.selected")
        for site in model.sites:
            p = records[f"{site.name}.rows"].double()  # [B, H, u, L_K]
            selected = records[f"{site.name}.selected"]  # [B, H, u]
            pos = positions[site.name]
            q = torch.as_tensor(pos.query_start)[selected]  # [B, H, u] input step of each row's query
            k = torch.as_tensor(pos.key_start)  # [L_K]
            lag = (q.unsqueeze(-1) - k) + span  # [B, H, u, L_K] index into `lags`
            for h in range(H):
                mass[site.index, h] += np.bincount(lag[:, h].reshape(-1).numpy(), weights=p[:, h].reshape(-1).numpy(),
                                                   minlength=len(lags))
            allowed = (p > 0).sum(-1).clamp(min=2).double()  # [B, H, u] keys a row could weigh
            plogp = torch.where(p > 0, p * p.clamp(min=1e-300).log(), torch.zeros_like(p)).sum(-1)
            entropy[site.index] += (-plogp / allowed.log()).sum(dim=(0, 2)).numpy()
            rows[site.index] += p.shape[0] * p.shape[2]
    mass /= np.maximum(rows[..., None], 1)
    entropy /= np.maximum(rows, 1)
    target = prepared.train.values[:, -1]
    seasonal = acf_lags(target, c.seq_len)
    table = []
    for site in model.sites:
        unit = positions[site.name].lag_unit
        for h in range(H):
            m = mass[site.index, h]
            dominant = int(lags[np.argmax(m)])
            distance = float((m * np.abs(lags)).sum())
            role, role_lag = _role(dominant, unit, float(entropy[site.index, h]), distance, c.seq_len, seasonal)
            table.append({"site": site.name, "kind": site.kind, "layer": site.layer, "replica": site.replica,
                          "level": positions[site.name].level, "head": h, "rows": int(rows[site.index, h]),
                          "dominant_lag": dominant, "dominant_mass": float(m.max()), "distance": distance,
                          "entropy_ratio": float(entropy[site.index, h]), "role": role, "role_lag": role_lag})
    return HeadProfiles(lags, mass, pd.DataFrame(table), seasonal)


def match_heads(reference: HeadProfiles, other: HeadProfiles) -> pd.DataFrame:
    """For each site, the heads of `other` assigned one to one to the heads of `reference` by minimal summed
    Jensen–Shannon distance of their lag profiles. One row per reference head: site, ref_head, head, distance."""
    rows = []
    for s, site in enumerate(reference.table["site"].unique()):
        a, b = reference.mass[s], other.mass[s]  # [H, n_lags]
        with np.errstate(invalid="ignore"):  # identical profiles: scipy's divergence rounds to -1e-17, sqrt → NaN
            cost = np.array([[jensenshannon(x + 1e-12, y + 1e-12) for y in b] for x in a])
        cost = np.nan_to_num(cost, nan=0.0)
        cost = np.nan_to_num(cost, nan=0.0)  # equal profiles: scipy takes the root of a rounding error below 0
        ref_heads, heads = linear_sum_assignment(cost)
        rows += [{"site": site, "ref_head": int(r), "head": int(h), "distance": float(cost[r, h])}
                 for r, h in zip(ref_heads, heads)]
    return pd.DataFrame(rows)


def role_matrix(profiles: dict[str, HeadProfiles], seeds: dict[str, int]) -> pd.DataFrame:
    """Heads matched across runs (to the first run's heads) and their roles per seed: one row per (site, ref_head)
    with a column per seed (the role of the matched head there), `heads` (its index per seed, ';'-joined),
    `role` (the most common role), `in_every_seed` (the same role in every seed) and `seeds_with_role`."""
    runs = list(profiles)
    reference = profiles[runs[0]]
    table = reference.table.set_index(["site", "head"])
    out = {(site, h): {"site": site, "ref_head": h} for site, h in table.index}
    heads: dict[tuple, list] = {key: [] for key in out}
    for run in runs:
        matched = match_heads(reference, profiles[run])
        roles = profiles[run].table.set_index(["site", "head"])["role"]
        for row in matched.itertuples():
            key = (row.site, row.ref_head)
            out[key][f"seed {seeds[run]}"] = roles[(row.site, row.head)]
            heads[key].append(str(row.head))
    frame = pd.DataFrame(list(out.values()))
    seed_columns = [f"seed {seeds[run]}" for run in runs]
    frame["heads"] = [";".join(heads[(s, h)]) for s, h in zip(frame["site"], frame["ref_head"])]
    mode = frame[seed_columns].mode(axis=1)[0]
    frame["role"] = mode
    frame["seeds_with_role"] = (frame[seed_columns].to_numpy() == mode.to_numpy()[:, None]).sum(axis=1)
    frame["in_every_seed"] = frame["seeds_with_role"] == len(seed_columns)
    return frame


def importance_stability(values: pd.DataFrame, *, resamples: int = 1000, seed: int = 0,
                         level: float = 0.95) -> dict:
    """How stable is a per-head importance across seeds? values: one row per matched head (site, ref_head) and a
    column per seed. Returns the mean Spearman ρ over pairs of seeds with a t interval over seeds from the jackknife
    (analysis.intervals.pairwise_mean_interval: the seeds are the independent units; resampling the heads, as the
    lab did before, answers another question and its percentile interval covered too little with few heads), and
    the number of pairs and heads. `resamples` and `seed` are unused (nothing is drawn)."""
    from informer_lab.analysis.intervals import pairwise_mean_interval

    matrix = values.to_numpy(dtype=np.float64)  # [heads, seeds]
    n, seeds = matrix.shape
    pairs = seeds * (seeds - 1) // 2
    if not pairs:
        return {"rho": float("nan"), "rho_lo": float("nan"), "rho_hi": float("nan"), "pairs": 0, "heads": n}
    from scipy.stats import rankdata

    ranks = rankdata(matrix, axis=0)
    centred = ranks - ranks.mean(axis=0)
    norm = np.sqrt((centred ** 2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = centred / norm
        corr = z.T @ z  # [seeds, seeds] Spearman ρ of every pair (NaN for a seed whose values are all tied)
    interval = pairwise_mean_interval(corr, level=level)
    return {"rho": interval.estimate, "rho_lo": interval.lo, "rho_hi": interval.hi, "pairs": pairs, "heads": n}


__all__ = ["HeadProfiles", "acf_lags", "head_profiles", "importance_stability", "match_heads", "role_matrix"]
