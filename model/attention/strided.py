"""Strided sparse attention (Child et al. 2019, "Generating Long Sequences with Sparse Transformers", §4.2).

Two connectivity sets with stride l ≈ √L: A(1)_i = {t, t+1, …, i} with t = max(0, i − l) (the previous l cells),
and A(2)_i = {j : (i − j) mod l = 0} (every l-th cell back). The paper splits them across heads or layers, or merges
them; here every head reads their union (the "merged" head): O(l + L/l) = O(√L) keys per query.

Causal as in the paper; at non-causal sites both sets are read on both sides. `stride ≥ L` reads every key.
"""
from __future__ import annotations

import math

from .offsets import offsets_table
from .table import KeyTable


def default_stride(L: int) -> int:
    return max(1, math.ceil(math.sqrt(L)))


def strided_offsets(L: int, stride: int) -> list[int]:
    local = range(0, min(stride, L - 1) + 1)  # A(1): i − l … i (l + 1 cells with the query itself)
    every = range(stride, L, stride)  # A(2): every l-th cell back
    return sorted(set(local) | set(every))


def strided_table(L: int, *, causal: bool, stride: int | None = None, device=None) -> KeyTable:
    return offsets_table(L, strided_offsets(L, default_stride(L) if stride is None else stride), causal=causal,
                         device=device)


__all__ = ["default_stride", "strided_offsets", "strided_table"]
