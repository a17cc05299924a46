"""Which queries ProbSparse picks, and how well its sampled score agrees with the exact one.

ProbSparse (Zhou et al. 2021, §3.1) ranks every query q_i by M̄(q_i, K) = max_j s_ij − mean_j s_ij with
s_ij = q_i·k_j/√D, but estimates it on U sampled keys, and gives only the top u queries a softmax row;
every other ("lazy") query returns a cheap stand-in. This module recomputes, from the queries and keys
recorded at each attention site,

    exact M(q_i, K) = ln Σ_j exp(s_ij) − mean_j s_ij        (the paper's measure, Eq. 2)
    exact M̄(q_i, K) = max_j s_ij − mean_j s_ij              (the paper's bound, over all keys)

(causal sites: over the allowed keys j ≤ i only), and reports how the sampled top-u agrees with the
exact top-u over several key-sample seeds. It also summarises each head's computed attention rows:
entropy, peak weight, attended distance and the dominant lag (previous step, seasonal period).

Positions (query and key steps in the tables) are on the window's input-step axis: see `analysis.attention.positions`.
The forward passes are recorded by `analysis.attention.recording`, the row statistics come from `analysis.attention.stats`.

Everything is a pure function of (model, data, seed): the model is never changed, every key sample is
drawn from a seeded generator.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, Site

from informer_lab.analysis.attention.stats import as_float64, lag_profile, row_entropy
from informer_lab.analysis.data import PreparedData, seasonal_periods
from informer_lab.analysis.attention.positions import SitePositions, lazy_rule, site_positions
from informer_lab.analysis.attention.recording import ATTENTION_PATTERNS, SiteRows, record_forward, site_rows, window_batch


# --------------------------------------------------------------------------------------------
# Exact maths
# --------------------------------------------------------------------------------------------
PARALLEL_SCORES = 1 << 24  # B·H·L_Q·L_K from which the blocks of queries are shared between the machine's cores


def exact_sparsity(Q: torch.Tensor, K: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact M and M̄ of every query over all keys (causal: keys j ≤ i), on the q·k/√D scale, in float64.

    Q: [B, H, L_Q, D], K: [B, H, L_K, D] → (M [B, H, L_Q], M̄ [B, H, L_Q]).
    Scored a block of queries at a time, so the [B, H, L_Q, L_K] score table never exists whole; past PARALLEL_SCORES
    scores (a seq_len-5760 site holds 133 million) the blocks are shared between Python threads, one per core (torch
    lets go of the GIL in its kernels), each block's result the same whichever thread scores it.
    """
    if Q.dim() != 4 or K.dim() != 4 or Q.shape[:2] != K.shape[:2] or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"expected Q [B, H, L_Q, D] and K [B, H, L_K, D], got {list(Q.shape)} and {list(K.shape)}")
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    if causal and L_Q != L_K:
        raise ValueError(f"causal sparsity needs L_Q == L_K, got {L_Q} and {L_K}")
    Qd, Kt = Q.double(), K.double().transpose(-2, -1)  # [B, H, L_Q, D], [B, H, D, L_K]
    scale = 1.0 / math.sqrt(D)
    # ≤ 2 MB of float64 scores at a time: a block that stays in the cache through its seven passes (32 MB blocks
    # took 0.14 s for one window's first layer at seq_len 1440, 2 MB ones 0.04 s)
    chunk = max(1, (1 << 18) // max(1, B * H * L_K))
    M, Mbar = Q.new_empty(B, H, L_Q, dtype=torch.float64), Q.new_empty(B, H, L_Q, dtype=torch.float64)

    def score(start: int) -> None:
        stop = min(L_Q, start + chunk)
        s = (Qd[:, :, start:stop] @ Kt) * scale  # [B, H, c, L_K]
        if causal:
            keys, queries = torch.arange(L_K, device=Q.device), torch.arange(start, stop, device=Q.device)
            allowed = keys.view(1, -1) <= queries.view(-1, 1)  # [c, L_K]: j ≤ i
            count = allowed.sum(-1).to(s.dtype)  # [c]
            mean = s.masked_fill(~allowed, 0.0).sum(-1) / count  # [B, H, c]
            s = s.masked_fill(~allowed, float("-inf"))
        else:
            mean = s.mean(-1)
        peak = s.amax(dim=-1, keepdim=True)  # [B, H, c, 1]
        M[:, :, start:stop] = _log_sum_exp(s, peak).squeeze(-1) - mean
        Mbar[:, :, start:stop] = peak.squeeze(-1) - mean

    starts = range(0, L_Q, chunk)
    workers = min(len(starts), os.cpu_count() or 1, 4) if B * H * L_Q * L_K >= PARALLEL_SCORES else 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="exact-m") as pool:
            list(pool.map(score, starts))
    else:
        for start in starts:
            score(start)
    return M, Mbar


def _log_sum_exp(s: torch.Tensor, peak: torch.Tensor) -> torch.Tensor:
    """log Σ_j exp(s_j) of float64 scores, the exponentials of s − max taken in float32 (each within 6e-8 of its
    value, in [0, 1], the max's exactly 1) and summed in float64: the result is within ~1e-7 of the float64 one, so
    M̄ ≤ M ≤ M̄ + ln n still holds exactly, at half the time (float64 exp was most of a long site's exact M: 0.14 s
    a window at seq_len 1440, every window change of the Sparsity explorer)."""
    e = (s - peak).float().exp_()
    return peak + e.sum(dim=-1, keepdim=True, dtype=torch.float64).log_()


def _top_mask(scores: np.ndarray, u: int) -> np.ndarray:
    """Boolean [..., L]: True at the u largest entries of each row (ties broken by position, earliest first).

    By the u-th largest value of each row (a partition, not a sort: 0.1 against 1.7 ms a [4, 5760] site): every entry
    above it, then the earliest entries equal to it until there are u. NaN never ranks above a number."""
    L = scores.shape[-1]
    if u >= L:
        return np.ones(scores.shape, dtype=bool)
    if np.isnan(scores).any():  # the sort's order (NaN last) without thinking about NaN in a partition
        order = np.argsort(-scores, axis=-1, kind="stable")[..., :u]
        mask = np.zeros(scores.shape, dtype=bool)
        np.put_along_axis(mask, order, True, axis=-1)
        return mask
    kth = np.partition(scores, L - u, axis=-1)[..., L - u:L - u + 1]  # [..., 1]: the u-th largest
    above, tied = scores > kth, scores == kth
    wanted = u - above.sum(axis=-1, keepdims=True)  # how many of the tied entries make the top u
    return above | (tied & (np.cumsum(tied, axis=-1) <= wanted))


@dataclass(frozen=True, eq=False)
class TopkAgreement:
    """How two top-u query sets agree, per leading index: overlap = |A ∩ B| / u, jaccard = |A ∩ B| / |A ∪ B|."""

    overlap: np.ndarray
    jaccard: np.ndarray
    u: int


def topk_agreement(sampled, exact, u: int) -> TopkAgreement:
    """Agreement of the top-u queries by `sampled` score with the top-u by `exact` score.

    sampled, exact: [..., L] (numpy or torch) → TopkAgreement with [...] arrays. 1 ≤ u ≤ L.
    """
    a, b = as_float64(sampled), as_float64(exact)
    if a.shape != b.shape or a.ndim < 1:
        raise ValueError(f"sampled and exact scores must have the same shape [..., L], got {a.shape} and {b.shape}")
    if not 1 <= u <= a.shape[-1]:
        raise ValueError(f"u must be in [1, {a.shape[-1]}], got {u}")
    both = (_top_mask(a, u) & _top_mask(b, u)).sum(-1).astype("float64")
    return TopkAgreement(overlap=both / u, jaccard=both / (2 * u - both), u=u)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis (ties share their mean rank), 1-based. [..., L] → [..., L]."""
    flat = x.reshape(-1, x.shape[-1])
    return pd.DataFrame(flat).rank(axis=1, method="average").to_numpy().reshape(x.shape)


def spearman(a, b) -> np.ndarray:
    """Spearman ρ between a and b along the last axis: Pearson correlation of their average ranks.

    [..., L] → [...]; NaN where either side is constant (ρ undefined).
    """
    x, y = as_float64(a), as_float64(b)
    if x.shape != y.shape or x.ndim < 1:
        raise ValueError(f"spearman needs two arrays of the same shape [..., L], got {x.shape} and {y.shape}")
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(-1, keepdims=True), ry - ry.mean(-1, keepdims=True)
    denom = np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (rx * ry).sum(-1) / np.where(denom > 0, denom, 1.0), np.nan)


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SparsityReport:
    """Sampled vs exact query sparsity, per site, head, window and query.

    queries:   one row per (window, site, head, query position): site, kind, layer, replica, level, head,
               window, position, step (input step the query's span starts at), timestamp (of that step),
               span_start, span_end (timestamps of the span; equal unless distilled), segment, sampled_mbar
               (recorded, q·k/√D scale; NaN at full-attention sites), exact_m, exact_mbar (causal sites:
               over the allowed keys j ≤ i), exact_m_all_keys (M over every key, mask ignored, as the
               sampled M̄ is: it separates sampling error from the mask mismatch), selected,
               rank_sampled (1 = largest sampled M̄), rank_exact (1 = largest exact M), lazy_rule.
               Seed `seed` only.
    agreement: one row per ProbSparse (site, head): u, L_Q, chance_overlap (u / L_Q, a random top-u's
               expected overlap), and the mean and std over `seeds` key-sample seeds (each averaged over the
               windows first) of overlap_at_u, jaccard, spearman (sampled M̄ vs exact M) and
               overlap_at_u_mbar, jaccard_mbar, spearman_mbar (vs exact M̄) and overlap_at_u_all_keys,
               spearman_all_keys (vs M over every key; equal to the first pair at non-causal sites).
    agreement_by_seed: the same measures per (site, head, seed, window), before averaging.
    heads:     one row per (site, head) over the computed rows of seed `seed`: rows, mean_entropy (nats),
               uniform_entropy (mean ln of the allowed keys: a flat row), mean_max_weight, attended_distance
               (layer steps) and attended_distance_steps (input steps), dominant_lag (layer steps),
               dominant_lag_steps (input steps, × 2**level), dominant_lag_mass, previous_step (dominant lag 1),
               seasonal_lag (|dominant_lag_steps| within ±1 of a seasonal period), seasonal_period.
    rows:      per site, the recorded attention rows and selected queries of seed `seed`.
    """

    split: str
    windows: tuple[int, ...]
    seed: int
    seeds: int
    queries: pd.DataFrame
    agreement: pd.DataFrame
    agreement_by_seed: pd.DataFrame
    heads: pd.DataFrame
    rows: tuple[SiteRows, ...]

    def site_rows(self, name: str) -> SiteRows:
        for r in self.rows:
            if r.site == name:
                return r
        raise KeyError(f"no site {name!r}; sites are {', '.join(r.site for r in self.rows)}")


def _site_meta(site: Site, pos: SitePositions) -> dict:
    return {"site": site.name, "kind": site.kind, "layer": site.layer, "replica": site.replica, "level": pos.level}


def _exact_for_site(model: Informer, site: Site, records: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """exact M and M̄ (causal sites: over j ≤ i) and M over every key, each [B, H, L_Q]."""
    Q = records[f"{site.name}.queries"].transpose(1, 2)  # [B, H, L_Q, D]
    K = records[f"{site.name}.keys"].transpose(1, 2)  # [B, H, L_K, D]
    M, Mbar = exact_sparsity(Q, K, model.attention_layer(site).causal)
    M_all = exact_sparsity(Q, K, False)[0] if model.attention_layer(site).causal else M
    return {"m": M.numpy(), "mbar": Mbar.numpy(), "m_all": M_all.numpy()}


def _exact_reused(model: Informer, site: Site, records: dict[str, torch.Tensor], known: dict) -> dict:
    """`_exact_for_site`, reusing the last seed's result when this site's queries and keys are the same tensors'
    values (a first layer's do not depend on the key sample: at seq_len 5760 its exact M is most of the report's
    time, and it was recomputed for every seed)."""
    Q, K = records[f"{site.name}.queries"], records[f"{site.name}.keys"]
    last = known.get(site.name)
    if last is not None and torch.equal(last[0], Q) and torch.equal(last[1], K):
        return last[2]
    exact = _exact_for_site(model, site, records)
    known[site.name] = (Q, K, exact)
    return exact


def _queries_table(model: Informer, site: Site, records, exact, windows, timestamps: pd.DatetimeIndex) -> pd.DataFrame:
    M, Mbar = exact["m"], exact["mbar"]  # [B, H, L_Q]
    B, H, L_Q = M.shape
    pos = site_positions(model.config, site)
    scores = records.get(f"{site.name}.scores")
    sampled = scores.double().numpy() if scores is not None else np.full((B, H, L_Q), np.nan)
    selected = np.zeros((B, H, L_Q), dtype=bool)
    np.put_along_axis(selected, records[f"{site.name}.selected"].numpy().astype(np.int64), True, axis=-1)
    b, h, p = (a.ravel() for a in np.indices((B, H, L_Q)))
    window = np.asarray(windows)[b]

    def stamp(steps):
        return timestamps[window + steps[p]]

    rank = lambda x: pd.DataFrame(-x.reshape(B * H, L_Q)).rank(axis=1, method="min").to_numpy().ravel()  # noqa: E731
    table = pd.DataFrame({
        **_site_meta(site, pos), "head": h, "window": window, "position": p, "step": pos.query_start[p],
        "timestamp": stamp(pos.query_start), "span_start": stamp(pos.query_start), "span_end": stamp(pos.query_end),
        "segment": pos.segment[p], "sampled_mbar": sampled.ravel(), "exact_m": M.ravel(), "exact_mbar": Mbar.ravel(),
        "exact_m_all_keys": exact["m_all"].ravel(), "selected": selected.ravel(),
        "rank_sampled": rank(sampled) if scores is not None else np.nan,
        "rank_exact": rank(M), "lazy_rule": lazy_rule(model, site)})
    return table


def _agreement_rows(site: Site, pos: SitePositions, sampled: np.ndarray, exact, u: int, seed: int,
                    windows) -> pd.DataFrame:
    M, Mbar, M_all = exact["m"], exact["mbar"], exact["m_all"]  # [B, H, L_Q]
    B, H, L_Q = M.shape
    vs_m, vs_mbar, vs_all = (topk_agreement(sampled, x, u) for x in (M, Mbar, M_all))
    b, h = (a.ravel() for a in np.indices((B, H)))
    return pd.DataFrame({**_site_meta(site, pos), "head": h, "seed": seed, "window": np.asarray(windows)[b],
                         "u": u, "L_Q": L_Q, "overlap_at_u": vs_m.overlap.ravel(), "jaccard": vs_m.jaccard.ravel(),
                         "spearman": spearman(sampled, M).ravel(), "overlap_at_u_mbar": vs_mbar.overlap.ravel(),
                         "jaccard_mbar": vs_mbar.jaccard.ravel(), "spearman_mbar": spearman(sampled, Mbar).ravel(),
                         "overlap_at_u_all_keys": vs_all.overlap.ravel(),
                         "spearman_all_keys": spearman(sampled, M_all).ravel()})


AGREEMENT_MEASURES = ("overlap_at_u", "jaccard", "spearman", "overlap_at_u_mbar", "jaccard_mbar", "spearman_mbar",
                      "overlap_at_u_all_keys", "spearman_all_keys")
SITE_KEYS = ["site", "kind", "layer", "replica", "level", "head"]


def _summarise_agreement(by_seed: pd.DataFrame, sites_order: list[str]) -> pd.DataFrame:
    if by_seed.empty:
        cols = SITE_KEYS + ["u", "L_Q", "chance_overlap", "seeds"] + [
            f"{m}_{s}" for m in AGREEMENT_MEASURES for s in ("mean", "std")]
        return pd.DataFrame(columns=cols)
    keys = SITE_KEYS + ["u", "L_Q"]
    per_seed = by_seed.groupby(keys + ["seed"], sort=False)[list(AGREEMENT_MEASURES)].mean().reset_index()
    grouped = per_seed.groupby(keys, sort=False)
    out = grouped[list(AGREEMENT_MEASURES)].agg(["mean", "std"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    out = out.reset_index()
    out.insert(len(keys), "chance_overlap", out["u"] / out["L_Q"])
    out.insert(len(keys) + 1, "seeds", grouped.size().to_numpy())
    out["_order"] = out["site"].map({s: i for i, s in enumerate(sites_order)})
    return out.sort_values(["_order", "head"], kind="stable").drop(columns="_order").reset_index(drop=True)


def _heads_table(model: Informer, rows: tuple[SiteRows, ...], freq: str) -> pd.DataFrame:
    periods = seasonal_periods(freq)
    table = []
    for site, sr in zip(model.sites, rows):
        pos = site_positions(model.config, site)
        causal = model.attention_layer(site).causal
        B, H, u, L_K = sr.rows.shape
        for h in range(H):
            p = sr.rows[:, h].reshape(B * u, L_K)  # [B·u, L_K]
            sel = sr.selected[:, h].reshape(B * u)  # [B·u]
            profile = lag_profile(p, pos.query_layer[sel], pos.key_layer)
            allowed = sel + 1 if causal else np.full(len(sel), L_K)
            lag_steps = profile.lag * pos.lag_unit
            match = [period for period in periods if abs(abs(lag_steps) - period) <= 1]
            table.append({**_site_meta(site, pos), "head": h, "rows": len(sel),
                          "mean_entropy": float(row_entropy(p).mean()),
                          "uniform_entropy": float(np.log(allowed).mean()),
                          "mean_max_weight": float(p.max(-1).mean()),
                          "attended_distance": profile.distance,
                          "attended_distance_steps": profile.distance * pos.lag_unit,
                          "dominant_lag": profile.lag, "dominant_lag_steps": lag_steps,
                          "dominant_lag_mass": profile.lag_mass, "previous_step": profile.lag == 1,
                          "seasonal_lag": bool(match), "seasonal_period": match[0] if match else np.nan})
    return pd.DataFrame(table)


def sparsity_report(model: Informer, prepared: PreparedData, split: str, windows: list[int], *, seed: int = 0,
                    seeds: int = 10) -> SparsityReport:
    """Sampled vs exact sparsity at every attention site, for the given windows of a split.

    The forward pass runs `seeds` times, with key-sample generators seeded seed, seed + 1, ...; the
    queries table, the rows and the heads summary come from the first (seed `seed`), the agreement
    table from all of them (deeper layers' queries change with the seed too: their exact M is taken
    from the same forward pass as the sampled M̄ it is compared with).
    """
    if int(seeds) < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    windows = [int(w) for w in windows]
    batch = window_batch(prepared, split, windows)
    timestamps = prepared.split(split).timestamps
    queries, by_seed, rows = [], [], ()
    known: dict[str, tuple] = {}  # site → (Q, K, exact) of the last seed
    for k in range(int(seeds)):
        records = record_forward(model, batch, seed + k, *ATTENTION_PATTERNS)
        for site in model.sites:
            exact = _exact_reused(model, site, records, known)
            if k == 0:
                queries.append(_queries_table(model, site, records, exact, windows, timestamps))
            scores = records.get(f"{site.name}.scores")
            if scores is not None:
                u = records[f"{site.name}.selected"].shape[-1]
                by_seed.append(_agreement_rows(site, site_positions(model.config, site), scores.double().numpy(),
                                               exact, u, seed + k, windows))
        if k == 0:
            rows = site_rows(model, records)
    by_seed_table = pd.concat(by_seed, ignore_index=True) if by_seed else pd.DataFrame()
    agreement = _summarise_agreement(by_seed_table, [s.name for s in model.sites])
    return SparsityReport(split=split, windows=tuple(windows), seed=seed, seeds=int(seeds),
                          queries=pd.concat(queries, ignore_index=True), agreement=agreement,
                          agreement_by_seed=by_seed_table, heads=_heads_table(model, rows, prepared.freq), rows=rows)


__all__ = ["SparsityReport", "TopkAgreement", "exact_sparsity", "sparsity_report", "spearman", "topk_agreement"]
