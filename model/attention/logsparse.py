"""LogSparse self-attention (Li et al. 2019, "Enhancing the Locality and Breaking the Memory Bottleneck of
Transformer on Time Series Forecasting", §3.2, Fig. 3).

LogSparse: cell l attends to itself and to the cells at exponential steps back, I_l = {l − 2^⌊log2 l⌋, …, l − 2^1,
l − 2^0, l}: O(log L) keys per cell, so a stack of O(log L) layers still connects every pair. Local attention +
LogSparse (Fig. 3c): cell l reads its left window of `local` cells densely and, beyond the window, resumes the
exponential steps from the window's edge: offsets {0, 1, …, local} ∪ {local + 2^k : k ≥ 0}.

The paper's attention is causal (a forecasting decoder); at non-causal sites (the Informer's encoder) the same
offsets are read on both sides. `local ≥ L − 1` reads every key: full attention.
"""
from __future__ import annotations

import math

from .offsets import offsets_table
from .table import KeyTable


def logsparse_offsets(L: int, local: int) -> list[int]:
    """The backward steps a cell reads: 0 … local, then local + 2^k while it stays under L."""
    offsets = list(range(0, min(local, L - 1) + 1))
    step = 1
    while local + step < L:
        offsets.append(local + step)
        step *= 2
    return offsets


def default_local(L: int) -> int:
    """The paper's window: O(log2 L) cells (⌈log2 L⌉)."""
    return max(1, math.ceil(math.log2(max(2, L))))


def logsparse_table(L: int, *, causal: bool, local: int | None = None, device=None) -> KeyTable:
    return offsets_table(L, logsparse_offsets(L, default_local(L) if local is None else local), causal=causal,
                         device=device)


__all__ = ["default_local", "logsparse_offsets", "logsparse_table"]
