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
import threading
from collections import OrderedDict
from dataclasses import dataclass

import torch
import torch.nn.functional as F

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


@dataclass(frozen=True)
class ChunkPlan:
    """How a table shared by the batch runs: queries in chunks of c, each chunk against the union of the keys its
    queries read (padded to one width u), `local` where each tabled key sits in its chunk's union."""

    c: int
    union: torch.Tensor  # [G, n_chunks, u] keys
    local: torch.Tensor  # [G, n_chunks, c, n] position of each tabled key in its chunk's union
    valid: torch.Tensor  # [G, n_chunks, c, n] the table's validity (padded queries: False)
    allowed: torch.Tensor  # [G, n_chunks, c, u] which union keys each query reads (padded queries read slot 0)


PLAN_BYTES = 256 << 20  # the plan cache's bound: least recently used plans go first past it
_PLANS: OrderedDict = OrderedDict()
_PLANS_LOCK = threading.Lock()  # sessions of the app share it


def _plan(table: KeyTable, L_K: int, chunk: int | None) -> ChunkPlan:
    """The plan of a table (cached by its content: positional tables repeat every call)."""
    index = table.index if table.index.dim() == 3 else table.index.unsqueeze(0)  # [G, L_Q, n]
    valid = table.valid if table.valid.dim() == 3 else table.valid.unsqueeze(0)
    key = (tuple(index.shape), str(index.device), L_K, chunk, hash(index.cpu().numpy().tobytes()),
           hash(valid.cpu().numpy().tobytes()))
    with _PLANS_LOCK:
        if key in _PLANS:
            _PLANS.move_to_end(key)
            return _PLANS[key]
    G, L_Q, n = index.shape
    best = None
    for c in ([chunk] if chunk else [8, 16, 32, 64, 128]):
        c = max(1, min(c, L_Q))
        union, local = _unions(index, valid, L_K, c)
        cost = union.shape[-1] * (1 + 16 / c)  # keys scored per query, small chunks' GEMMs counted dearer
        if best is None or cost < best[0]:
            best = (cost, c, union, local)
    _, c, union, local = best
    pad = union.shape[1] * c - L_Q
    valid_c = F.pad(valid, (0, 0, 0, pad)).view(G, -1, c, n)
    u = union.shape[-1]
    allowed = torch.zeros(G, union.shape[1], c, u + 1, dtype=torch.bool, device=index.device)
    allowed.scatter_(-1, local.masked_fill(~valid_c, u), True)
    allowed = allowed[..., :u].clone()
    allowed[..., 0] |= ~allowed.any(dim=-1)  # a padded query reads one key (its row is dropped)
    plan = ChunkPlan(c, union, local, valid_c, allowed)
    with _PLANS_LOCK:
        _PLANS[key] = plan
        while len(_PLANS) > 1 and sum(map(_plan_bytes, _PLANS.values())) > PLAN_BYTES:
            _PLANS.popitem(last=False)
    return plan


def _plan_bytes(plan: ChunkPlan) -> int:
    return sum(t.numel() * t.element_size() for t in (plan.union, plan.local, plan.valid, plan.allowed))


def _unions(index: torch.Tensor, valid: torch.Tensor, L_K: int, c: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per group and chunk of c queries: the keys read ([G, n_chunks, u], padded with the chunk's first key) and the
    position of each tabled key in its chunk's union ([G, n_chunks, c, n])."""
    G, L_Q, n = index.shape
    chunks = -(-L_Q // c)
    idx = F.pad(index.masked_fill(~valid, L_K), (0, 0, 0, chunks * c - L_Q), value=L_K).view(G, chunks, c * n)
    seen = torch.zeros(G, chunks, L_K + 1, dtype=torch.bool, device=index.device)
    seen = seen.scatter_(-1, idx, True)[..., :L_K]
    u = max(1, int(seen.sum(dim=-1).max()))
    keys = torch.arange(L_K, device=index.device)
    order = torch.where(seen, keys, keys + L_K).sort(dim=-1).values[..., :u]  # read keys first, in order
    union = torch.where(order < L_K, order, order[..., :1] % L_K)
    position = torch.zeros(G, chunks, L_K + 1, dtype=torch.long, device=index.device)
    position.scatter_(-1, order.clamp(max=L_K), torch.arange(u, device=index.device).expand(G, chunks, u))
    local = torch.gather(position, -1, idx).view(G, chunks, c, n)
    return union, local


def table_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, table: KeyTable, *,
                    memory: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                    need_rows: bool = False, need_scores: bool = False,
                    chunk: int | None = None) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """softmax over each query's tabled keys (and, when given, `memory` = (K_m [B, H, M, D], V_m, visible
    [L_Q, M] bool): extra keys scored beside them, compressed attention's summaries).

    Q: [B, H, L_Q, D]; K, V: [B, H, L_K, D] → (context [B, H, L_Q, D], rows or None, M [B, H, L_Q] or None). rows are
    [B, H, L_Q, L_K] (the weights on the original keys; with memory, [B, H, L_Q, L_K + M], the summaries' weights
    after the keys'). M is the sparsity measure on the rows the kind computes: max − mean of q·k/√D over the keys
    (and summaries) each query reads.

    A table shared by the batch ([L_Q, n], or [H, L_Q, n] per head) runs its queries in chunks, each chunk as one
    GEMM against the union of the keys its queries read, masked to each query's own (`ChunkPlan`, cached per
    table): neighbouring queries of a window, block or stride pattern read nearly the same keys, so the union is
    little wider than a row and the work is batched matrix products. A table per batch element ([B, H, L_Q, n],
    LSH's) gathers each query's keys."""
    if table.index.dim() == 4:
        return _gathered(Q, K, V, table, memory, need_rows, need_scores)
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    scale = 1.0 / math.sqrt(D)
    plan = _plan(table, L_K, chunk)
    G, n_chunks, u = plan.union.shape
    c = plan.c
    M = 0 if memory is None else memory[0].shape[2]
    weight = None
    if table.weight is not None:  # a learned soft mask (adaptive span): placed into the plan each call
        w = table.weight if table.weight.dim() == 3 else table.weight.unsqueeze(0)
        w = F.pad(w, (0, 0, 0, n_chunks * c - L_Q)).view(G, n_chunks, c, -1) * plan.valid
        weight = torch.zeros(G, n_chunks, c, u + 1, dtype=Q.dtype, device=Q.device).scatter_add(
            -1, plan.local.masked_fill(~plan.valid, u), w.to(Q.dtype))[..., :u]
    Qc = F.pad(Q, (0, 0, 0, n_chunks * c - L_Q)).view(B, H, n_chunks, c, D)
    step = max(1, CHUNK_NUMBERS // max(1, B * H * c * (u + M + D)))  # chunks per pass, bounding memory
    context = Q.new_empty(B, H, n_chunks, c, V.shape[-1])
    sparsity = Q.new_empty(B, H, n_chunks, c)
    rows = Q.new_zeros(B, H, n_chunks, c, L_K + M) if need_rows else None
    for a in range(0, n_chunks, step):
        z = min(n_chunks, a + step)
        union = plan.union[:, a:z]  # [G, g, u]
        if G == 1:
            K_u = K.index_select(2, union.reshape(-1)).view(B, H, z - a, u, D)
            V_u = V.index_select(2, union.reshape(-1)).view(B, H, z - a, u, -1)
        else:
            at = union.reshape(1, G, -1, 1)
            K_u = torch.gather(K, 2, at.expand(B, G, at.shape[2], D)).view(B, H, z - a, u, D)
            V_u = torch.gather(V, 2, at.expand(B, G, at.shape[2], V.shape[-1])).view(B, H, z - a, u, -1)
        scores = (Qc[:, :, a:z] @ K_u.transpose(-2, -1)) * scale  # [B, H, g, c, u]
        scores = scores.masked_fill(~plan.allowed[:, a:z], float("-inf"))
        w = None if weight is None else weight[:, a:z].expand(B, H, -1, -1, -1)
        if memory is not None:
            K_m, V_m, visible = memory
            vis = F.pad(visible, (0, 0, 0, n_chunks * c - L_Q)).view(n_chunks, c, M)[a:z]
            mem = ((Qc[:, :, a:z].reshape(B, H, -1, D) @ K_m.transpose(-2, -1)) * scale).view(B, H, z - a, c, M)
            scores = torch.cat([scores, mem.masked_fill(~vis, float("-inf"))], dim=-1)
            if w is not None:
                w = torch.cat([w, w.new_ones(*w.shape[:-1], M)], dim=-1)
        p, m = softmax_and_sparsity(scores, w, need_scores)
        if need_scores:
            sparsity[:, :, a:z] = m
        out = p[..., :u] @ V_u
        if memory is not None:
            out = out + (p[..., u:].reshape(B, H, -1, M) @ memory[1]).view_as(out)
        context[:, :, a:z] = out
        if rows is not None:
            at = union.view(1, G, z - a, 1, u).expand(B, H, z - a, c, u)
            rows[:, :, a:z].scatter_add_(-1, at, p[..., :u])  # a padded slot repeats a key with weight 0
            if memory is not None:
                rows[:, :, a:z, :, L_K:] = p[..., u:]
    L = n_chunks * c
    context = context.view(B, H, L, -1)[:, :, :L_Q]
    sparsity = sparsity.view(B, H, L)[:, :, :L_Q] if need_scores else None
    if rows is not None:
        rows = rows.view(B, H, L, L_K + M)[:, :, :L_Q]
    return context, rows, sparsity


def softmax_and_sparsity(scores: torch.Tensor, weight: torch.Tensor | None,
             need_scores: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(softmax over the last axis — w·exp(s)/Σ w·exp(s) with a soft weight, multiplied so a zero weight has a
    gradient —, and M = max − mean of the finite scores, without gradient, when asked for)."""
    sparsity = None
    if need_scores:
        seen = torch.isfinite(scores)
        with torch.no_grad():
            sparsity = scores.amax(dim=-1) - torch.where(seen, scores, 0).sum(dim=-1) / seen.sum(dim=-1).clamp(min=1)
    if weight is None:
        return torch.softmax(scores, dim=-1), sparsity
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True).detach()) * weight
    return e / e.sum(dim=-1, keepdim=True).clamp(min=torch.finfo(e.dtype).tiny), sparsity


def _gathered(Q, K, V, table: KeyTable, memory, need_rows: bool, need_scores: bool):
    """A table per batch element and head ([B, H, L_Q, n], LSH's): each query's keys gathered, a chunk at a time."""
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    scale = 1.0 / math.sqrt(D)
    index, valid = table.index, table.valid
    weight = table.weight
    M = 0 if memory is None else memory[0].shape[2]
    n = index.shape[-1]
    chunk = max(1, CHUNK_NUMBERS // max(1, B * H * (n + M) * D))
    context = Q.new_empty(B, H, L_Q, V.shape[-1])
    sparsity = Q.new_empty(B, H, L_Q)
    rows = Q.new_zeros(B, H, L_Q, L_K + M) if need_rows else None
    for start in range(0, L_Q, chunk):
        stop = min(L_Q, start + chunk)
        idx = index[:, :, start:stop]  # [B, H, c, n]
        scores = (gather_rows(K, idx) @ Q[:, :, start:stop, :, None]).squeeze(-1) * scale  # [B, H, c, n]
        scores = scores.masked_fill(~valid[:, :, start:stop], float("-inf"))
        w = None if weight is None else weight[:, :, start:stop].to(scores.dtype)
        if memory is not None:
            K_m, V_m, visible = memory
            mem = ((Q[:, :, start:stop] @ K_m.transpose(-2, -1)) * scale).masked_fill(~visible[start:stop],
                                                                                       float("-inf"))
            scores = torch.cat([scores, mem], dim=-1)
            if w is not None:
                w = torch.cat([w, w.new_ones(*w.shape[:-1], M)], dim=-1)
        p, m = softmax_and_sparsity(scores, w, need_scores)
        if need_scores:
            sparsity[:, :, start:stop] = m
        out = (p[..., :n].unsqueeze(-2) @ gather_rows(V, idx)).squeeze(-2)
        if memory is not None:
            out = out + p[..., n:] @ memory[1]
        context[:, :, start:stop] = out
        if rows is not None:
            rows[:, :, start:stop, :L_K].scatter_add_(-1, idx, p[..., :n] * valid[:, :, start:stop])
            if memory is not None:
                rows[:, :, start:stop, L_K:] = p[..., n:]
    return context, rows, sparsity if need_scores else None


__all__ = ["CHUNK_NUMBERS", "KeyTable", "dedupe", "dense_pattern", "gather_rows", "softmax_and_sparsity",
           "table_attention", "table_from_mask"]
