"""Blockwise self-attention (Qiu et al. 2019, "Blockwise Self-Attention for Long Document Understanding",
BlockBERT §3).

The sequence is split into n blocks; head h lets block b attend to one block, π_h(b). Different heads use
different permutations: here π_h(b) = (b + h) mod n (head 0: the block-diagonal, each block to itself; head 1: to the
next block; …), so across heads the blocks reach each other. Keys per query: L/n. Causal sites (not in the paper,
which is bidirectional): head h's block b attends to block b − (h mod n) when that block is not in the future, its
own block otherwise, and only keys j ≤ i. `blocks = 1` is full attention.
"""
from __future__ import annotations

import math

import torch

from .table import KeyTable


def block_table(L: int, H: int, *, causal: bool, blocks: int = 2, device=None) -> KeyTable:
    """[H, L, ⌈L/n⌉]: each head's keys per query."""
    n = max(1, min(blocks, L))
    size = math.ceil(L / n)
    i = torch.arange(L, device=device)
    b = i // size  # [L]
    h = torch.arange(H, device=device).unsqueeze(1)  # [H, 1]
    if causal:
        target = b.unsqueeze(0) - (h % n)
        target = torch.where(target >= 0, target, b.unsqueeze(0))
    else:
        target = (b.unsqueeze(0) + h) % n  # [H, L]
    keys = target.unsqueeze(-1) * size + torch.arange(size, device=device)  # [H, L, size]
    valid = keys < L
    if causal:
        valid &= keys <= i.view(1, L, 1)
    return KeyTable(keys.clamp(max=L - 1), valid)


__all__ = ["block_table"]
