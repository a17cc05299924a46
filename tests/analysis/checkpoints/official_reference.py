"""A compact functional re-implementation of the official Informer2020 forward, for the import tests.

Written from the official semantics, independent of `model/` (nothing imported from it): it works
directly on an official-named state_dict, in eval mode (no dropout, BatchNorm on running stats), and
draws its key samples from torch's GLOBAL RNG with `torch.randint(L_K, (L_Q, U_part))`, one draw per
ProbAttention call in forward order (encoder replicas and layers, then each decoder self-attention),
exactly like the official `_prob_QK`. Shapes use the paper's names: B batch, L length, H heads, D = d_model / H.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

Tensor = torch.Tensor
StateDict = dict[str, Tensor]


# --------------------------------------------------------------------------------------------
# Small pieces
# --------------------------------------------------------------------------------------------
def _linear(sd: StateDict, prefix: str, x: Tensor) -> Tensor:
    return x @ sd[f"{prefix}.weight"].T + (sd[f"{prefix}.bias"] if f"{prefix}.bias" in sd else 0.0)


def _layer_norm(sd: StateDict, prefix: str, x: Tensor, eps: float = 1e-5) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * sd[f"{prefix}.weight"] + sd[f"{prefix}.bias"]


def _conv1d(sd: StateDict, prefix: str, x: Tensor, circular_pad: int = 0) -> Tensor:
    """x: [B, C_in, L] → [B, C_out, L'] (circular padding by hand, then a plain convolution)."""
    if circular_pad:
        x = torch.cat([x[..., -circular_pad:], x, x[..., :circular_pad]], dim=-1)
    return F.conv1d(x, sd[f"{prefix}.weight"], sd[f"{prefix}.bias"])


def _sinusoid(length: int, d_model: int) -> Tensor:
    """The official PositionalEmbedding table, [1, length, d_model] (d_model even)."""
    pe = torch.zeros(length, d_model)
    position = torch.arange(0, length).float().unsqueeze(1)
    div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.unsqueeze(0)


def _embedding(sd: StateDict, prefix: str, x: Tensor, marks: Tensor) -> Tensor:
    """tokenConv(x) + pe[:, :L] + temporal Linear(marks).

    x: [B, L, c_in], marks: [B, L, n_marks] → [B, L, d_model].
    """
    values = _conv1d(sd, f"{prefix}.value_embedding.tokenConv", x.permute(0, 2, 1), circular_pad=1).transpose(1, 2)
    d_model = values.shape[-1]
    pe = sd.get(f"{prefix}.position_embedding.pe")
    if pe is None:
        pe = _sinusoid(x.shape[1], d_model)
    return values + pe[:, : x.shape[1]] + _linear(sd, f"{prefix}.temporal_embedding.embed", marks)


# --------------------------------------------------------------------------------------------
# Attention: inner attentions take and return [B, L, H, D]
# --------------------------------------------------------------------------------------------
def _prob_attention(queries: Tensor, keys: Tensor, values: Tensor, *, factor: int, mask_flag: bool) -> Tensor:
    B, L_Q, H, D = queries.shape
    L_K = keys.shape[1]
    Q, K, V = (t.transpose(2, 1) for t in (queries, keys, values))  # [B, H, L, D]

    U_part = min(factor * int(np.ceil(np.log(L_K))), L_K)
    u = min(factor * int(np.ceil(np.log(L_Q))), L_Q)

    index_sample = torch.randint(L_K, (L_Q, U_part))  # global RNG, like the official _prob_QK
    K_expand = K.unsqueeze(-3).expand(B, H, L_Q, L_K, D)
    K_sample = K_expand[:, :, torch.arange(L_Q).unsqueeze(1), index_sample, :]  # [B, H, L_Q, U_part, D]
    Q_K_sample = (Q.unsqueeze(-2) @ K_sample.transpose(-2, -1)).squeeze(-2)  # [B, H, L_Q, U_part]
    M = Q_K_sample.max(-1)[0] - Q_K_sample.sum(-1) / L_K  # the official divisor: L_K
    M_top = M.topk(u, sorted=False)[1]  # [B, H, u]

    b_idx, h_idx = torch.arange(B)[:, None, None], torch.arange(H)[None, :, None]
    Q_reduce = Q[b_idx, h_idx, M_top, :]  # [B, H, u, D]
    scores = (Q_reduce @ K.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # [B, H, u, L_K]

    if mask_flag:
        context = V.cumsum(dim=-2)  # lazy rows: running sum
        future = torch.ones(L_Q, L_K, dtype=torch.bool).triu(1)  # key j > query i
        scores = scores.masked_fill(future[M_top], -np.inf)
    else:
        context = V.mean(dim=-2, keepdim=True).expand(B, H, L_Q, D).clone()  # lazy rows: mean of V
    context[b_idx, h_idx, M_top, :] = torch.softmax(scores, dim=-1) @ V
    return context.transpose(2, 1).contiguous()  # [B, L_Q, H, D]


def _full_attention(queries: Tensor, keys: Tensor, values: Tensor, *, mask_flag: bool) -> Tensor:
    B, L, H, E = queries.shape
    scores = torch.einsum("blhe,bshe->bhls", queries, keys)
    if mask_flag:
        scores = scores.masked_fill(torch.ones(L, keys.shape[1], dtype=torch.bool).triu(1), -np.inf)
    A = torch.softmax(scores / math.sqrt(E), dim=-1)
    return torch.einsum("bhls,bshd->blhd", A, values).contiguous()  # [B, L, H, D]


def _attention_layer(sd: StateDict, prefix: str, x_q: Tensor, x_kv: Tensor, *, n_heads: int, kind: str,
                     mask_flag: bool, mix: bool, factor: int) -> Tensor:
    B, L, _ = x_q.shape
    S, H = x_kv.shape[1], n_heads
    queries = _linear(sd, f"{prefix}.query_projection", x_q).view(B, L, H, -1)
    keys = _linear(sd, f"{prefix}.key_projection", x_kv).view(B, S, H, -1)
    values = _linear(sd, f"{prefix}.value_projection", x_kv).view(B, S, H, -1)
    if kind == "prob":
        out = _prob_attention(queries, keys, values, factor=factor, mask_flag=mask_flag)
    else:
        out = _full_attention(queries, keys, values, mask_flag=mask_flag)
    if mix:
        out = out.transpose(2, 1).contiguous()
    return _linear(sd, f"{prefix}.out_projection", out.view(B, L, -1))


def _ffn(sd: StateDict, prefix: str, x: Tensor, activation: str) -> Tensor:
    act = F.relu if activation == "relu" else F.gelu
    y = act(_conv1d(sd, f"{prefix}.conv1", x.transpose(-1, 1)))
    return _conv1d(sd, f"{prefix}.conv2", y).transpose(-1, 1)


# --------------------------------------------------------------------------------------------
# Encoder, decoder, model
# --------------------------------------------------------------------------------------------
def _conv_layer(sd: StateDict, prefix: str, x: Tensor) -> Tensor:
    """downConv (k3, circular 1) → BatchNorm1d (running stats) → ELU → MaxPool1d(3, 2, 1).

    [B, L, d_model] → [B, ⌊(L − 1)/2⌋ + 1, d_model].
    """
    y = _conv1d(sd, f"{prefix}.downConv", x.permute(0, 2, 1), circular_pad=1)  # [B, d, L]
    mean, var = sd[f"{prefix}.norm.running_mean"], sd[f"{prefix}.norm.running_var"]
    y = (y - mean[:, None]) / torch.sqrt(var[:, None] + 1e-5) * sd[f"{prefix}.norm.weight"][:, None] \
        + sd[f"{prefix}.norm.bias"][:, None]
    y = F.elu(y)
    y = F.max_pool1d(y, kernel_size=3, stride=2, padding=1)
    return y.transpose(1, 2)


def _encoder(sd: StateDict, prefix: str, x: Tensor, n_layers: int, *, n_heads: int, factor: int, attn: str,
             activation: str) -> Tensor:
    for l in range(n_layers):
        layer = f"{prefix}.attn_layers.{l}"
        x = x + _attention_layer(sd, f"{layer}.attention", x, x, n_heads=n_heads, kind=attn, mask_flag=False,
                                 mix=False, factor=factor)
        x = _layer_norm(sd, f"{layer}.norm1", x)
        x = _layer_norm(sd, f"{layer}.norm2", x + _ffn(sd, layer, x, activation))
        if f"{prefix}.conv_layers.{l}.downConv.weight" in sd and l < n_layers - 1:
            x = _conv_layer(sd, f"{prefix}.conv_layers.{l}", x)
    return _layer_norm(sd, f"{prefix}.norm", x)


def official_forward(state_dict: StateDict, x_enc: Tensor, mark_enc: Tensor, x_dec: Tensor, mark_dec: Tensor, *,
                     n_heads: int, factor: int, pred_len: int, e_layers: int | Sequence[int], d_layers: int,
                     activation: str = "gelu", attn: str = "prob", mix: bool = True) -> Tensor:
    """The official Informer / InformerStack forward in eval mode → [B, pred_len, c_out].

    InformerStack when the state_dict has `encoder.encoders.*` names (e_layers a sequence, one entry per
    replica), else the plain Informer (e_layers an int or a one-entry sequence).
    """
    sd = state_dict
    layers = [e_layers] if isinstance(e_layers, int) else list(e_layers)
    common = dict(n_heads=n_heads, factor=factor, attn=attn, activation=activation)
    with torch.no_grad():
        x = _embedding(sd, "enc_embedding", x_enc, mark_enc)
        if any(k.startswith("encoder.encoders.") for k in sd):
            outs = []
            for i, n in enumerate(layers):  # replica i reads the last L // 2**i steps
                inp_len = x.shape[1] // 2 ** i
                outs.append(_encoder(sd, f"encoder.encoders.{i}", x[:, -inp_len:, :], n, **common))
            enc_out = torch.cat(outs, dim=-2)
        else:
            assert len(layers) == 1, "a plain Informer state_dict has one encoder"
            enc_out = _encoder(sd, "encoder", x, layers[0], **common)

        y = _embedding(sd, "dec_embedding", x_dec, mark_dec)
        for l in range(d_layers):
            layer = f"decoder.layers.{l}"
            y = _layer_norm(sd, f"{layer}.norm1", y + _attention_layer(
                sd, f"{layer}.self_attention", y, y, n_heads=n_heads, kind=attn, mask_flag=True, mix=mix,
                factor=factor))
            y = _layer_norm(sd, f"{layer}.norm2", y + _attention_layer(
                sd, f"{layer}.cross_attention", y, enc_out, n_heads=n_heads, kind="full", mask_flag=False,
                mix=False, factor=factor))
            y = _layer_norm(sd, f"{layer}.norm3", y + _ffn(sd, layer, y, activation))
        y = _layer_norm(sd, "decoder.norm", y)
        return _linear(sd, "projection", y)[:, -pred_len:, :]


# --------------------------------------------------------------------------------------------
# A random official state_dict
# --------------------------------------------------------------------------------------------
def make_official_state_dict(enc_in: int, dec_in: int, c_out: int, d_model: int, n_heads: int, d_ff: int,
                             e_layers: int | Sequence[int], d_layers: int, n_marks: int, seed: int, *,
                             stack: bool | None = None, distil: bool = True, mark_bias: bool = True) -> StateDict:
    """Random weights under exactly the official names and shapes (a `torch.save(model.state_dict())`).

    e_layers: an int (Informer) or one entry per encoder replica; stack=None means InformerStack iff more
    than one replica. Includes the `position_embedding.pe` buffers and BatchNorm running statistics that
    are far from their initial (0, 1), so a model ignoring them would fail the comparison.
    """
    assert d_model % n_heads == 0, "d_model must be divisible by n_heads"
    g = torch.Generator().manual_seed(seed)
    layers = [e_layers] if isinstance(e_layers, int) else list(e_layers)
    stack = len(layers) > 1 if stack is None else stack
    sd: StateDict = {}

    def rand(*shape: int, scale: float = 1.0, offset: float = 0.0) -> Tensor:
        return torch.randn(*shape, generator=g) * scale + offset

    def linear(prefix: str, n_in: int, n_out: int, bias: bool = True) -> None:
        sd[f"{prefix}.weight"] = rand(n_out, n_in, scale=n_in ** -0.5)
        if bias:
            sd[f"{prefix}.bias"] = rand(n_out, scale=0.1)

    def conv(prefix: str, n_in: int, n_out: int, k: int) -> None:
        sd[f"{prefix}.weight"] = rand(n_out, n_in, k, scale=(n_in * k) ** -0.5)
        sd[f"{prefix}.bias"] = rand(n_out, scale=0.1)

    def norm(prefix: str) -> None:
        sd[f"{prefix}.weight"] = rand(d_model, scale=0.2, offset=1.0)
        sd[f"{prefix}.bias"] = rand(d_model, scale=0.1)

    def attention(prefix: str) -> None:
        for p in ("query", "key", "value", "out"):
            linear(f"{prefix}.{p}_projection", d_model, d_model)

    for side, c_in in (("enc", enc_in), ("dec", dec_in)):
        conv(f"{side}_embedding.value_embedding.tokenConv", c_in, d_model, 3)
        sd[f"{side}_embedding.position_embedding.pe"] = _sinusoid(5000, d_model)
        linear(f"{side}_embedding.temporal_embedding.embed", n_marks, d_model, bias=mark_bias)

    for r, n in enumerate(layers):
        prefix = f"encoder.encoders.{r}" if stack else "encoder"
        for l in range(n):
            layer = f"{prefix}.attn_layers.{l}"
            attention(f"{layer}.attention")
            conv(f"{layer}.conv1", d_model, d_ff, 1)
            conv(f"{layer}.conv2", d_ff, d_model, 1)
            norm(f"{layer}.norm1")
            norm(f"{layer}.norm2")
        for l in range(n - 1 if distil else 0):
            conv(f"{prefix}.conv_layers.{l}.downConv", d_model, d_model, 3)
            norm(f"{prefix}.conv_layers.{l}.norm")
            sd[f"{prefix}.conv_layers.{l}.norm.running_mean"] = rand(d_model, scale=0.5)
            sd[f"{prefix}.conv_layers.{l}.norm.running_var"] = torch.rand(d_model, generator=g) * 2.0 + 0.25
            sd[f"{prefix}.conv_layers.{l}.norm.num_batches_tracked"] = torch.tensor(1234)
        norm(f"{prefix}.norm")

    for l in range(d_layers):
        layer = f"decoder.layers.{l}"
        attention(f"{layer}.self_attention")
        attention(f"{layer}.cross_attention")
        conv(f"{layer}.conv1", d_model, d_ff, 1)
        conv(f"{layer}.conv2", d_ff, d_model, 1)
        for i in (1, 2, 3):
            norm(f"{layer}.norm{i}")
    norm("decoder.norm")
    linear("projection", d_model, c_out)
    return sd
