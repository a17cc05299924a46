"""Local plus memory-compressed attention (Liu et al. 2018, "Generating Wikipedia by Summarizing Long Sequences",
§4.2.4).

Local attention: the sequence is split into blocks of b cells and each query reads its own block. Memory-compressed
attention: keys and values are shortened by a strided convolution (kernel = stride = k), so each query also reads
L/k summaries. Here a query reads both — its block exactly, and the summaries of the other blocks — in one softmax.
A summary that overlaps the query's own block is not read (those keys are read exactly); causal sites read only
keys j ≤ i and summaries that end at or before i. The convolution is learned (`compress="conv"`, one per layer
shared by the heads); a same-weights swap compresses by the mean over each stride (`compress="mean"`).
O(b + L/k) per query. `block ≥ L` puts every key in the query's block: full attention.
"""
from __future__ import annotations

import math

import torch

from .table import KeyTable


def local_table(L: int, *, causal: bool, block: int, device=None) -> KeyTable:
    """[L, b]: the query's own block (causal: j ≤ i)."""
    b = max(1, min(block, L))
    i = torch.arange(L, device=device).unsqueeze(1)
    keys = (i // b) * b + torch.arange(b, device=device).unsqueeze(0)
    valid = keys < L
    if causal:
        valid &= keys <= i
    return KeyTable(keys.clamp(max=L - 1), valid)


def memory_visible(L: int, *, causal: bool, block: int, stride: int, device=None) -> torch.Tensor:
    """[L, ⌈L/k⌉] bool: the summaries query i reads (those outside its own block; causal: ending at or before i)."""
    b, k = max(1, min(block, L)), max(1, stride)
    i = torch.arange(L, device=device).unsqueeze(1)
    first = torch.arange(0, L, k, device=device).unsqueeze(0)
    last = (first + k - 1).clamp(max=L - 1)
    own_first, own_last = (i // b) * b, ((i // b) * b + b - 1).clamp(max=L - 1)
    visible = (last < own_first) | (first > own_last)
    if causal:
        visible &= last <= i
    return visible


def compress(X: torch.Tensor, stride: int, conv: torch.nn.Conv1d | None = None) -> torch.Tensor:
    """[B, H, L, D] → [B, H, ⌈L/k⌉, D]: by the learned strided convolution, or the mean over each stride. The tail
    shorter than k is padded by repeating the last cell."""
    B, H, L, D = X.shape
    k = max(1, stride)
    pad = math.ceil(L / k) * k - L
    if pad:
        X = torch.cat([X, X[:, :, -1:].expand(B, H, pad, D)], dim=2)
    if conv is None:
        return X.reshape(B, H, -1, k, D).mean(dim=3)
    flat = X.reshape(B * H, -1, D).transpose(1, 2)  # [B·H, D, L]
    return conv(flat).transpose(1, 2).reshape(B, H, -1, D)


def compressed_conv(D: int, stride: int) -> torch.nn.Conv1d:
    """The learned compression, initialised as the mean over each stride (training starts from the swap)."""
    conv = torch.nn.Conv1d(D, D, kernel_size=stride, stride=stride)
    with torch.no_grad():
        conv.weight.zero_()
        for d in range(D):
            conv.weight[d, d, :] = 1.0 / stride
        conv.bias.zero_()
    return conv


__all__ = ["compress", "compressed_conv", "local_table", "memory_visible"]
