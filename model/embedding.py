"""Input embedding: value (circular Conv1d) + sinusoidal position + time features ("timeF")."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .distilling import circular_unfold, conv_taps
from .dropout import Dropout


def sinusoid_table(length: int, d_model: int) -> torch.Tensor:
    """PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i+1] = cos(...). [length, d_model]."""
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model)
    table[:, 0::2] = torch.sin(position * div_term)
    table[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]
    return table


class DataEmbedding(nn.Module):
    """x: [B, L, c_in], marks: [B, L, n_marks] → [B, L, d_model]."""

    def __init__(self, c_in: int, n_marks: int, d_model: int, dropout: float, max_len: int, mark_bias: bool = True,
                 value_bias: bool = True):
        super().__init__()
        # kernel 3 with circular padding 1 keeps the length for every torch version (cf. DESIGN: issue #130)
        self.value_embedding = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode="circular",
                                         bias=value_bias)  # TSL's TokenEmbedding: no bias
        nn.init.kaiming_normal_(self.value_embedding.weight, mode="fan_in", nonlinearity="leaky_relu")
        self.mark_embedding = nn.Linear(n_marks, d_model, bias=mark_bias)
        self.register_buffer("position", sinusoid_table(max_len, d_model), persistent=False)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, marks: torch.Tensor) -> torch.Tensor:
        """The value convolution and the time-feature Linear as one GEMM: [the 3 circular taps of x, marks]
        [B, L, 3·c_in + n_marks] × [their weights] + both biases, then the position; [B, L, d_model] contiguous."""
        taps = circular_unfold(x, 3, 1)  # [B, L, 3·c_in]
        weight = torch.cat([conv_taps(self.value_embedding.weight), self.mark_embedding.weight], dim=1)
        biases = [b for b in (self.value_embedding.bias, self.mark_embedding.bias) if b is not None]
        bias = None if not biases else biases[0] if len(biases) == 1 else biases[0] + biases[1]
        embedded = F.linear(torch.cat([taps, marks.to(taps.dtype)], dim=-1), weight, bias)  # [B, L, d_model]
        return self.dropout(embedded.add_(self.position[: x.shape[1]]))
