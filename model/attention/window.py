"""Longformer's attention (Beltagy et al. 2020, "Longformer: The Long-Document Transformer", §3.1): a sliding
window, optionally dilated, plus global positions.

Sliding window: query i reads i + d·k for |k| ≤ w (w cells each side; causal: k ≤ 0, the w cells back), d the
dilation (1: a plain window). Global attention: a global position reads every key and every query reads it
(symmetric; causal: only keys j ≤ i either way). Positions may be negative (−1 is the last). O(w + |G|) keys per
non-global query. `window ≥ L − 1` with dilation 1 reads every key.
"""
from __future__ import annotations

import torch

from .table import KeyTable, dedupe


def global_positions(L: int, positions) -> list[int]:
    return sorted({int(p) % L for p in (positions or ()) if -L <= int(p) < L})


def window_table(L: int, *, causal: bool, window: int = 8, dilation: int = 1, globals_=(), device=None) -> KeyTable:
    """The window and the global keys every query reads: [L, 2w + 1 + |G|] (causal: w + 1 + |G|). The global
    queries' own rows (every key) are not in the table: `window_attention` computes them as full rows, so the table
    stays narrow however long L is."""
    ks = torch.arange(-window, 1 if causal else window + 1, device=device) * dilation  # [n]
    i = torch.arange(L, device=device).unsqueeze(1)
    keys = i + ks.unsqueeze(0)  # [L, n]
    valid = (keys >= 0) & (keys < L)
    G = global_positions(L, globals_)
    if G:
        g = torch.tensor(G, device=device)
        keys = torch.cat([keys, g.unsqueeze(0).expand(L, -1)], dim=1)
        reach = (g.unsqueeze(0) <= i) if causal else torch.ones(L, len(G), dtype=torch.bool, device=device)
        valid = torch.cat([valid, reach], dim=1)
    return dedupe(KeyTable(keys.clamp(0, L - 1), valid))


def window_pattern(L: int, *, causal: bool, window: int = 8, dilation: int = 1, globals_=(), device=None):
    """The whole [L, L] boolean pattern, global queries' rows included (tests, the mass a kind keeps)."""
    from .table import dense_pattern

    mask = dense_pattern(window_table(L, causal=causal, window=window, dilation=dilation, globals_=globals_,
                                      device=device), L)
    for q in global_positions(L, globals_):
        mask[q] = torch.arange(L, device=device) <= q if causal else True
    return mask


__all__ = ["global_positions", "window_pattern", "window_table"]
