"""Adaptive attention span (Sukhbaatar et al. 2019, "Adaptive Attention Span in Transformers", §3.2).

Each head has a span z ∈ [0, S], learned. The soft mask m_z(x) = min[max[(R + z − x)/R, 0], 1] of the distance x
between query and key (1 within z, a linear ramp of width R, then 0) weights the softmax:
a_ij = m_z(i − j)·exp(s_ij) / Σ_k m_z(i − k)·exp(s_ik). Only keys within S + R are read: O(S + R) per query.
Causal as in the paper; non-causal sites use |i − j|. As a same-weights swap (no learned z), every head takes the
span given. `span ≥ L` with any ramp reads every key with weight 1: full attention.
"""
from __future__ import annotations

import torch

from .offsets import offsets_table
from .table import KeyTable


def soft_mask(distance: torch.Tensor, span: torch.Tensor, ramp: float) -> torch.Tensor:
    """m_z(x) for distances x [...] and spans z [H] → [H, ...]."""
    z = span.reshape(-1, *([1] * distance.dim()))
    return ((ramp + z - distance.to(z.dtype)) / ramp).clamp(0.0, 1.0)


def adaptive_table(L: int, span: torch.Tensor, *, causal: bool, max_span: int, ramp: float = 8.0,
                   device=None) -> KeyTable:
    """[H, L, n]: the band of distances ≤ max_span + ramp, weighted by each head's soft mask."""
    reach = int(min(L - 1, max_span + ramp))
    base = offsets_table(L, range(reach + 1), causal=causal, device=device)
    distance = (torch.arange(L, device=device).unsqueeze(1) - base.index).abs()  # [L, n]
    weight = soft_mask(distance, span.clamp(0, max_span), ramp) * base.valid  # [H, L, n]
    H = weight.shape[0]
    return KeyTable(base.index.expand(H, *base.index.shape), (weight > 0) & base.valid, weight)


__all__ = ["adaptive_table", "soft_mask"]
