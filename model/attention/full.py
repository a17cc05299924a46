"""Full attention (Vaswani et al. 2017), softmax(QKᵀ/√D)V, and the result every inner attention returns."""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

from ..dropout import dropout
from .probsparse_sample import KeySample


class AttentionResult(NamedTuple):
    context: torch.Tensor  # [B, H, L_Q, D] after the lazy fill
    rows: torch.Tensor | None  # [B, H, u, L_K] softmax rows of the computed queries (None: not asked for)
    selected: torch.Tensor | None  # [B, H, u] which queries the rows belong to (None: all, in order)
    scores: torch.Tensor | None  # [B, H, L_Q] sampled M̄ on the q·k/√D scale (ProbSparse only)
    sample: KeySample | None  # the key sample (ProbSparse only)

    @property
    def key_index(self) -> torch.Tensor | None:  # [L_Q, U]
        return None if self.sample is None else self.sample.index


def causal_mask(L_Q: int, L_K: int, device: torch.device) -> torch.Tensor:
    """True where key j lies in the future of query i (j > i). [L_Q, L_K]."""
    return torch.ones(L_Q, L_K, dtype=torch.bool, device=device).triu(1)


def full_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, causal: bool, dropout_p: float = 0.0,
                   need_rows: bool = False) -> AttentionResult:
    """softmax(QKᵀ/√D)V. SDPA when nobody records the rows; the explicit path (same maths) when they do, and
    for attention dropout on the CPU, where SDPA falls back to the same maths with a slow `bernoulli_`."""
    scale = 1.0 / math.sqrt(Q.shape[-1])
    if not need_rows and (dropout_p == 0.0 or Q.device.type != "cpu"):
        context = F.scaled_dot_product_attention(Q, K, V, dropout_p=dropout_p, is_causal=causal, scale=scale)
        return AttentionResult(context, None, None, None, None)
    scores = (Q @ K.transpose(-2, -1)) * scale  # [B, H, L_Q, L_K]
    if causal:
        scores = scores.masked_fill(causal_mask(Q.shape[2], K.shape[2], Q.device), float("-inf"))
    rows = torch.softmax(scores, dim=-1)
    context = dropout(rows, dropout_p, True) @ V if dropout_p > 0 else rows @ V
    return AttentionResult(context, rows, None, None, None)


