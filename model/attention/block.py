"""Blockwise self-attention (Qiu et al. 2019, "Blockwise Self-Attention for Long Document Understanding",
BlockBERT §3).

The sequence is split into n blocks of ⌈L/n⌉ positions; head h lets block b attend to one block, π_h(b). Different
heads use different permutations: here π_h(b) = (b + h) mod n (head 0: the block-diagonal, each block to itself;
head 1: to the next block; …), so across heads the blocks reach each other. Keys per query: L/n. Causal sites (not in
the paper, which is bidirectional): head h's block b attends to block b − (h mod n) when that block is not in the
future, its own block otherwise, and only keys j ≤ i. `blocks = 1` is full attention.

When ⌈L/n⌉-sized blocks leave fewer than n of them (L = 9, n = 4: three blocks of 3), the permutation runs over the
blocks that exist, so that no query is pointed at an empty block and left without keys.

Each (head, block) pair is a dense [⌈L/n⌉ × ⌈L/n⌉] attention, so the forward pass runs as scaled-dot-product
attention over the pairs (`block_attention`): no key table, and the flash kernel's memory. The table
(`block_table`) gives the same pattern, for the screens that compare patterns.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .table import CHUNK_NUMBERS, KeyTable, softmax_and_sparsity


def block_targets(L: int, H: int, *, causal: bool, blocks: int, device=None) -> tuple[int, torch.Tensor]:
    """(block size, [H, n_blocks] the key block each head's query block reads)."""
    size = math.ceil(L / max(1, min(blocks, L)))
    n = math.ceil(L / size)  # the blocks that exist
    b = torch.arange(n, device=device).unsqueeze(0)  # [1, n]
    h = torch.arange(H, device=device).unsqueeze(1)  # [H, 1]
    if causal:
        target = b - (h % n)
        return size, torch.where(target >= 0, target, b.expand(H, n))
    return size, (b + h) % n


def block_table(L: int, H: int, *, causal: bool, blocks: int = 2, device=None) -> KeyTable:
    """[H, L, ⌈L/n⌉]: each head's keys per query."""
    size, target = block_targets(L, H, causal=causal, blocks=blocks, device=device)
    i = torch.arange(L, device=device)
    keys = target[:, i // size].unsqueeze(-1) * size + torch.arange(size, device=device)  # [H, L, size]
    valid = keys < L
    if causal:
        valid &= keys <= i.view(1, L, 1)
    return KeyTable(keys.clamp(max=L - 1), valid)


def block_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, causal: bool, blocks: int,
                    need_rows: bool = False, need_scores: bool = False):
    """Blockwise attention as dense attention per (head, block) pair. Q, K, V: [B, H, L, D] →
    (context [B, H, L, D], rows [B, H, L, L] or None, M [B, H, L] or None: max − mean of q·k/√D over the keys read).

    The pairs are batched: queries [B, H·n, s, D] against their key blocks. A pair needs a mask only when its keys
    are its own block read causally (is_causal) or the last, short block (a key-validity mask); the other pairs run
    unmasked, so SDPA keeps its fused kernel."""
    B, H, L, D = Q.shape
    size, target = block_targets(L, H, causal=causal, blocks=blocks, device=Q.device)
    n = target.shape[1]
    pad = n * size - L

    def pairs(X: torch.Tensor, at: torch.Tensor | None = None) -> torch.Tensor:  # [B, H·n, s, D]
        X = F.pad(X, (0, 0, 0, pad)).view(B, H, n, size, X.shape[-1])
        if at is not None:
            X = torch.gather(X, 2, at.view(1, H, n, 1, 1).expand(B, H, n, size, X.shape[-1]))
        return X.reshape(B, H * n, size, X.shape[-1])

    Qp, Kp, Vp = pairs(Q), pairs(K, target), pairs(V, target)
    own = (target == torch.arange(n, device=Q.device)).flatten() if causal else None  # causal within the block
    short = (target == n - 1).flatten() & (pad > 0)  # the last block's padded keys must be masked
    key_ok = torch.arange(size, device=Q.device) < size - pad  # [s] the last block's real keys
    if need_rows or need_scores:
        context, rows, M = _explicit(Qp, Kp, Vp, own, short, key_ok, target, need_rows)
    else:
        context, rows, M = Qp.new_empty(Qp.shape[:-1] + (V.shape[-1],)), None, None
        groups = [(own, dict(is_causal=True)), (~own, {})] if causal else \
            [(short, dict(attn_mask=key_ok.view(1, 1, 1, size))), (~short, {})]
        for chosen, how in groups:
            count = int(chosen.sum())
            if count == len(chosen):  # every pair alike: no copies
                context = F.scaled_dot_product_attention(Qp, Kp, Vp, **how)
            elif count:
                at = chosen.nonzero().flatten()
                context[:, at] = F.scaled_dot_product_attention(Qp[:, at], Kp[:, at], Vp[:, at], **how)
    context = context.reshape(B, H, n * size, -1)[:, :, :L]  # (CUDA's SDPA may return it strided)
    if rows is not None:
        rows = rows.view(B, H, n * size, n * size)[:, :, :L, :L]
    if M is not None:
        M = M.view(B, H, n * size)[:, :, :L]
    return context, rows, M


def _explicit(Qp, Kp, Vp, own, short, key_ok, target, need_rows: bool):
    """The same attention with its weights written out (recording, M), a bounded slice of pairs at a time."""
    B, P, size, D = Qp.shape
    n = target.shape[1]
    scale = 1.0 / math.sqrt(D)
    context = Qp.new_empty(B, P, size, Vp.shape[-1])
    M = Qp.new_empty(B, P, size)
    rows = Qp.new_zeros(B, P, size, n * size) if need_rows else None
    tril = torch.ones(size, size, dtype=torch.bool, device=Qp.device).tril()
    step = max(1, CHUNK_NUMBERS // max(1, B * size * size))
    for a in range(0, P, step):
        z = min(P, a + step)
        allowed = torch.ones(z - a, size, size, dtype=torch.bool, device=Qp.device)
        if own is not None:
            allowed = torch.where(own[a:z].view(-1, 1, 1), tril, allowed)
        allowed = allowed & torch.where(short[a:z].view(-1, 1, 1), key_ok.view(1, 1, size), True)
        s = ((Qp[:, a:z] @ Kp[:, a:z].transpose(-2, -1)) * scale).masked_fill(~allowed, float("-inf"))
        p, M[:, a:z] = softmax_and_sparsity(s, None)  # M over the finite (allowed) scores, as the table engine's
        context[:, a:z] = p @ Vp[:, a:z]
        if rows is not None:
            first = target.flatten()[a:z].view(1, -1, 1, 1) * size
            at = (first + torch.arange(size, device=Qp.device)).expand(B, z - a, size, size)
            rows[:, a:z].scatter_(-1, at, p)
    return context, rows, M


__all__ = ["block_attention", "block_table", "block_targets"]
