"""Fixed sparse attention (Child et al. 2019, "Generating Long Sequences with Sparse Transformers", §4.2).

Blocks of l cells. A(1)_i = {j : ⌊j/l⌋ = ⌊i/l⌋} (the query's own block), A(2)_i = {j : j mod l ∈ {l − c, …, l − 1}}
(the last c cells of every block: summary cells that carry a block to the others). Every head reads the union;
causal sites only j ≤ i. O(l + c·L/l) keys per query. `block ≥ L` puts every key in the query's block.
"""
from __future__ import annotations

import math

import torch

from .table import KeyTable, dedupe


def default_block(L: int) -> int:
    return max(1, math.ceil(math.sqrt(L)))


def fixed_table(L: int, *, causal: bool, block: int | None = None, summary: int = 1, device=None) -> KeyTable:
    l = default_block(L) if block is None else block
    c = max(1, min(summary, l))
    i = torch.arange(L, device=device).unsqueeze(1)  # [L, 1]
    own = (i // l) * l + torch.arange(l, device=device).unsqueeze(0)  # [L, l]
    starts = torch.arange(0, L, l, device=device)  # every block
    cells = (starts.unsqueeze(1) + torch.arange(l - c, l, device=device).unsqueeze(0)).reshape(-1)  # summaries
    keys = torch.cat([own, cells.unsqueeze(0).expand(L, -1)], dim=1)
    valid = keys < L
    if causal:
        valid &= keys <= i
    return dedupe(KeyTable(keys.clamp(max=L - 1), valid))


__all__ = ["default_block", "fixed_table"]
