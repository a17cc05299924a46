"""Attribution patching (AtP; Nanda 2023, Kramár et al. 2024) checked against the lab's exact activation patching.

The patch and its metric are those of `analysis.instruments.patching`: head h of site s takes clean window A's context
(after the lazy fill, where a head mask acts) in a run of corrupted window B, and the metric is the restored share
pooled over the horizon,

    m(f) = Σ_{t,c} (f − f_B)·(f_A − f_B) / Σ_{t,c} (f_A − f_B)²          (0: B's forecast, 1: A's, along A − B),

linear in the forecast f. AtP estimates every patch at once from one forward and one backward pass of B:

    m(patch h) ≈ Σ_{q,d} (z_A − z_B)[q, h, d] · ∂m/∂z[q, h, d] at B,

per head and per (head, query position). Exact patching runs B once per head (batched variants). The estimate is
exact where the forecast is linear in the patched context (the last decoder layer's heads of a model without norms
and activations after them: tested); it errs where a patch moves a softmax downstream (a decoder self-attention head
reaches the cross-attention's queries), most where that softmax saturates, as Kramár et al. report.

AtP*'s QK fix corrects the estimate of a patch of a query or key node by recomputing the receiving softmax. The lab
patches head outputs (contexts), not queries or keys, so the fix has no node to apply to here; its other fix
(GradDrop) is not implemented. Exact patching stays the reference: the heads where the two disagree beyond the
interval are named, with Benjamini–Hochberg across the heads.

Pairs. `pairs` evenly spread windows A_i of the split, each with B_i the window half the split later (wrapping): A and
B far apart, consecutive pairs one stride apart; intervals over pairs with the lab's window-means method, the pairs'
A windows one stride apart (`data_span`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer, key_generator, patching, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.discoveries import Q, benjamini_hochberg
from informer_lab.analysis.heads.mask_scoring import default_max_rows
from informer_lab.analysis.instruments.patching import patched_heads
from informer_lab.analysis.intervals import mean_interval, window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.windows import WindowDataset, collate


@dataclass(frozen=True, eq=False)
class PairSet:
    """A and B windows of a split (A[i] patched into B[i]); stride: the spacing of consecutive A's; span: pairs whose
    A windows share rows (the intervals' dependence)."""

    split: str
    clean: np.ndarray
    corrupt: np.ndarray
    stride: int
    span: int


def pair_windows(prepared: PreparedData, split: str, pairs: int) -> PairSet:
    n = len(WindowDataset(prepared, split))
    if n < 2:
        raise ValueError(f"the {split} split has {n} window(s): patching needs two")
    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, got {pairs}")
    count = min(int(pairs), n)
    stride = max(1, n // count)
    clean = (np.arange(count) * stride) % n
    corrupt = (clean + n // 2) % n
    corrupt = np.where(corrupt == clean, (clean + 1) % n, corrupt)
    return PairSet(split, clean, corrupt, stride, data_span(prepared, split, stride))


def independent_pairs(prepared: PreparedData, split: str) -> int:
    """How many pairs (A = w, B = w + n//2, as analysis.circuits.paths pairs them) fit with their A windows one
    seq_len + pred_len apart or more, so that they are independent stretches and an interval exists (4 to 32)."""
    n = len(WindowDataset(prepared, split))
    return max(4, min(32, (n - n // 2) // (prepared.spec.seq_len + prepared.spec.pred_len)))


def _batch(prepared: PreparedData, split: str, windows) -> Batch:
    dataset = WindowDataset(prepared, split)
    return collate([dataset[int(w)] for w in windows])[0]


def restored_metric(f: torch.Tensor, f_A: torch.Tensor, f_B: torch.Tensor) -> torch.Tensor:
    """m per pair [K] from forecasts [K, T, C] (module docstring)."""
    gap = f_A - f_B
    return ((f - f_B) * gap).sum(dim=(1, 2)) / (gap * gap).sum(dim=(1, 2)).clamp_min(1e-300)


def atp_estimates(model: Informer, clean: Batch, corrupt: Batch, seed: int = 0
                  ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(per head [K, n_sites, H], per site [K, L_Q, H] per query position) AtP estimates of m for K pairs."""
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode")
    device = next(model.parameters()).device
    names = [f"{site.name}.context" for site in model.sites]
    with torch.no_grad(), recording(*names) as rec_A:
        f_A = model(clean.to(device), generator=key_generator(seed))
    with torch.enable_grad(), recording(*names, keep_graph=True) as live:  # B's one pass: values and gradients
        f = model(corrupt.to(device), generator=key_generator(seed))
        restored_metric(f.double(), f_A.double(), f.detach().double()).sum().backward()
    per_head = np.zeros((clean.x_enc.shape[0], len(names), model.config.n_heads))
    positions = {}
    for i, (site, name) in enumerate(zip(model.sites, names)):
        delta = (rec_A.records[name] - live.records[name].detach()).double()
        contribution = (delta * live.records[name].grad.double()).sum(dim=-1)  # [K, L_Q, H]
        positions[site.name] = contribution.cpu().numpy()
        per_head[:, i] = positions[site.name].sum(axis=1)
    return per_head, positions


@torch.no_grad()
def exact_patches(model: Informer, clean: Batch, corrupt: Batch, seed: int = 0) -> np.ndarray:
    """[K, n_sites, H]: m of every head's exact patch, per pair (analysis.instruments.patching's batched variants)."""
    device = next(model.parameters()).device
    names = [f"{site.name}.context" for site in model.sites]
    with recording(*names) as rec:
        f_A = model(clean.to(device), generator=key_generator(seed))
    f_B = model(corrupt.to(device), generator=key_generator(seed))
    H, S, K = model.config.n_heads, len(names), clean.x_enc.shape[0]
    gates = model.full_gates(S * H)
    for k in range(S * H):
        gates[k, k // H, k % H] = 0.0
    contexts = tuple(rec.records[name] for name in names)
    out = patched_heads(model, corrupt, contexts, gates, seed=seed).view(S * H, K, *f_B.shape[1:])
    metric = torch.stack([restored_metric(out[k].double(), f_A.double(), f_B.double()) for k in range(S * H)])
    return metric.T.reshape(K, S, H).cpu().numpy()


@torch.no_grad()
def exact_position_patches(model: Informer, clean: Batch, corrupt: Batch, seed: int = 0,
                           sites: list[str] | None = None, max_rows: int | None = None) -> dict[str, np.ndarray]:
    """{site: [K, L_Q, H]}: m of every exact (head, query position) patch, per pair: B's run with A's context of head
    h at query q alone (one patched context per variant, variants and pairs batched up to `max_rows` rows a call, each
    call with the key sample of `seed`: the same sample as B's own run, whose other positions and sites are kept).
    The reference AtP's per-position estimates are judged against: Σ L_Q·H forward rows per pair."""
    device = next(model.parameters()).device
    names = [site.name for site in model.sites if sites is None or site.name in sites]
    K = clean.x_enc.shape[0]
    with recording(*(f"{n}.context" for n in names)) as rec_A:
        f_A = model(clean.to(device), generator=key_generator(seed)).double()
    with recording(*(f"{n}.context" for n in names)) as rec_B:
        f_B = model(corrupt.to(device), generator=key_generator(seed)).double()
    per_call = max(1, (max_rows or default_max_rows(model)) // K)
    out = {}
    for name in names:
        c_A, c_B = rec_A.records[f"{name}.context"], rec_B.records[f"{name}.context"]  # [K, L_Q, H, D]
        _, L, H, _ = c_B.shape
        variants = [(q, h) for q in range(L) for h in range(H)]
        values = np.zeros((K, L, H))
        for start in range(0, len(variants), per_call):
            chunk = variants[start:start + per_call]
            patched = c_B.repeat(len(chunk), 1, 1, 1)  # variant-major: rows v·K … v·K + K − 1
            for v, (q, h) in enumerate(chunk):
                patched[v * K:(v + 1) * K, q, h] = c_A[:, q, h]
            tiled = Batch(*(t.repeat(len(chunk), *[1] * (t.dim() - 1))
                            for t in (corrupt.x_enc, corrupt.mark_enc, corrupt.x_dec, corrupt.mark_dec)))
            with patching({f"{name}.context": patched}):
                f = model(tiled.to(device), generator=key_generator(seed)).double()
            m = restored_metric(f, f_A.repeat(len(chunk), 1, 1), f_B.repeat(len(chunk), 1, 1)).view(len(chunk), K)
            for v, (q, h) in enumerate(chunk):
                values[:, q, h] = m[v].cpu().numpy()
        out[name] = values
    return out


@dataclass(frozen=True, eq=False)
class AtPResult:
    """AtP against exact patching over pairs of windows.

    table: pair, clean, corrupt, site, head, atp, exact (m of each head's patch, per pair);
    positions: pair, site, head, position, atp (per query position);
    heads: per head the mean over pairs of atp and exact, their difference with its interval, p, and `disagree`
           (Benjamini–Hochberg at q across the heads), `disagree_raw` (p < q);
    rho: the mean over pairs of the per-pair Spearman ρ between AtP and exact across the heads, with its interval;
    atp_seconds, exact_seconds: the two methods' wall time on these pairs."""

    pairs: PairSet
    table: pd.DataFrame
    positions: pd.DataFrame
    heads: pd.DataFrame
    rho: object
    atp_seconds: float
    exact_seconds: float


def atp_vs_exact(model: Informer, prepared: PreparedData, split: str = "test", *, pairs: int = 64, seed: int = 0,
                 batch_size: int = 16, q: float = Q) -> AtPResult:
    from scipy.stats import spearmanr

    chosen = pair_windows(prepared, split, pairs)
    atp, exact, positions = [], [], []
    atp_seconds = exact_seconds = 0.0
    for start in range(0, len(chosen.clean), batch_size):
        A = _batch(prepared, split, chosen.clean[start:start + batch_size])
        B = _batch(prepared, split, chosen.corrupt[start:start + batch_size])
        t0 = time.perf_counter()
        head_values, position_values = atp_estimates(model, A, B, seed)
        t1 = time.perf_counter()
        exact.append(exact_patches(model, A, B, seed))
        exact_seconds += time.perf_counter() - t1
        atp_seconds += t1 - t0
        atp.append(head_values)
        positions.append(position_values)
    atp_all, exact_all = np.concatenate(atp), np.concatenate(exact)  # [K, S, H]
    K, S, H = atp_all.shape
    sites = [site.name for site in model.sites]
    table = pd.DataFrame({"pair": np.repeat(np.arange(K), S * H), "clean": np.repeat(chosen.clean, S * H),
                          "corrupt": np.repeat(chosen.corrupt, S * H), "site": np.tile(np.repeat(sites, H), K),
                          "head": np.tile(np.arange(H), K * S), "atp": atp_all.reshape(-1),
                          "exact": exact_all.reshape(-1)})
    rows = []
    for s, site in enumerate(sites):
        values = np.concatenate([p[site] for p in positions])  # [K, L_Q, H]
        k, position, h = np.indices(values.shape)
        rows.append(pd.DataFrame({"pair": k.reshape(-1), "site": site, "head": h.reshape(-1),
                                  "position": position.reshape(-1), "atp": values.reshape(-1)}))
    difference = (atp_all - exact_all).reshape(K, S * H)
    m = window_means(difference, span=chosen.span)
    p = m.p_values()
    heads = pd.DataFrame({"site": np.repeat(sites, H), "head": np.tile(np.arange(H), S),
                          "atp": atp_all.reshape(K, -1).mean(axis=0), "exact": exact_all.reshape(K, -1).mean(axis=0),
                          "difference": m.estimate, "difference_low": m.lo, "difference_high": m.hi, "p": p,
                          "disagree": benjamini_hochberg(p, q), "disagree_raw": np.isfinite(p) & (p < q),
                          "reason": m.reasons()})
    per_pair = np.array([spearmanr(a.reshape(-1), e.reshape(-1)).statistic
                         if np.ptp(a) > 0 and np.ptp(e) > 0 else np.nan for a, e in zip(atp_all, exact_all)])
    rho = mean_interval(per_pair[np.isfinite(per_pair)], span=chosen.span)
    return AtPResult(chosen, table, pd.concat(rows, ignore_index=True), heads, rho, atp_seconds, exact_seconds)


__all__ = ["AtPResult", "PairSet", "atp_estimates", "atp_vs_exact", "exact_patches", "exact_position_patches",
           "independent_pairs", "pair_windows", "restored_metric"]
