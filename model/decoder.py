"""Decoder: causal self-attention, cross-attention to the encoder, FFN; each post-norm."""
from __future__ import annotations

import torch
from torch import nn

from .attention import AttentionLayer
from .dropout import Dropout
from .encoder import FeedForward
from .hooks import HookPoint


class DecoderLayer(nn.Module):
    def __init__(self, self_attention: AttentionLayer, cross_attention: AttentionLayer, d_model: int, d_ff: int,
                 dropout: float, activation: str):
        super().__init__()
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = Dropout(dropout)
        self.hook_out = HookPoint("out")

    def forward(self, x: torch.Tensor, memory: torch.Tensor, layer_args, keep_last: int | None = None) -> torch.Tensor:
        """x: [B, L_dec, d_model], memory: [B, L_enc', d_model] → [B, L_dec, d_model] (keep_last: only the last
        keep_last rows go on after the self-attention, for a caller that reads no others; see Decoder)."""
        x = self.add_self_attention(x, self.self_attention(x, x, **layer_args(self.self_attention)))
        if keep_last is not None and keep_last < x.shape[1]:
            x = x[:, -keep_last:].contiguous()  # [B, keep_last, d_model]
        x = self.add_cross_attention(x, self.cross_attention(x, memory, **layer_args(self.cross_attention)))
        return self.feed_forward(x)

    def add_self_attention(self, x: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        return self.norm1(self.dropout.add(x, attended))

    def add_cross_attention(self, x: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        return self.norm2(self.dropout.add(x, attended))

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.hook_out(self.norm3(self.ffn.residual(x)))


class Decoder(nn.Module):
    def __init__(self, layers: list[DecoderLayer], d_model: int, final_norm: bool = True):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(d_model) if final_norm else nn.Identity()  # HF's decoder has no closing norm

    def forward(self, x: torch.Tensor, memory: torch.Tensor, layer_args, keep_last: int | None = None) -> torch.Tensor:
        """x: [B, L_dec, d_model] → [B, L_dec or keep_last, d_model].

        keep_last: the caller reads only the last keep_last rows and the last layer's cross-attention computes each
        query row alone (full attention, no head/time mixing): after the last self-attention everything is
        position-wise, so the other rows are dropped there (the label rows' cross-attention and FFN: 2/3 of that
        work at 48 + 24). The forecast rows are the same function of the input.
        """
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, layer_args, keep_last if i == last else None)
        return self.norm(x)
