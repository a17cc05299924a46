"""One trained model, every attention kind: what each would forecast with the same weights, and what it keeps.

    compare_kinds(model, prepared, kinds=("prob", "full", "logsparse", …)) → Variants(table, heads, …)

For each kind the model's self-attention sites (encoder and decoder self) run with that kind, same weights, same
windows, same key-sample seed per batch (paired); cross-attention keeps the model's own (positional kinds cannot sit
there). Kinds with learned parts of their own run their parameter-free forms (model/attention/dispatch.py: adaptive at a
fixed span, compressed by the mean, LSH with the model's own keys); the model's own kind keeps its learned parts.

Per kind (one row of `table`):
- mse, delta_mse against the model's own attention: mean over windows with paired 95 % intervals (analysis.intervals)
  (analysis.intervals, blocks covering seq_len + pred_len input steps);
- mass_kept: the share of full attention's weight that falls inside the pairs the kind lets each query see, on the
  rows full attention computes with this model's weights (one pass with every self-attention site full; its queries
  and keys recorded, the rows scored a chunk of queries at a time, so no [L, L] table is ever held whole), averaged
  over queries, heads and self-attention sites, with an interval over windows. Full: 1. ProbSparse: its
  top-u queries by the exact M(q, K) keep their whole rows (u/L of the mass); lazy rows keep no pair exactly.
  Adaptive span: the soft mask's weight. Compressed: the pairs in the query's own block (its summaries of the other
  blocks are not pairs). LSH: the pairs in a query's bucket and chunk, hashed from the recorded queries and keys;
- topu_overlap: the same share on the rows of the u queries with the highest exact M(q, K) (log-sum-exp minus the
  mean of the scores: the queries ProbSparse aims to select): how much of the attention ProbSparse would keep the kind
  keeps;
- ms, sdpa_ms, peak_mib: one non-causal call at the model's encoder length (analysis.instruments.attention_cost).
`heads`: mass_kept per kind, site and head (the heatmap).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, key_generator, recording
from informer_lab.model.attention import LEARNED, POSITIONAL, SPARSE_KINDS, KeyTable, options_for, positional_table, sample_sizes
from informer_lab.model.attention.compressed import local_table
from informer_lab.model.attention.lsh import hash_vectors, lsh_table, random_rotations
from informer_lab.model.attention.table import dedupe

from informer_lab.analysis.instruments.attention_cost import peak_mibs, time_kinds
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.instruments.paired import paired_forecast, spread_windows

KINDS = ("prob", "full", *SPARSE_KINDS)
MAX_WINDOWS = 128
SELF_SITES = ("encoder", "decoder_self")


@dataclass(frozen=True, eq=False)
class Variants:
    """table: kind, label, own (the model's own attention), mse (+_lo/_hi), delta_mse (+_lo/_hi), mass_kept
    (+_lo/_hi), topu_overlap (+_lo/_hi), ms, sdpa_ms, peak_mib. heads: kind, site, head, mass_kept."""

    table: pd.DataFrame
    heads: pd.DataFrame
    windows: int
    total_windows: int
    own: str
    notes: tuple[str, ...]


def own_label(model: Informer) -> str:
    c = model.config
    return f"{c.encoder_attention} / {c.decoder_attention} / {c.cross_attention}"


def swap_for(kind: str) -> dict:
    """The per-call override that runs the self-attention sites with `kind` (cross-attention keeps its own)."""
    return {site: kind for site in SELF_SITES}


SCORE_NUMBERS = 1 << 24  # full-attention scores held at once (64 MB): queries per chunk


@torch.no_grad()
def _full_qk(model: Informer, batches, seed: int):
    """Yields per batch, per self-attention site: (queries, keys) [B, H, L, D] of a pass with every self-attention site
    full (each batch's key-sample seed). Rows are not recorded: at seq_len 5760 one window's rows are 530 MB a site;
    `kept_weights` scores them a chunk of queries at a time."""
    names = [s.name for s in model.sites if s.kind in SELF_SITES]
    device = next(model.parameters()).device
    for b, (batch, _) in enumerate(batches):
        with recording(*(f"{n}.{k}" for n in names for k in ("queries", "keys"))) as rec:
            model(batch.to(device), generator=key_generator(seed * 1_000_003 + b),
                  attention=swap_for("full"))
        yield {n: tuple(rec.records[f"{n}.{k}"].float().cpu().transpose(1, 2) for k in ("queries", "keys"))
               for n in names}


def kind_table(kind: str, Q: torch.Tensor, K: torch.Tensor, *, causal: bool, seed: int = 0,
               options: dict | None = None) -> KeyTable | None:
    """The pairs a kind reads at this site ([.., L, n] table; adaptive span's soft weights included); None for
    prob and full (ProbSparse keeps whole rows of its top-u queries; full keeps everything). LSH hashes the given
    queries and keys with rotations drawn from `seed` (a draw of the same law as the forward pass's, not the same
    draw: there the rotations follow the call's key samples in one generator stream); compressed attention's pairs
    are its own block (its summaries of the other blocks are not pairs)."""
    B, H, L, _ = Q.shape
    if kind in ("prob", "full"):
        return None
    if kind == "lsh":
        o = options_for("lsh", options)
        rotations = random_rotations(Q.shape[-1], int(o["buckets"]), int(o["rounds"]),
                                     torch.Generator().manual_seed(seed), Q.device)
        return dedupe(lsh_table(hash_vectors(Q, rotations, int(o["buckets"])),
                                hash_vectors(K, rotations, int(o["buckets"])),
                                chunk=int(o["chunk"]), causal=causal, shared=False))
    if kind not in POSITIONAL:
        raise ValueError(f"unknown attention kind {kind!r}")
    return _positional(kind, L, H, causal, tuple(sorted((options or {}).items())))


@functools.lru_cache(maxsize=32)
def _positional(kind: str, L: int, H: int, causal: bool, options: tuple) -> KeyTable:
    if kind == "compressed":
        return dedupe(local_table(L, causal=causal, block=int(options_for("compressed", dict(options))["block"])))
    return dedupe(positional_table(kind, L, H, causal=causal, options=dict(options)))


def kept_weights(kinds, Q: torch.Tensor, K: torch.Tensor, *, causal: bool, factor: int, seed: int = 0,
                 options: dict | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """({kind: [B, H, L] the weight of full attention's row i that falls on the pairs the kind reads}, exact M
    [B, H, L]) for queries and keys [B, H, L, D], the rows softmax(q·K/√D) (causal: over j ≤ i) computed a chunk of
    queries at a time. M(q_i, K) = log-sum-exp − mean of the scores over the keys query i may see. ProbSparse: 1 on
    the u rows of highest exact M, 0 elsewhere (lazy rows keep no pair exactly); full: 1."""
    B, H, L, D = Q.shape
    tables = {k: kind_table(k, Q, K, causal=causal, seed=seed, options=(options or {}).get(k)) for k in kinds}
    kept = {k: torch.zeros(B, H, L) for k in kinds}
    M = torch.empty(B, H, L)
    chunk = max(1, SCORE_NUMBERS // max(1, B * H * L))
    positions = torch.arange(L)
    for start in range(0, L, chunk):
        stop = min(L, start + chunk)
        scores = (Q[:, :, start:stop] @ K.transpose(-2, -1)) / math.sqrt(D)  # [B, H, c, L]
        seen = (positions.view(1, -1) <= positions[start:stop].view(-1, 1)) if causal else torch.ones(
            stop - start, L, dtype=torch.bool)
        scores = scores.masked_fill(~seen, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1)
        M[:, :, start:stop] = lse - torch.where(seen, scores, 0.0).sum(-1) / seen.sum(-1)
        rows = torch.exp(scores - lse.unsqueeze(-1))
        for k, table in tables.items():
            if table is None:
                continue
            index, valid = table.index[..., start:stop, :], table.valid[..., start:stop, :]
            weight = valid.to(rows.dtype) if table.weight is None else table.weight[..., start:stop, :] * valid
            kept[k][:, :, start:stop] = (torch.gather(rows, -1, index.expand(B, H, *index.shape[-2:]))
                                         * weight).sum(-1)
    u = sample_sizes(factor, L, L)[1]
    for k in kinds:
        if k == "full":
            kept[k].fill_(1.0)
        elif k == "prob":
            kept[k].scatter_(-1, M.topk(u, dim=-1).indices, 1.0)
    return kept, M


def compare_kinds(model: Informer, prepared: PreparedData, *, kinds=KINDS, split: str = "test", seed: int = 0,
                  max_windows: int = MAX_WINDOWS, batch_size: int = 32, cost: bool = True,
                  progress: Callable[[int, int], None] | None = None) -> Variants:
    """Every kind on the same windows and key samples (see the module docstring)."""
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    kinds = list(dict.fromkeys(kinds))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown attention kind {unknown[0]!r}; kinds: {', '.join(KINDS)}")
    c = model.config
    spread = spread_windows(prepared, split, max_windows, batch_size)
    batches, truth, span = spread.batches, spread.truth, spread.span
    steps, done = len(kinds) + 2 + (1 if cost else 0), 0

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    own_sq = ((paired_forecast(model, batches, seed) - truth) ** 2).mean(axis=(1, 2))  # [n]
    tick()
    site_causal = {s.name: s.kind == "decoder_self" for s in model.sites if s.kind in SELF_SITES}
    kept = {k: [] for k in kinds}  # per kind: [windows] mean kept weight over sites, heads and queries
    top_kept = {k: [] for k in kinds}  # the same on the top-u queries by exact M
    per_head = {k: {} for k in kinds}  # per kind and site: [windows, H]
    for part in _full_qk(model, batches, seed):
        site_kept, site_top = {k: [] for k in kinds}, {k: [] for k in kinds}
        for name, (Q, K) in part.items():
            weights, M = kept_weights(kinds, Q, K, causal=site_causal[name], factor=c.factor, seed=seed)
            top = M.topk(sample_sizes(c.factor, Q.shape[2], K.shape[2])[1], dim=-1).indices
            for kind, w in weights.items():  # w: [B, H, L]
                site_kept[kind].append(w.mean(dim=(1, 2)))
                site_top[kind].append(torch.gather(w, -1, top).mean(dim=(1, 2)))
                per_head[kind].setdefault(name, []).append(w.mean(dim=-1))  # [B, H]
        for kind in kinds:
            kept[kind].append(torch.stack(site_kept[kind]).mean(0))
            top_kept[kind].append(torch.stack(site_top[kind]).mean(0))
    tick()
    rows, head_rows = [], []
    for kind in kinds:
        sq = ((paired_forecast(model, batches, seed, attention=swap_for(kind)) - truth) ** 2).mean(axis=(1, 2))
        values = np.stack([sq, sq - own_sq, torch.cat(kept[kind]).numpy(), torch.cat(top_kept[kind]).numpy()],
                          axis=1)
        means = window_means(values, span=span, floor=[0, np.nan, 0, 0], ceiling=[np.nan, np.nan, 1, 1])
        est, lo, hi = means.estimate, means.lo, means.hi
        rows.append({"kind": kind, "own": kind == c.encoder_attention == c.decoder_attention,
                     "mse": est[0], "mse_lo": lo[0], "mse_hi": hi[0],
                     "delta_mse": est[1], "delta_mse_lo": lo[1], "delta_mse_hi": hi[1],
                     "mass_kept": est[2], "mass_kept_lo": lo[2], "mass_kept_hi": hi[2],
                     "topu_overlap": est[3], "topu_overlap_lo": lo[3], "topu_overlap_hi": hi[3],
                     "interval": means.reasons()[1]})
        for name, parts in per_head[kind].items():
            for h, value in enumerate(torch.cat(parts).mean(0).tolist()):
                head_rows.append({"kind": kind, "site": name, "head": h, "mass_kept": value})
        tick()
    table = pd.DataFrame(rows)
    if cost:
        timed = time_kinds(kinds, heads=c.n_heads, head_dim=c.head_dim, length=c.enc_len, rounds=3)
        table = table.merge(timed[["kind", "ms", "sdpa_ms", "ratio", "pairs_share"]], on="kind", how="left")
        table["peak_mib"] = peak_mibs(kinds, heads=c.n_heads, head_dim=c.head_dim, lengths=[c.enc_len])
        tick()
    notes = (spread.describe() + f"; key-sample seed {seed} per batch for every kind (paired)",
             f"the model's own attention: {own_label(model)}; each kind replaces the encoder and decoder "
             "self-attention, cross-attention keeps its own",
             "parameter-free forms: adaptive at a fixed span, compressed by the mean over each stride, LSH with the "
             "model's own keys",
             "mass_kept: full attention's weight (this model's rows, every self-attention site full) inside the pairs "
             "the kind reads; topu_overlap: the same on the top-u queries by exact M(q, K)",
             "ms / peak_mib: one non-causal call at the encoder's length, against SDPA timed in the same process")
    return Variants(table, pd.DataFrame(head_rows), len(spread.indices), spread.total, own_label(model), notes)


__all__ = ["KINDS", "LEARNED", "Variants", "compare_kinds", "kept_weights", "kind_table", "own_label", "swap_for"]
