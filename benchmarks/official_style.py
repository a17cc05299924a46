"""A trainable re-implementation of the official Informer2020 `Informer`, operation for operation.

This is the baseline that `benchmarks/train_speed.py` times our model against. It is *not* the official
code (github zhouhaoyi/Informer2020); it is rewritten here so that it performs the same tensor
operations in the same order, with the same module tree, so that a training step costs what an
official training step costs on the same machine:

* the same parameter and buffer names and shapes as the official `Informer.state_dict()` (embed='timeF'),
  so `analysis.checkpoints.official` imports its weights;
* ProbSparse attention the official way: the key tensor expanded to [B, H, L_Q, L_K, D], one key
  sample per query drawn with `torch.randint` from torch's GLOBAL RNG, a fancy-index gather, the
  sparsity measure divided by L_K, an unsorted top-u, lazy rows from mean(V) (encoder) or cumsum(V)
  (decoder), a boolean ProbMask, and the context written back by an indexed assignment. Its dropout
  module exists but is never applied (as in the official code);
* `mix` only in the decoder self-attention; full cross-attention.

`tests/benchmarks/test_official_style.py` checks that its eval forward equals the independent functional
rewrite `tests.analysis.checkpoints.official_reference.official_forward` seed for seed, and that our model importing
its weights with the official quirks reproduces it.

Shapes use the paper's names: B batch, L length, H heads, D = d_model / H per head.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FREQ_MARKS = {"h": 4, "t": 5, "s": 6, "m": 1, "a": 1, "w": 2, "d": 3, "b": 3}  # time features per freq


# --------------------------------------------------------------------------------------------
# Embedding
# --------------------------------------------------------------------------------------------
class TokenEmbedding(nn.Module):
    """Values → d_model by a circular Conv1d over time (kernel 3). [B, L, c_in] → [B, L, d_model]."""

    def __init__(self, c_in: int, d_model: int):
        super().__init__()
        # Informer2020 keeps Conv1d's default bias (its checkpoints hold tokenConv.bias).
        self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode="circular")
        nn.init.kaiming_normal_(self.tokenConv.weight, mode="fan_in", nonlinearity="leaky_relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class PositionalEmbedding(nn.Module):
    """The fixed sinusoid, kept as a 5000-step buffer `pe` [1, max_len, d_model] (saved with the weights)."""

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        t = torch.arange(max_len, dtype=torch.float32)[:, None]  # [max_len, 1]
        rates = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(t * rates)
        table[:, 1::2] = torch.cos(t * rates)
        self.register_buffer("pe", table[None])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pe[:, : x.size(1)]


class TimeFeatureEmbedding(nn.Module):
    """embed='timeF': the continuous time features through one Linear. [B, L, n_marks] → [B, L, d_model]."""

    def __init__(self, d_model: int, freq: str = "h"):
        super().__init__()
        self.embed = nn.Linear(FREQ_MARKS[freq], d_model)

    def forward(self, marks: torch.Tensor) -> torch.Tensor:
        return self.embed(marks)


class DataEmbedding(nn.Module):
    def __init__(self, c_in: int, d_model: int, freq: str = "h", dropout: float = 0.1):
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in, d_model)
        self.position_embedding = PositionalEmbedding(d_model)
        self.temporal_embedding = TimeFeatureEmbedding(d_model, freq)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, marks: torch.Tensor) -> torch.Tensor:
        summed = self.value_embedding(x) + self.position_embedding(x) + self.temporal_embedding(marks)
        return self.dropout(summed)


# --------------------------------------------------------------------------------------------
# Attention: inner attentions take and return [B, L, H, D]
# --------------------------------------------------------------------------------------------
def causal_mask(B: int, L: int, S: int, device) -> torch.Tensor:
    """[B, 1, L, S] bool, True where key s lies in query l's future (s > l)."""
    return torch.triu(torch.ones(B, 1, L, S, dtype=torch.bool), diagonal=1).to(device)


def prob_mask(B: int, H: int, L: int, top: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """The causal mask's rows for the selected queries, [B, H, u, L_K] like `scores` (built via [B, H, L, L_K])."""
    rows = torch.ones(L, scores.shape[-1], dtype=torch.bool, device=scores.device).triu(1)  # [L, L_K]
    rows = rows[None, None].expand(B, H, L, scores.shape[-1])
    picked = rows[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], top, :]
    return picked.view(scores.shape)


class FullAttention(nn.Module):
    """softmax(QKᵀ/√D) V with einsum; the causal mask when `mask_flag`; dropout on the weights A."""

    def __init__(self, mask_flag: bool = True, factor: int = 5, attention_dropout: float = 0.1):
        super().__init__()
        self.mask_flag = mask_flag
        self.dropout = nn.Dropout(attention_dropout)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        B, L, H, D = queries.shape
        scores = torch.einsum("blhe,bshe->bhls", queries, keys)  # [B, H, L, S]
        if self.mask_flag:
            scores.masked_fill_(causal_mask(B, L, keys.shape[1], queries.device), -np.inf)
        A = self.dropout(torch.softmax((1.0 / math.sqrt(D)) * scores, dim=-1))
        return torch.einsum("bhls,bshd->blhd", A, values).contiguous()  # [B, L, H, D]


class ProbAttention(nn.Module):
    """ProbSparse self-attention as the official code computes it (see the module docstring)."""

    def __init__(self, mask_flag: bool = True, factor: int = 5, attention_dropout: float = 0.1):
        super().__init__()
        self.mask_flag = mask_flag
        self.factor = factor
        self.dropout = nn.Dropout(attention_dropout)  # declared, never applied: the official forward skips it

    def _top_queries(self, Q: torch.Tensor, K: torch.Tensor, U_part: int, u: int):
        """Score every query on U_part sampled keys; keep the u with the largest M. → (Q_top Kᵀ, top indices)."""
        B, H, L_K, D = K.shape
        L_Q = Q.shape[2]
        K_all = K.unsqueeze(-3).expand(B, H, L_Q, L_K, D)  # a view: every query sees all keys
        sample = torch.randint(L_K, (L_Q, U_part))  # GLOBAL RNG: one key sample per query
        K_sample = K_all[:, :, torch.arange(L_Q).unsqueeze(1), sample, :]  # [B, H, L_Q, U_part, D]
        QK_sample = torch.matmul(Q.unsqueeze(-2), K_sample.transpose(-2, -1)).squeeze(-2)  # [B, H, L_Q, U_part]
        M = QK_sample.max(-1)[0] - torch.div(QK_sample.sum(-1), L_K)  # the official divisor is L_K
        top = M.topk(u, sorted=False)[1]  # [B, H, u]
        Q_top = Q[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], top, :]  # [B, H, u, D]
        return torch.matmul(Q_top, K.transpose(-2, -1)), top  # [B, H, u, L_K]

    def _lazy_context(self, V: torch.Tensor, L_Q: int) -> torch.Tensor:
        """Rows of queries left out: mean of V (encoder), running sum of V (masked decoder). [B, H, L_Q, D]."""
        B, H, L_V, D = V.shape
        if not self.mask_flag:
            return V.mean(dim=-2).unsqueeze(-2).expand(B, H, L_Q, D).clone()
        assert L_Q == L_V, "the masked (cumsum) form is for self-attention only"
        return V.cumsum(dim=-2)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        B, L_Q, H, D = queries.shape
        L_K = keys.shape[1]
        Q, K, V = queries.transpose(2, 1), keys.transpose(2, 1), values.transpose(2, 1)  # [B, H, L, D]

        U_part = min(self.factor * np.ceil(np.log(L_K)).astype("int").item(), L_K)  # c·⌈ln L_K⌉ keys
        u = min(self.factor * np.ceil(np.log(L_Q)).astype("int").item(), L_Q)  # c·⌈ln L_Q⌉ queries
        scores, top = self._top_queries(Q, K, U_part, u)
        scores = scores * (1.0 / math.sqrt(D))

        context = self._lazy_context(V, L_Q)
        if self.mask_flag:
            scores.masked_fill_(prob_mask(B, H, L_Q, top, scores), -np.inf)
        attn = torch.softmax(scores, dim=-1)  # [B, H, u, L_K]
        context[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], top, :] = \
            torch.matmul(attn, V).type_as(context)
        return context.transpose(2, 1).contiguous()  # [B, L_Q, H, D]


class AttentionLayer(nn.Module):
    """Project to H heads, attend, (mix), project back. [B, L, d_model] × [B, S, d_model] → [B, L, d_model]."""

    def __init__(self, attention: nn.Module, d_model: int, n_heads: int, mix: bool = False):
        super().__init__()
        d_head = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_head * n_heads)
        self.key_projection = nn.Linear(d_model, d_head * n_heads)
        self.value_projection = nn.Linear(d_model, d_head * n_heads)
        self.out_projection = nn.Linear(d_head * n_heads, d_model)
        self.n_heads = n_heads
        self.mix = mix

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        B, L, _ = queries.shape
        S, H = keys.shape[1], self.n_heads
        out = self.inner_attention(self.query_projection(queries).view(B, L, H, -1),
                                   self.key_projection(keys).view(B, S, H, -1),
                                   self.value_projection(values).view(B, S, H, -1))  # [B, L, H, D]
        if self.mix:  # [B, H, L, D] memory read as [B, L, H·D]: heads and time interleave
            out = out.transpose(2, 1).contiguous()
        return self.out_projection(out.view(B, L, -1))


# --------------------------------------------------------------------------------------------
# Encoder and decoder
# --------------------------------------------------------------------------------------------
def _activation(name: str):
    return F.relu if name == "relu" else F.gelu


def _add_feed_forward(layer: nn.Module, d_model: int, d_ff: int, dropout: float, activation: str) -> None:
    """The position-wise FFN both layer kinds own under the official names: conv1, conv2 (kernel 1), dropout,
    activation. Registered where the official layers register conv1 and conv2, so parameter order is theirs."""
    layer.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
    layer.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
    layer.dropout = nn.Dropout(dropout)
    layer.activation = _activation(activation)


def _feed_forward(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """[B, L, d_model] → dropout(conv2(dropout(act(conv1(x))))), the convolutions over the transposed [B, C, L]."""
    y = layer.dropout(layer.activation(layer.conv1(x.transpose(-1, 1))))  # [B, d_ff, L]
    return layer.dropout(layer.conv2(y).transpose(-1, 1))  # [B, L, d_model]


class EncoderLayer(nn.Module):
    """x + attention → norm1 → x + FFN (two kernel-1 convs) → norm2. [B, L, d_model] → same."""

    def __init__(self, attention: AttentionLayer, d_model: int, d_ff: int, dropout: float, activation: str):
        super().__init__()
        self.attention = attention
        _add_feed_forward(self, d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.dropout(self.attention(x, x, x)))
        return self.norm2(x + _feed_forward(self, x))


class ConvLayer(nn.Module):
    """Distilling: circular Conv1d k3 → BatchNorm1d → ELU → MaxPool1d(3, 2, 1). [B, L, d] → [B, ⌈L/2⌉, d]"""

    def __init__(self, c_in: int):
        super().__init__()
        self.downConv = nn.Conv1d(c_in, c_in, kernel_size=3, padding=1, padding_mode="circular")
        self.norm = nn.BatchNorm1d(c_in)
        self.activation = nn.ELU()
        self.maxPool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.activation(self.norm(self.downConv(x.permute(0, 2, 1))))
        return self.maxPool(y).transpose(1, 2)


class Encoder(nn.Module):
    """Attention layers with a distilling layer after each but the last, then a LayerNorm."""

    def __init__(self, attn_layers: list[EncoderLayer], conv_layers: list[ConvLayer] | None, norm: nn.Module):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.conv_layers = nn.ModuleList(conv_layers) if conv_layers is not None else None
        self.norm = norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.conv_layers is not None:
            for attn_layer, conv_layer in zip(self.attn_layers, self.conv_layers):
                x = conv_layer(attn_layer(x))
            x = self.attn_layers[-1](x)
        else:
            for attn_layer in self.attn_layers:
                x = attn_layer(x)
        return self.norm(x)


class DecoderLayer(nn.Module):
    """Masked self-attention → norm1 → cross-attention → norm2 → FFN → norm3. [B, L_dec, d_model] → same."""

    def __init__(self, self_attention: AttentionLayer, cross_attention: AttentionLayer, d_model: int, d_ff: int,
                 dropout: float, activation: str):
        super().__init__()
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        _add_feed_forward(self, d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, cross: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.dropout(self.self_attention(x, x, x)))
        x = self.norm2(x + self.dropout(self.cross_attention(x, cross, cross)))
        return self.norm3(x + _feed_forward(self, x))


class Decoder(nn.Module):
    def __init__(self, layers: list[DecoderLayer], norm: nn.Module):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm

    def forward(self, x: torch.Tensor, cross: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, cross)
        return self.norm(x)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------
class Informer(nn.Module):
    """forward(x_enc, x_mark_enc, x_dec, x_mark_dec) → [B, out_len, c_out], as the official Informer.

    Arguments keep the official names and defaults (embed is always 'timeF'; freq picks the mark count).
    """

    def __init__(self, enc_in: int, dec_in: int, c_out: int, seq_len: int, label_len: int, out_len: int,
                 factor: int = 5, d_model: int = 512, n_heads: int = 8, e_layers: int = 3, d_layers: int = 2,
                 d_ff: int = 512, dropout: float = 0.0, attn: str = "prob", freq: str = "h",
                 activation: str = "gelu", distil: bool = True, mix: bool = True):
        super().__init__()
        self.pred_len = out_len
        self.enc_embedding = DataEmbedding(enc_in, d_model, freq, dropout)
        self.dec_embedding = DataEmbedding(dec_in, d_model, freq, dropout)
        Attn = ProbAttention if attn == "prob" else FullAttention

        def layer(inner: nn.Module, layer_mix: bool) -> AttentionLayer:
            return AttentionLayer(inner, d_model, n_heads, mix=layer_mix)

        self.encoder = Encoder(
            [EncoderLayer(layer(Attn(False, factor, dropout), False), d_model, d_ff, dropout, activation)
             for _ in range(e_layers)],
            [ConvLayer(d_model) for _ in range(e_layers - 1)] if distil else None,
            nn.LayerNorm(d_model))
        self.decoder = Decoder(
            [DecoderLayer(layer(Attn(True, factor, dropout), mix),  # mix: decoder self-attention only
                          layer(FullAttention(False, factor, dropout), False),
                          d_model, d_ff, dropout, activation)
             for _ in range(d_layers)],
            nn.LayerNorm(d_model))
        self.projection = nn.Linear(d_model, c_out)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor, x_dec: torch.Tensor,
                x_mark_dec: torch.Tensor) -> torch.Tensor:
        enc_out = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L_enc / 2^(e_layers−1), d_model]
        dec_out = self.decoder(self.dec_embedding(x_dec, x_mark_dec), enc_out)  # [B, label_len + out_len, d]
        return self.projection(dec_out)[:, -self.pred_len:, :]  # [B, out_len, c_out]
