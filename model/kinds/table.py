"""Attention over a table of keys: the engine of every sparse kind (LogSparse, strided, fixed, window, block, LSH,
adaptive span, and the local half of compressed attention).

A kind says which keys each query reads as a `KeyTable`: `index[..., i, t]` is the t-th key query i reads and
`valid[..., i, t]` whether that slot counts (tables are padded to one width). Then

    context_i = Σ_t p_it · v_index[i,t],   p_i = softmax_t(q_i·k_index[i,t]/√D + log w_it) over the valid t

where w (optional, ≥ 0) is a soft mask (adaptive span; 1 elsewhere). Only the tabled pairs are ever scored: the cost
is O(L_Q · n · D) for a table n keys wide, against O(L_Q · L_K · D) for full attention. Keys are gathered a chunk of
queries at a time, so no [B, H, L_Q, n, D] tensor exists whole. A table may be shared by every batch element and head
([L_Q, n]), differ per head ([H, L_Q, n]) or per element and head ([B, H, L_Q, n], LSH's buckets).

`dense_pattern` turns a table back into the [.., L_Q, L_K] boolean pattern it allows (tests compare it with brute-force
masks built from each paper's definition; the Variants screen measures the attention mass inside it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

CHUNK_NUMBERS = 1 << 23  # gathered fp32 numbers per chunk (32 MB): bounds the memory of one chunk of keys


@dataclass(frozen=True)
class KeyTable:
    """Which keys each query reads. index: long [..., L_Q, n]; valid: bool, same shape; weight: None or float ≥ 0,
    same shape (a soft mask: the softmax is over w·exp(score)). Leading dims: none, [H] or [B, H]."""

    index: torch.Tensor
    valid: torch.Tensor
    weight: torch.Tensor | None = None

    @property
    def width(self) -> int:
        return self.index.shape[-1]

    def pairs(self) -> int:
        """Query–key pairs scored per (batch element, head): the valid slots (averaged when the table varies)."""
        v = self.valid.reshape(-1, *self.valid.shape[-2:])
        return int(round(float(v.sum()) / v.shape[0]))


def dedupe(table: KeyTable) -> KeyTable:
    """The same table with every repeated key of a row made invalid (a union of patterns counts a key once)."""
    order = table.index.masked_fill(~table.valid, -1)
    sorted_index, perm = order.sort(dim=-1)
    repeat = torch.zeros_like(table.valid)
    repeat[..., 1:] = (sorted_index[..., 1:] == sorted_index[..., :-1]) & (sorted_index[..., 1:] >= 0)
    keep = torch.ones_like(table.valid).scatter(-1, perm, ~repeat)
    return KeyTable(table.index, table.valid & keep, table.weight)


def table_from_mask(mask: torch.Tensor) -> KeyTable:
    """The narrowest table of a boolean pattern [..., L_Q, L_K] (every allowed key, in order)."""
    width = max(1, int(mask.sum(dim=-1).max()))
    keys = torch.arange(mask.shape[-1], device=mask.device).expand_as(mask)
    order = torch.where(mask, keys, keys + mask.shape[-1])  # allowed first, in key order
    index = order.sort(dim=-1).values[..., :width]
    valid = index < mask.shape[-1]
    return KeyTable(index.masked_fill(~valid, 0), valid)


def dense_pattern(table: KeyTable, L_K: int) -> torch.Tensor:
    """The [..., L_Q, L_K] boolean pattern a table allows."""
    out = torch.zeros(*table.index.shape[:-1], L_K + 1, dtype=torch.bool, device=table.index.device)
    out.scatter_(-1, table.index.masked_fill(~table.valid, L_K), True)  # invalid slots land in a spare column
    return out[..., :L_K]


def _expand(t: torch.Tensor, B: int, H: int) -> torch.Tensor:
    """A table part [L_Q, n], [H, L_Q, n] or [B, H, L_Q, n] as [B, H, L_Q, n] (a view)."""
    if t.dim() == 2:
        return t.expand(B, H, *t.shape)
    if t.dim() == 3:
        return t.expand(B, *t.shape)
    return t


def gather_rows(X: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """X [B, H, L, D] at index [B, H, c, n] → [B, H, c, n, D] (one index_select on the flattened tensor)."""
    B, H, L, D = X.shape
    offset = (torch.arange(B * H, device=X.device) * L).view(B, H, 1, 1)
    return X.reshape(B * H * L, D).index_select(0, (index + offset).reshape(-1)).view(*index.shape, D)


def table_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, table: KeyTable, *,
                    memory: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                    need_rows: bool = False) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """softmax over each query's tabled keys (and, when given, `memory` = (K_m [B, H, M, D], V_m, visible
    [L_Q, M] bool): extra keys scored beside them, compressed attention's summaries).

    Q: [B, H, L_Q, D]; K, V: [B, H, L_K, D] → (context [B, H, L_Q, D], rows or None, M [B, H, L_Q]). rows are
    [B, H, L_Q, L_K] (the weights on the original keys; with memory, [B, H, L_Q, L_K + M], the summaries' weights
    after the keys'). M is the sparsity measure on the rows the kind computes: max − mean of q·k/√D over the keys
    (and summaries) each query reads."""
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    scale = 1.0 / math.sqrt(D)
    index, valid = _expand(table.index, B, H), _expand(table.valid, B, H)
    weight = None if table.weight is None else _expand(table.weight, B, H)
    M = 0 if memory is None else memory[0].shape[2]
    n = index.shape[-1]
    chunk = max(1, CHUNK_NUMBERS // max(1, B * H * (n + M) * D))
    context = Q.new_empty(B, H, L_Q, V.shape[-1])
    sparsity = Q.new_empty(B, H, L_Q)
    rows = Q.new_zeros(B, H, L_Q, L_K + M) if need_rows else None
    for start in range(0, L_Q, chunk):
        stop = min(L_Q, start + chunk)
        idx = index[:, :, start:stop]  # [B, H, c, n]
        K_g = gather_rows(K, idx)  # [B, H, c, n, D]
        scores = (K_g @ Q[:, :, start:stop, :, None]).squeeze(-1) * scale  # [B, H, c, n]
        scores = scores.masked_fill(~valid[:, :, start:stop], float("-inf"))
        if memory is not None:
            K_m, V_m, visible = memory
            mem = (Q[:, :, start:stop] @ K_m.transpose(-2, -1)) * scale  # [B, H, c, M]
            mem = mem.masked_fill(~visible[start:stop], float("-inf"))
            scores = torch.cat([scores, mem], dim=-1)
        seen = torch.isfinite(scores)
        with torch.no_grad():
            sparsity[:, :, start:stop] = scores.amax(dim=-1) - torch.where(seen, scores, 0).sum(dim=-1) / seen.sum(
                dim=-1).clamp(min=1)
        if weight is None:
            p = torch.softmax(scores, dim=-1)
        else:  # w·exp(s) / Σ w·exp(s), by multiplying (a log of a zero weight would make its gradient NaN)
            w = weight[:, :, start:stop].to(scores.dtype)
            if memory is not None:
                w = torch.cat([w, w.new_ones(*w.shape[:-1], M)], dim=-1)
            e = torch.exp(scores - scores.amax(dim=-1, keepdim=True).detach()) * w
            p = e / e.sum(dim=-1, keepdim=True).clamp(min=torch.finfo(e.dtype).tiny)
        p_keys = p[..., :n]
        out = (p_keys.unsqueeze(-2) @ gather_rows(V, idx)).squeeze(-2)  # [B, H, c, D]
        if memory is not None:
            out = out + p[..., n:] @ memory[1]
        context[:, :, start:stop] = out
        if rows is not None:
            rows[:, :, start:stop, :L_K].scatter_add_(-1, idx, p_keys * valid[:, :, start:stop])
            if memory is not None:
                rows[:, :, start:stop, L_K:] = p[..., n:]
    return context, rows, sparsity


__all__ = ["CHUNK_NUMBERS", "KeyTable", "dedupe", "dense_pattern", "gather_rows", "table_attention",
           "table_from_mask"]
