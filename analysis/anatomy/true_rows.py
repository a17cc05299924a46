"""The attention rows a site really used, dense per head, and the token map of its output positions.

Rollout and flow must use what the model computed (DESIGN §7), not what a public `output_attention` returns:

- a selected (top-u) query of ProbSparse: its softmax row, as recorded;
- an unselected ("lazy") query in the encoder or cross-attention: mean(V), i.e. the uniform row 1/L_K;
- a lazy query of the causal decoder: the prefix mean (`decoder_lazy="cummean"`: 1/(i+1) on keys j ≤ i) or the prefix
  *sum* (`"cumsum"`, the official code: weight 1 on keys j ≤ i). A sum is not a distribution: rollout normalises it
  and `scale` keeps its row sum (i + 1), so that a screen can say how much larger than a mean that context is;
- full attention and the other efficient kinds: the recorded rows (zero outside the keys a pattern lets a query read).

Informer2020 returns 1/L_V over every key for a lazy row, future keys included; the lab does not.

`mix=True` (Informer2020's decoder self-attention, every TSL site) merges [B, H, L, D] as [B, L, H·D]: output
position q then reads the contexts of H (head, position) slots, divmod(q·H + m, L) for m < H, not its own row of
every head. `token_rows` follows that map, so the token graph is the one the model computed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from informer_lab.model import Informer, Site

ROW_PATTERNS = ("*.rows", "*.selected")


@dataclass(frozen=True, eq=False)
class TrueRows:
    """One site's rows for one batch: rows [B, H, L_Q, L_K] float32 (each row sums to 1), scale [B, H, L_Q] (the row sum
    before normalising: 1 but for the lazy rows of a "cumsum" decoder), lazy [B, H, L_Q] (True for a lazy query),
    mix (the layer merges heads with time)."""

    site: str
    rows: np.ndarray
    scale: np.ndarray
    lazy: np.ndarray
    mix: bool


def lazy_rows(L_Q: int, L_K: int, causal: bool, decoder_lazy: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows [L_Q, L_K] normalised, scale [L_Q]) of a ProbSparse lazy query: uniform over all keys, or over the
    prefix j ≤ i when causal (scale i + 1 for the official running sum, 1 for the running mean)."""
    if not causal:
        return np.full((L_Q, L_K), 1.0 / L_K), np.ones(L_Q)
    if L_Q != L_K:
        raise ValueError(f"a causal site needs L_Q == L_K, got {L_Q} and {L_K}")
    prefix = np.tril(np.ones((L_Q, L_K)))
    counts = prefix.sum(axis=1)
    scale = counts if decoder_lazy == "cumsum" else np.ones(L_Q)
    return prefix / counts[:, None], scale


def site_true_rows(model: Informer, site: Site, records: dict[str, torch.Tensor]) -> TrueRows:
    """The rows `site` used in a recording holding "<site>.rows" and "<site>.selected" (`ROW_PATTERNS`)."""
    layer = model.attention_layer(site)
    # float32, as the model computed them: at seq_len 1440 a site's dense rows are [B, 4, 1440, 1440] (33 MB a window)
    computed = records[f"{site.name}.rows"].float().numpy()  # [B, H, u, L_K]
    selected = records[f"{site.name}.selected"].numpy().astype(np.int64)  # [B, H', u]
    B, H, u, L_K = computed.shape
    if selected.shape[1] != H:  # TSL's one-head union: every window computed the whole batch's rows
        selected = np.broadcast_to(selected, (B, H, selected.shape[2]))
    if layer.kind == "prob":
        L_Q = records.get(f"{site.name}.scores", None)
        L_Q = int(L_Q.shape[-1]) if L_Q is not None else _query_length(model, site, L_K)
        base, base_scale = lazy_rows(L_Q, L_K, layer.causal, layer.decoder_lazy)
        rows = np.empty((B, H, L_Q, L_K), dtype=np.float32)
        rows[...] = base
        scale = np.broadcast_to(base_scale, (B, H, L_Q)).copy()
        lazy = np.ones((B, H, L_Q), dtype=bool)
    else:
        L_Q = u
        rows = np.zeros((B, H, L_Q, L_K), dtype=np.float32)
        scale, lazy = np.ones((B, H, L_Q)), np.zeros((B, H, L_Q), dtype=bool)
    b, h = np.indices(selected.shape[:2])
    rows[b[..., None], h[..., None], selected] = computed
    scale[b[..., None], h[..., None], selected] = 1.0
    lazy[b[..., None], h[..., None], selected] = False
    sums = rows.sum(axis=-1, keepdims=True, dtype=np.float64)
    off = np.abs(sums - 1.0) > 1e-6  # softmax and lazy rows already sum to 1: only the others are divided
    if off.any():
        np.divide(rows, np.where(sums > 0, sums, 1.0).astype(np.float32), out=rows, where=off)
    return TrueRows(site.name, rows, scale, lazy, bool(layer.mix))


def _query_length(model: Informer, site: Site, L_K: int) -> int:
    c = model.config
    if site.kind == "encoder" or site.kind == "decoder_self":
        return L_K
    return c.pred_len if c.embedding == "lags" else c.dec_len  # the lags embedding decodes the forecast steps only


def mix_slots(L: int, H: int) -> tuple[np.ndarray, np.ndarray]:
    """(head [L, H], position [L, H]) of the H context slots output position q reads when [B, H, L, D] is viewed as
    [B, L, H·D]: slot m of q is divmod(q·H + m, L)."""
    flat = np.arange(L)[:, None] * H + np.arange(H)[None, :]
    return flat // L, flat % L


def token_rows(true: TrueRows, window: int, head: int | None = None) -> np.ndarray:
    """[L_Q, L_K] the token map of one window's output positions: the mean of the heads' rows (head None) or one
    head's, following the mix map where the layer mixes. A position that reads no slot of the chosen head (mix) gets a
    zero row (its residual carries it)."""
    rows = true.rows[window]  # [H, L_Q, L_K]
    H, L_Q, L_K = rows.shape
    if not true.mix:
        return rows.mean(axis=0, dtype=np.float64) if head is None else rows[head].astype(np.float64)
    heads, positions = mix_slots(L_Q, H)  # [L_Q, H]
    slot_rows = rows[heads, positions].astype(np.float64)  # [L_Q, H, L_K]
    if head is None:
        return slot_rows.mean(axis=1)
    chosen = heads == head  # [L_Q, H]
    counts = chosen.sum(axis=1, keepdims=True)
    return np.divide((slot_rows * chosen[..., None]).sum(axis=1), counts, out=np.zeros((L_Q, L_K)),
                     where=counts > 0)


def all_true_rows(model: Informer, records: dict[str, torch.Tensor]) -> dict[str, TrueRows]:
    """TrueRows of every site of the model, by site name."""
    return {site.name: site_true_rows(model, site, records) for site in model.sites}


__all__ = ["ROW_PATTERNS", "TrueRows", "all_true_rows", "lazy_rows", "mix_slots", "site_true_rows", "token_rows"]
