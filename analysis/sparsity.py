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

Positions. Every query and key is placed on the window's input-step axis ("steps", 0 = the first
encoder input step; decoder position p is step seq_len − label_len + p). An encoder layer after l
distilling steps sees position i as the span of input steps it tiles (`distilled_spans`); its step is
the START of that span. Replica r of an encoder stack reads the last seq_len // 2**r steps.

Everything is a pure function of (model, data, seed): the model is never changed, every key sample is
drawn from a seeded generator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from pandas.tseries.frequencies import to_offset

from model import Batch, Informer, InformerConfig, Site, recording

from .data import PreparedData
from .windows import WindowDataset, collate

LAZY_RULES = {"mean": "mean(V)", "cummean": "running mean(V)", "cumsum": "running sum(V)", "full": "full attention"}
LAZY_ROWS = {
    "mean(V)": "every unselected query i returns mean_j v_j: a uniform row 1/L_K over all keys",
    "running mean(V)": "unselected query i returns (1/(i+1))·Σ_{j≤i} v_j: a uniform row 1/(i+1) over keys j ≤ i",
    "running sum(V)": "unselected query i returns Σ_{j≤i} v_j: weight 1 on every key j ≤ i (not a distribution)",
    "full attention": "no lazy rows: every query has its softmax row",
}


# --------------------------------------------------------------------------------------------
# Exact maths
# --------------------------------------------------------------------------------------------
def exact_sparsity(Q: torch.Tensor, K: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact M and M̄ of every query over all keys (causal: keys j ≤ i), on the q·k/√D scale, in float64.

    Q: [B, H, L_Q, D], K: [B, H, L_K, D] → (M [B, H, L_Q], M̄ [B, H, L_Q]).
    Scored a block of queries at a time, so the [B, H, L_Q, L_K] score table never exists whole.
    """
    if Q.dim() != 4 or K.dim() != 4 or Q.shape[:2] != K.shape[:2] or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"expected Q [B, H, L_Q, D] and K [B, H, L_K, D], got {list(Q.shape)} and {list(K.shape)}")
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    if causal and L_Q != L_K:
        raise ValueError(f"causal sparsity needs L_Q == L_K, got {L_Q} and {L_K}")
    Qd, Kt = Q.double(), K.double().transpose(-2, -1)  # [B, H, L_Q, D], [B, H, D, L_K]
    scale = 1.0 / math.sqrt(D)
    chunk = max(1, (1 << 22) // max(1, B * H * L_K))  # ≤ 32 MB of float64 scores at a time
    M_parts, Mbar_parts = [], []
    for start in range(0, L_Q, chunk):
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
        M_parts.append(torch.logsumexp(s, dim=-1) - mean)
        Mbar_parts.append(s.amax(dim=-1) - mean)
    return torch.cat(M_parts, dim=-1), torch.cat(Mbar_parts, dim=-1)


def _numpy(x) -> np.ndarray:
    return x.detach().double().cpu().numpy() if torch.is_tensor(x) else np.asarray(x, dtype="float64")


def _top_mask(scores: np.ndarray, u: int) -> np.ndarray:
    """Boolean [..., L]: True at the u largest entries of each row (ties broken by position, earliest first)."""
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :u]
    mask = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=-1)
    return mask


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
    a, b = _numpy(sampled), _numpy(exact)
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
    x, y = _numpy(a), _numpy(b)
    if x.shape != y.shape or x.ndim < 1:
        raise ValueError(f"spearman needs two arrays of the same shape [..., L], got {x.shape} and {y.shape}")
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(-1, keepdims=True), ry - ry.mean(-1, keepdims=True)
    denom = np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (rx * ry).sum(-1) / np.where(denom > 0, denom, 1.0), np.nan)


# --------------------------------------------------------------------------------------------
# Attention-row statistics
# --------------------------------------------------------------------------------------------
def row_entropy(rows) -> np.ndarray:
    """−Σ_j p_j ln p_j (nats) of each row, with 0·ln 0 = 0. [..., L_K] → [...]."""
    p = _numpy(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(-1)


@dataclass(frozen=True, eq=False)
class LagProfile:
    """Mean attention mass per lag i − j over a set of rows.

    mass: Series indexed by lag (ascending), the mass a row puts on keys at that lag, averaged over the
          rows (a row that cannot reach a lag contributes 0 to it). Sums to 1 for softmax rows.
    lag:  the lag with the largest mean mass (the smallest |lag| wins a tie, then the positive one).
    """

    mass: pd.Series
    lag: int
    lag_mass: float
    distance: float  # mean over rows of Σ_j p_ij |i − j|


def lag_profile(rows, query_positions, key_positions) -> LagProfile:
    """Where attention goes, as lags. rows: [N, L_K]; query_positions: [N]; key_positions: [L_K] (integers).

    Lag = query position − key position (positive: the key lies in the past).
    """
    p = _numpy(rows)
    q = np.asarray(query_positions, dtype=np.int64)
    k = np.asarray(key_positions, dtype=np.int64)
    if p.ndim != 2 or p.shape != (len(q), len(k)) or len(q) == 0:
        raise ValueError(f"rows must be [N, L_K] = [{len(q)}, {len(k)}] and non-empty, got {list(p.shape)}")
    lags = q[:, None] - k[None, :]  # [N, L_K]
    low = int(lags.min())
    totals = np.bincount((lags - low).ravel(), weights=p.ravel())
    mass = pd.Series(totals / len(q), index=pd.RangeIndex(low, low + len(totals), name="lag"), name="mass")
    candidates = mass.index.to_numpy()
    best = mass.to_numpy().max()
    tied = candidates[np.isclose(mass.to_numpy(), best, rtol=0, atol=1e-12)]
    lag = int(sorted(tied, key=lambda x: (abs(x), -x))[0])
    distance = float((p * np.abs(lags)).sum(-1).mean())
    return LagProfile(mass=mass, lag=lag, lag_mass=float(mass[lag]), distance=distance)


def seasonal_periods(freq: str) -> tuple[int, ...]:
    """Seasonal periods, in steps, of a pandas frequency: a day and a week for sub-daily steps
    (hourly: 24, 168; 15-minute: 96, 672), 7 for daily, 5 for business days, 52 weekly, 12 monthly,
    4 quarterly; () when none applies."""
    offset = to_offset(freq)
    name = offset.rule_code.upper()
    if name.startswith("W"):
        return (52,)
    if name.startswith("Q") or name.startswith("BQ"):
        return (4,)
    if name in ("MS", "ME", "M", "BMS", "BME", "BM"):
        return (12,)
    if name in ("SMS", "SME", "SM"):  # semi-month
        return (24,)
    if name in ("B", "C"):
        return (5 // offset.n,) if 5 % offset.n == 0 else ()
    try:
        seconds = pd.Timedelta(offset).total_seconds()
    except (ValueError, TypeError):
        return ()
    if seconds <= 0:
        return ()
    day, week = 86400.0, 7 * 86400.0
    if seconds < day and day % seconds == 0:
        return int(day // seconds), int(week // seconds)
    if seconds == day:
        return (7,)
    return ()


# --------------------------------------------------------------------------------------------
# Positions: where each query and key of a site lies on the input-step axis
# --------------------------------------------------------------------------------------------
def distilled_spans(length: int, level: int) -> np.ndarray:
    """[n, 2] (first, last) input step of each position after `level` distilling steps of a length-`length` input.

    Level 0: position i is step i. Each distilling step halves the length to ⌊(L − 1)/2⌋ + 1 and
    position i covers the spans of positions 2i and 2i + 1 below (only 2i for the last position of an
    odd length), so the spans of every level tile 0 .. length − 1 exactly.
    """
    if length < 1 or level < 0:
        raise ValueError(f"need length ≥ 1 and level ≥ 0, got {length} and {level}")
    spans = np.stack([np.arange(length), np.arange(length)], axis=1)  # [L, 2]
    for _ in range(level):
        n = len(spans)
        out = (n - 1) // 2 + 1
        first = spans[2 * np.arange(out), 0]
        last = spans[np.minimum(2 * np.arange(out) + 1, n - 1), 1]
        spans = np.stack([first, last], axis=1)
    return spans


@dataclass(frozen=True, eq=False)
class SitePositions:
    """A site's queries and keys on the window's input-step axis (0 = first encoder input step).

    query_start/query_end: [L_Q] first/last input step each query summarises (equal unless distilled)
    key_start:             [L_K] first input step of each key
    level:                 distilling steps before this layer (0 for decoder sites)
    lag_unit:              input steps per unit of the lag the heads table reports in "layer steps"
    query_layer / key_layer: [L_Q] / [L_K] positions in the layer's own steps (cross: input steps)
    segment:               [L_Q] "history" (encoder), "label" or "future" (decoder)
    """

    query_start: np.ndarray
    query_end: np.ndarray
    key_start: np.ndarray
    level: int
    lag_unit: int
    query_layer: np.ndarray
    key_layer: np.ndarray
    segment: np.ndarray


def replica_length(config: InformerConfig, replica: int) -> int:
    """Replica r of the encoder stack reads the last seq_len // 2**r input steps."""
    return config.seq_len // 2 ** replica


def site_positions(config: InformerConfig, site: Site) -> SitePositions:
    """Where the queries and keys of `site` lie in the window (see SitePositions)."""
    c = config
    dec_steps = c.seq_len - c.label_len + np.arange(c.dec_len)  # [L_dec]
    dec_segment = np.where(np.arange(c.dec_len) < c.label_len, "label", "future")
    if site.kind == "encoder":
        L_r = replica_length(c, site.replica)
        level = site.layer if c.distil else 0
        spans = distilled_spans(L_r, level) + (c.seq_len - L_r)  # [L_l, 2]
        positions = np.arange(len(spans))
        return SitePositions(spans[:, 0], spans[:, 1], spans[:, 0], level, 2 ** level, positions, positions,
                             np.full(len(spans), "history"))
    if site.kind == "decoder_self":
        positions = np.arange(c.dec_len)
        return SitePositions(dec_steps, dec_steps, dec_steps, 0, 1, positions, positions, dec_segment)
    keys = []
    for r, n_layers in enumerate(c.e_layers):
        L_r = replica_length(c, r)
        keys.append(distilled_spans(L_r, n_layers - 1 if c.distil else 0)[:, 0] + (c.seq_len - L_r))
    key_start = np.concatenate(keys)  # [L_enc'] the joined encoder output, replica by replica
    return SitePositions(dec_steps, dec_steps, key_start, 0, 1, dec_steps, key_start, dec_segment)


def lazy_rule(model: Informer, site: Site) -> str:
    """What an unselected query returns at `site`: "mean(V)", "running mean(V)", "running sum(V)", or
    "full attention" (no lazy rows)."""
    layer = model.attention_layer(site)
    if layer.kind != "prob":
        return LAZY_RULES["full"]
    if layer.causal:
        return LAZY_RULES[layer.decoder_lazy]
    return LAZY_RULES["mean"]


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------
def window_batch(prepared: PreparedData, split: str, windows: Sequence[int]) -> Batch:
    """The Batch of the given windows of a split (row b is windows[b]). ValueError for a bad window list."""
    dataset = WindowDataset(prepared, split)
    windows = [int(w) for w in windows]
    if not windows:
        raise ValueError("choose at least one window")
    if len(set(windows)) != len(windows):
        raise ValueError(f"windows must be distinct, got {windows}")
    bad = [w for w in windows if not 0 <= w < len(dataset)]
    if bad:
        raise ValueError(f"window {bad[0]} is outside the {split} split's {len(dataset)} windows")
    batch, _ = collate([dataset[w] for w in windows])
    return batch


def _check_eval(model: Informer) -> None:
    if model.training:
        raise ValueError("the model is in training mode (dropout on, batch-norm statistics updating); "
                         "analyse a model in eval mode (checkpoints load that way)")


@torch.no_grad()
def record_forward(model: Informer, batch: Batch, seed: int, *patterns: str) -> dict[str, torch.Tensor]:
    """One forward pass with the key sample drawn from `seed`, recording the hook sites matching `patterns`."""
    _check_eval(model)
    device = next(model.parameters()).device
    generator = torch.Generator(device=device).manual_seed(int(seed))
    with recording(*patterns) as rec:
        model(batch.to(device), generator=generator)
    return {name: t.cpu() for name, t in rec.records.items()}


@dataclass(frozen=True, eq=False)
class SiteRows:
    """The attention rows one site computed, for heatmaps.

    rows:      [B, H, u, L_K] softmax rows of the selected queries (full attention: every query, u = L_Q)
    selected:  [B, H, u] which query each row belongs to
    query_steps / key_steps: [L_Q] / [L_K] input step (start of the span) of each query / key
    lazy_rule: what the unselected queries return; `lazy_rows` says it in words. Lazy rows are NOT in `rows`.
    """

    site: str
    kind: str
    layer: int
    replica: int
    level: int
    rows: np.ndarray
    selected: np.ndarray
    query_steps: np.ndarray
    key_steps: np.ndarray
    lazy_rule: str
    lazy_rows: str


def site_rows(model: Informer, records: dict[str, torch.Tensor], sites: Sequence[Site] | None = None
              ) -> tuple[SiteRows, ...]:
    """SiteRows for every site (or `sites`) from a recording holding "<site>.rows" and "<site>.selected"."""
    out = []
    for site in sites if sites is not None else model.sites:
        pos = site_positions(model.config, site)
        rule = lazy_rule(model, site)
        out.append(SiteRows(site.name, site.kind, site.layer, site.replica, pos.level,
                            records[f"{site.name}.rows"].double().numpy(),
                            records[f"{site.name}.selected"].numpy().astype(np.int64),
                            pos.query_start, pos.key_start, rule, LAZY_ROWS[rule]))
    return tuple(out)


ATTENTION_PATTERNS = ("*.queries", "*.keys", "*.scores", "*.selected", "*.rows")


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
    for k in range(int(seeds)):
        records = record_forward(model, batch, seed + k, *ATTENTION_PATTERNS)
        for site in model.sites:
            exact = _exact_for_site(model, site, records)
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


__all__ = ["LAZY_ROWS", "LAZY_RULES", "LagProfile", "SitePositions", "SiteRows", "SparsityReport", "TopkAgreement",
           "distilled_spans", "exact_sparsity", "lag_profile", "lazy_rule", "record_forward", "replica_length",
           "row_entropy", "seasonal_periods", "site_positions", "site_rows", "sparsity_report", "spearman",
           "topk_agreement", "window_batch"]
