"""Reversible instance normalisation (RevIN; Kim et al., ICLR 2022): each window is standardised by its own
statistics before the model reads it, and the forecast is mapped back by the same statistics.

For one window x_enc [seq_len, C] and channel c:

    μ_c = mean_t x_enc[t, c],   σ_c = √(var_t x_enc[t, c] + ε)            (population variance, ε = 1e-5)
    normalise:    x̂ = γ_c · (x − μ_c) / σ_c + β_c                          (γ, β learnt, one pair a channel)
    denormalise:  y = (ŷ − β_c) / (γ_c + ε²) · σ_c + μ_c

The encoder reads x̂_enc; the decoder reads the label_len known rows of x_dec normalised the same way, then pred_len
zeros (the window's own mean while β = 0; without RevIN the zeros are the train split's mean). Targets are the last c_out
inputs (`analysis.data.column_layout`), so the forecast's channel k is denormalised with input channel
C − c_out + k. A series whose level leaves the train split's range (a trend) is then read at the level of its
own window: the global scaler alone maps it outside every value the model saw.

Unlike the authors' code, μ and σ are not detached from the graph: the forecast depends on every input through
them, and gradients (integrated gradients' completeness, saliency) must say so.
"""
from __future__ import annotations

import torch
from torch import nn

EPS = 1e-5


class RevIN(nn.Module):
    """statistics(x_enc) → (μ, σ) [B, 1, C]; normalise(x, μ, σ) → [B, L, C]; denormalise(y, μ, σ) → [n·B, P, c_out]
    for y stacked variant-major over n variants of the B windows."""

    def __init__(self, channels: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(channels))  # γ
        self.bias = nn.Parameter(torch.zeros(channels))  # β

    def statistics(self, x_enc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean = x_enc.mean(dim=1, keepdim=True)
        variance = x_enc.var(dim=1, keepdim=True, unbiased=False)
        return mean, torch.sqrt(variance + self.eps)

    def normalise(self, x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        return (x - mean) / std * self.weight + self.bias

    def denormalise(self, y: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
        k = y.shape[-1]  # c_out: the last k input channels
        mean, std = mean[..., -k:], std[..., -k:]
        n = y.shape[0] // mean.shape[0]
        if n != 1:
            mean, std = mean.repeat(n, 1, 1), std.repeat(n, 1, 1)
        return (y - self.bias[-k:]) / (self.weight[-k:] + self.eps ** 2) * std + mean


__all__ = ["RevIN"]
