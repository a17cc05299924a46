"""The "lags" input embedding and per-window scaling: how Hugging Face transformers' Informer reads its inputs.

Where the lab differs from HF: HF forecasts every input column; here the c_out targets may be fewer than the inputs
(features MS), the targets being the window's last columns, as with RevIN.

Chosen by `InformerConfig(embedding="lags", lags=..., instance_scaling=...)`; the paper's embedding
(`embedding.DataEmbedding`) stays the default. With it, the window x_enc [B, seq_len, C] holds
m = max(lags) steps of history and then the encoder's seq_len − m positions (HF's `context_length`); the decoder
reads the pred_len forecast steps only, x_dec[:, label_len:] being HF's `future_values` (the label_len rows before
them repeat the window's last steps and are not read).

Step t of the sequence s = [x_enc; x_dec] (scaled: (s − loc)/scale) is embedded from the feature vector

    [ s[t − lags[0], c], …, s[t − lags[-1], c]  for each channel c ] ++ [ log(1 + |loc_c|) ] ++ [ log scale_c ]
    ++ [ the step's time features ]

(C·len(lags) + 2C + n_marks numbers, HF's `feature_size`) by a Linear without bias, plus HF's sinusoid (sines in the
first half of the vector, cosines in the second; the decoder's positions continue after the encoder's), then a
LayerNorm. loc and scale come from the encoder's positions of each window (HF's scaler): "mean" → loc 0,
scale = max(mean |x|, 1e-10); "std" → loc = mean, scale = √(variance + 1e-5); "none" → 0 and 1.

Where the lab differs from HF a second time: for the input channels in `level_free` the model reads no level. Their
values are scaled like every channel's, but their log(1 + |loc|) feature is 0, and in the decoder their forecast
steps repeat the window's last value (HF's zero placeholders, scaled, would hand over −loc/scale). With "std"
scaling the forecast is then unchanged by adding a constant to such a channel.

And a third time, with placeholders="last" (the lab's lags models; HF's and the paper's are "zero"): the decoder's
forecast steps, unknown when it runs, repeat the window's last value in every channel. A zero placeholder becomes
−loc/scale once the window is scaled, which tells the model the window's level in units of its own spread: the value
grows without bound as a window's spread shrinks, and a level the test split drifts to is read far outside the range
training saw. With "last" whatever x_dec holds at those steps is not read.
"""
from __future__ import annotations

import torch
from torch import nn

from .dropout import Dropout


def instance_scale(context: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(loc, scale), each [B, 1, C], of the encoder's positions context [B, L, C] (every value observed)."""
    if kind == "mean":
        scale = context.abs().sum(dim=1, keepdim=True) / context.shape[1]
        return torch.zeros_like(scale), scale.clamp(min=1e-10)
    if kind == "std":
        loc = context.mean(dim=1, keepdim=True)
        variance = ((context - loc) ** 2).sum(dim=1, keepdim=True) / context.shape[1]
        return loc, torch.sqrt(variance + 1e-5)
    ones = context.new_ones(context.shape[0], 1, context.shape[2])
    return torch.zeros_like(ones), ones


def hf_sinusoid_table(length: int, d_model: int) -> torch.Tensor:
    """HF's sinusoid [length, d_model]: angle(t, j) = t / 10000^(2⌊j/2⌋/d); sin of the even j in the first
    ⌈d/2⌉ columns, cos of the odd j after them (not interleaved). Computed in float64, as HF does."""
    t = torch.arange(length, dtype=torch.float64).unsqueeze(1)
    j = torch.arange(d_model, dtype=torch.float64)
    angle = t / torch.pow(torch.tensor(10000.0, dtype=torch.float64), 2 * torch.div(j, 2, rounding_mode="floor")
                          / d_model)
    return torch.cat([torch.sin(angle[:, 0::2]), torch.cos(angle[:, 1::2])], dim=1).to(torch.float32)


class LagEmbedding(nn.Module):
    """x: [B, L, C] (encoder: the whole window; decoder: x_dec), marks: [B, L, n_marks], history (decoder only): the
    window x_enc → [B, L_out, d_model] (encoder: L − max(lags) positions; decoder: its last `positions` steps)."""

    def __init__(self, c_in: int, n_marks: int, d_model: int, dropout: float, lags: tuple[int, ...],
                 scaling: str, first_position: int, positions: int, level_free: tuple[int, ...] = (),
                 placeholders: str = "zero"):
        super().__init__()
        self.lags, self.scaling, self.first_position, self.positions = tuple(lags), scaling, first_position, positions
        self.level_free, self.placeholders = tuple(level_free), placeholders
        mask = torch.zeros(c_in, dtype=torch.bool)
        mask[list(self.level_free)] = True
        self.register_buffer("level_free_mask", mask, persistent=False)
        repeated = torch.ones(c_in, dtype=torch.bool) if placeholders == "last" else mask.clone()
        self.register_buffer("repeated_mask", repeated, persistent=False)  # channels whose forecast steps repeat
        self.value_projection = nn.Linear(c_in * len(self.lags) + 2 * c_in + n_marks, d_model, bias=False)
        self.norm = nn.LayerNorm(d_model)
        self.register_buffer("position", hf_sinusoid_table(first_position + positions, d_model), persistent=False)
        self.dropout = Dropout(dropout)

    @property
    def history(self) -> int:
        return max(self.lags)

    def forward(self, x: torch.Tensor, marks: torch.Tensor, history: torch.Tensor | None = None) -> torch.Tensor:
        m = self.history
        window = x if history is None else history  # x_enc: m history steps, then the encoder's positions
        loc, scale = instance_scale(window[:, m:], self.scaling)  # [B, 1, C] each
        if history is None:  # encoder: positions m … L − 1 of x
            sequence, first, time = x, m, marks[:, m:]
        else:  # decoder: the forecast steps after the window
            x, time = x[:, x.shape[1] - self.positions:], marks[:, marks.shape[1] - self.positions:]
            if self.placeholders == "last" or self.level_free:  # unknown steps: the last known value
                x = torch.where(self.repeated_mask, history[:, -1:].expand_as(x), x)
            sequence, first = torch.cat([history, x], dim=1), history.shape[1]
        sequence = (sequence - loc) / scale
        steps = sequence.shape[1] - first
        lagged = torch.stack([sequence[:, first - lag: first - lag + steps] for lag in self.lags], dim=-1)
        B, C = x.shape[0], x.shape[2]
        level = loc.abs().log1p()
        if self.level_free:
            level = level.masked_fill(self.level_free_mask, 0.0)
        static = torch.cat([level, scale.log()], dim=-1).expand(B, steps, 2 * C)  # [B, steps, 2C]
        features = torch.cat([lagged.reshape(B, steps, C * len(self.lags)), static, time], dim=-1)
        start = self.first_position
        embedded = self.value_projection(features) + self.position[start:start + steps]
        return self.dropout(self.norm(embedded))


def rescale_forecast(forecast: torch.Tensor, x_enc: torch.Tensor, history: int, scaling: str) -> torch.Tensor:
    """Map the model's scaled forecast back: loc + scale·y per window. forecast: [n·B, pred_len, c_out] (n variants,
    variant-major), x_enc: [B, seq_len, C], the c_out targets its last columns."""
    if scaling == "none":
        return forecast
    loc, scale = instance_scale(x_enc[:, history:, x_enc.shape[2] - forecast.shape[2]:], scaling)
    n = forecast.shape[0] // x_enc.shape[0]
    if n != 1:
        loc, scale = loc.repeat(n, 1, 1), scale.repeat(n, 1, 1)
    return forecast * scale + loc


__all__ = ["LagEmbedding", "hf_sinusoid_table", "instance_scale", "rescale_forecast"]
