"""A compact functional re-implementation of Time-Series-Library's Informer forward, for the TSL import tests.

Written from TSL's semantics (models/Informer.py, layers/SelfAttention_Family.py, layers/Transformer_EncDec.py,
layers/Embed.py of thuml/Time-Series-Library), independent of `model/`: it works on a TSL-named state_dict in eval
mode and draws its key samples from torch's GLOBAL RNG, `torch.randint(L_K, (L_Q, U))` once per ProbAttention call
in forward order (encoder layers, then per decoder layer its self- and its cross-attention), as TSL's `_prob_QK`.
What TSL does differently from Informer2020 is written out where it happens:

* every attention (encoder, decoder self, cross) is a ProbAttention, returning [B, H, L, D] that the layer reads
  as [B, L, H·D] (heads and time mixed);
* the sampled scores are `.squeeze()`d, so with one head the [B, 1, L_Q, U] table loses its head axis and the
  top-u indices [B, u] broadcast against the batch: every window computes the rows of all windows' top-u queries;
* ConvLayer pads its circular Conv1d by 2 (length L → L + 2 before the max-pool);
* TokenEmbedding's conv and the timeF Linear have no bias; the projection sits in the decoder.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .official_reference import make_official_state_dict

Tensor = torch.Tensor
StateDict = dict[str, Tensor]


def _linear(sd: StateDict, prefix: str, x: Tensor) -> Tensor:
    bias = sd.get(f"{prefix}.bias")
    return x @ sd[f"{prefix}.weight"].T + (0.0 if bias is None else bias)


def _layer_norm(sd: StateDict, prefix: str, x: Tensor) -> Tensor:
    return F.layer_norm(x, x.shape[-1:], sd[f"{prefix}.weight"], sd[f"{prefix}.bias"], 1e-5)


def _circular_conv(sd: StateDict, prefix: str, x: Tensor, pad: int) -> Tensor:
    """x: [B, C, L] → Conv1d with circular padding `pad` on both sides (by hand), no bias when the dict has none."""
    if pad:
        x = torch.cat([x[..., -pad:], x, x[..., :pad]], dim=-1)
    return F.conv1d(x, sd[f"{prefix}.weight"], sd.get(f"{prefix}.bias"))


def _sinusoid(length: int, d_model: int) -> Tensor:
    pe = torch.zeros(length, d_model)
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model))
    pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
    return pe


def _embed(sd: StateDict, side: str, x: Tensor, marks: Tensor) -> Tensor:
    """TokenEmbedding (k3, circular 1, no bias) + PositionalEmbedding + TimeFeatureEmbedding (no bias)."""
    values = _circular_conv(sd, f"{side}.value_embedding.tokenConv", x.permute(0, 2, 1), 1).transpose(1, 2)
    return values + _sinusoid(x.shape[1], values.shape[-1]) + _linear(sd, f"{side}.temporal_embedding.embed", marks)


def _prob_attention(queries: Tensor, keys: Tensor, values: Tensor, factor: int, causal: bool) -> Tensor:
    """TSL's ProbAttention: [B, L, H, D] in, [B, H, L_Q, D] out (not transposed back)."""
    Q, K, V = (t.transpose(1, 2) for t in (queries, keys, values))  # [B, H, L, D]
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    U = min(factor * int(np.ceil(np.log(L_K))), L_K)
    u = min(factor * int(np.ceil(np.log(L_Q))), L_Q)

    index = torch.randint(L_K, (L_Q, U))  # the global RNG
    sampled = (Q.unsqueeze(-2) @ K[:, :, index].transpose(-2, -1)).squeeze()  # EVERY size-1 axis goes (TSL)
    M = sampled.max(-1)[0] - sampled.sum(-1) / L_K
    top = M.topk(u, sorted=False)[1]  # [B, H, u]; [B, u] when H = 1, [H, u] when B = 1
    b, h = torch.arange(B)[:, None, None], torch.arange(H)[None, :, None]
    scores = (Q[b, h, top] @ K.transpose(-2, -1)) / math.sqrt(D)  # broadcast as TSL indexes: [B, B, u, L_K] at H=1
    if causal:
        future = torch.ones(L_Q, L_K, dtype=torch.bool).triu(1)[None, None].expand(B, H, L_Q, L_K)
        scores = scores.masked_fill(future[b, h, top].view(scores.shape), -np.inf)
        context = V.cumsum(dim=-2)
    else:
        context = V.mean(dim=-2, keepdim=True).expand(B, H, L_Q, D).clone()
    context[b, h, top] = torch.softmax(scores, dim=-1) @ V
    return context


def _attention(sd: StateDict, prefix: str, x_q: Tensor, x_kv: Tensor, n_heads: int, factor: int,
               causal: bool) -> Tensor:
    B, L, _ = x_q.shape
    S = x_kv.shape[1]
    q = _linear(sd, f"{prefix}.query_projection", x_q).view(B, L, n_heads, -1)
    k = _linear(sd, f"{prefix}.key_projection", x_kv).view(B, S, n_heads, -1)
    v = _linear(sd, f"{prefix}.value_projection", x_kv).view(B, S, n_heads, -1)
    out = _prob_attention(q, k, v, factor, causal).contiguous().view(B, L, -1)  # [B, H, L, D] read as [B, L, H·D]
    return _linear(sd, f"{prefix}.out_projection", out)


def _ffn(sd: StateDict, prefix: str, x: Tensor, activation: str) -> Tensor:
    act = F.relu if activation == "relu" else F.gelu
    y = act(_circular_conv(sd, f"{prefix}.conv1", x.transpose(-1, 1), 0))
    return _circular_conv(sd, f"{prefix}.conv2", y, 0).transpose(-1, 1)


def _distil(sd: StateDict, prefix: str, x: Tensor) -> Tensor:
    """ConvLayer: Conv1d(k3, circular padding 2) → BatchNorm (running stats) → ELU → MaxPool(3, 2, 1)."""
    y = _circular_conv(sd, f"{prefix}.downConv", x.permute(0, 2, 1), 2)  # [B, d, L + 2]
    y = F.batch_norm(y, sd[f"{prefix}.norm.running_mean"], sd[f"{prefix}.norm.running_var"],
                     sd[f"{prefix}.norm.weight"], sd[f"{prefix}.norm.bias"], False, 0.0, 1e-5)
    return F.max_pool1d(F.elu(y), kernel_size=3, stride=2, padding=1).transpose(1, 2)


def tsl_forward(sd: StateDict, x_enc: Tensor, mark_enc: Tensor, x_dec: Tensor, mark_dec: Tensor, *, n_heads: int,
                factor: int, pred_len: int, activation: str = "gelu") -> Tensor:
    """TSL's Informer (task long_term_forecast) in eval mode → [B, pred_len, c_out]."""
    e_layers = 1 + max(int(k.split(".")[2]) for k in sd if k.startswith("encoder.attn_layers."))
    d_layers = 1 + max(int(k.split(".")[2]) for k in sd if k.startswith("decoder.layers."))
    distil = any(k.startswith("encoder.conv_layers.") for k in sd)
    with torch.no_grad():
        x = _embed(sd, "enc_embedding", x_enc, mark_enc)
        for l in range(e_layers):
            layer = f"encoder.attn_layers.{l}"
            x = _layer_norm(sd, f"{layer}.norm1", x + _attention(sd, f"{layer}.attention", x, x, n_heads, factor,
                                                                 False))
            x = _layer_norm(sd, f"{layer}.norm2", x + _ffn(sd, layer, x, activation))
            if distil and l < e_layers - 1:
                x = _distil(sd, f"encoder.conv_layers.{l}", x)
        memory = _layer_norm(sd, "encoder.norm", x)

        y = _embed(sd, "dec_embedding", x_dec, mark_dec)
        for l in range(d_layers):
            layer = f"decoder.layers.{l}"
            y = _layer_norm(sd, f"{layer}.norm1", y + _attention(sd, f"{layer}.self_attention", y, y, n_heads,
                                                                 factor, True))
            y = _layer_norm(sd, f"{layer}.norm2", y + _attention(sd, f"{layer}.cross_attention", y, memory, n_heads,
                                                                 factor, False))
            y = _layer_norm(sd, f"{layer}.norm3", y + _ffn(sd, layer, y, activation))
        y = _linear(sd, "decoder.projection", _layer_norm(sd, "decoder.norm", y))
        return y[:, -pred_len:]


def make_tsl_state_dict(enc_in: int, dec_in: int, c_out: int, d_model: int, n_heads: int, d_ff: int, e_layers: int,
                        d_layers: int, n_marks: int, seed: int, *, distil: bool = True) -> StateDict:
    """Random weights under TSL's names and shapes (a `torch.save(model.state_dict())` of its Informer):
    Informer2020's layout without the two embedding biases, the projection inside the decoder, `pe` [1, 5000, d]."""
    sd = make_official_state_dict(enc_in, dec_in, c_out, d_model, n_heads, d_ff, e_layers, d_layers, n_marks, seed,
                                  stack=False, distil=distil, mark_bias=False)
    for side in ("enc", "dec"):
        del sd[f"{side}_embedding.value_embedding.tokenConv.bias"]
    for p in ("weight", "bias"):
        sd[f"decoder.projection.{p}"] = sd.pop(f"projection.{p}")
    return sd
