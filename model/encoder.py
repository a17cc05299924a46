"""Encoder: attention layers with self-attention distilling between them, and the replica stack."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import AttentionLayer
from .dropout import Dropout
from .hooks import HookPoint


def distilled_length(L: int, padding: int = 1) -> int:
    """MaxPool1d(kernel 3, stride 2, padding 1) after a Conv1d(k=3) with circular `padding`: the conv gives
    L + 2·padding − 2 steps, so ⌊(L − 1)/2⌋ + 1 for padding 1 and ⌊(L + 1)/2⌋ + 1 for TSL's padding 2."""
    return (L + 2 * padding - 3) // 2 + 1


class FeedForward(nn.Module):
    """Position-wise FFN as two 1×1 convolutions d_model → d_ff → d_model (the official parameters).

    A 1×1 convolution over time is a Linear on each position; computing it as one (same weights, viewed
    [out, in]) halves the FFN's forward+backward time on the CPU and skips two transposes.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float, activation: str):
        super().__init__()
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.dropout = Dropout(dropout)
        self.activation = F.gelu if activation == "gelu" else F.relu

    def inner(self, x: torch.Tensor) -> torch.Tensor:  # [B, L, d_model], before the last dropout
        y = self.dropout(self.activation(F.linear(x, self.conv1.weight.squeeze(-1), self.conv1.bias)))  # [B, L, d_ff]
        return F.linear(y, self.conv2.weight.squeeze(-1), self.conv2.bias)  # [B, L, d_model]

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, L, d_model]
        return self.dropout(self.inner(x))

    def residual(self, x: torch.Tensor) -> torch.Tensor:
        """x + FFN(x), the last dropout and the sum in one pass."""
        return self.dropout.add(x, self.inner(x))


class EncoderLayer(nn.Module):
    """Post-norm: x = LN(x + Drop(Attn(x))); out = LN(x + FFN(x)). Hook: out [B, L, d_model]."""

    def __init__(self, attention: AttentionLayer, d_model: int, d_ff: int, dropout: float, activation: str):
        super().__init__()
        self.attention = attention
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = Dropout(dropout)
        self.hook_out = HookPoint("out")

    def forward(self, x: torch.Tensor, **attention_args) -> torch.Tensor:
        return self.feed_forward(self.add_attention(x, self.attention(x, x, **attention_args)))

    def add_attention(self, x: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        return self.norm1(self.dropout.add(x, attended))

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.hook_out(self.norm2(self.ffn.residual(x)))


class Encoder(nn.Module):
    """One replica: attention layers, a distilling layer after each but the last, a closing LayerNorm (HF: none)."""

    def __init__(self, layers: list[EncoderLayer], distils: list[DistillingLayer] | None, d_model: int,
                 final_norm: bool = True):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.distils = nn.ModuleList(distils or [])
        self.norm = nn.LayerNorm(d_model) if final_norm else nn.Identity()
        self.hook_out = HookPoint("out")

    def finish(self, x: torch.Tensor) -> torch.Tensor:
        return self.hook_out(self.norm(x))

    def forward(self, x: torch.Tensor, layer_args) -> torch.Tensor:
        """x: [B, L, d_model]; layer_args(layer) gives each attention call its gate, mean and generator."""
        for i, layer in enumerate(self.layers):
            x = layer(x, **layer_args(layer.attention))
            if i < len(self.distils):
                x = self.distils[i](x)
        return self.finish(x)


class EncoderStack(nn.Module):
    """Replica r reads the last ⌊L / 2^r⌋ steps; the replicas' outputs are joined along time."""

    def __init__(self, replicas: list[Encoder]):
        super().__init__()
        self.replicas = nn.ModuleList(replicas)
        self.hook_out = HookPoint("out")

    @staticmethod
    def replica_input(x: torch.Tensor, r: int) -> torch.Tensor:
        return x[:, -(x.shape[1] // 2 ** r):]

    def forward(self, x: torch.Tensor, layer_args) -> torch.Tensor:
        outputs = [replica(self.replica_input(x, r), layer_args) for r, replica in enumerate(self.replicas)]
        return self.hook_out(torch.cat(outputs, dim=1))
