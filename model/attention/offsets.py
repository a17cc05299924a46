"""Patterns that are sets of offsets: query i reads keys i − d for each offset d (LogSparse, strided, window, adaptive
span). Causal sites take d ≥ 0 only; non-causal sites read both sides, i − d and i + d."""
from __future__ import annotations

import torch

from .table import KeyTable, dedupe


def offsets_table(L: int, offsets, *, causal: bool, device=None) -> KeyTable:
    """Keys i − d for every offset d of `offsets` (non-negative; causal: only backwards; else both ways), within
    [0, L). A table [L, n], duplicates made invalid."""
    d = torch.as_tensor(sorted({int(x) for x in offsets}), dtype=torch.long, device=device)
    if d.numel() == 0 or int(d.min()) < 0:
        raise ValueError(f"offsets must be non-negative and not empty, got {offsets}")
    signed = d if causal else torch.cat([d, -d[d > 0]])
    i = torch.arange(L, device=device).unsqueeze(1)  # [L, 1]
    keys = i - signed.unsqueeze(0)  # [L, n]
    valid = (keys >= 0) & (keys < L)
    return dedupe(KeyTable(keys.clamp(0, L - 1), valid))


__all__ = ["offsets_table"]
