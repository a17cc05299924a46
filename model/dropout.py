"""Inverted dropout with cheaper keep-masks on the CPU.

On a CPU, `nn.Dropout` spends most of its time drawing one Bernoulli variate per element (`bernoulli_`:
~8 ns an element here, a fifth of an Informer training step). Two cheaper draws of the same law:

- **Hits** (small p, the default 0.05): every element is dropped independently with probability p exactly when a
  Poisson(λ) number of "hits" lands on it and it is dropped iff it got at least one, λ = −ln(1 − p)
  (P(no hit) = e^−λ = 1 − p). By Poisson splitting, that is one Poisson(n·λ) total placed uniformly over the n
  elements: ~0.051·n positions drawn instead of n variates, written as zeros into a mask of the kept scale
  1/(1 − p). Positions come from 64-bit draws (`randint` over n·2^s ≥ 2^32, shifted down), so they are uniform to
  within n·2^s/2^64 rather than the n/2^32 of a 32-bit modulo.
- **Slots** (larger p, where n·λ positions would cost more than a draw per element): one 64-bit draw (`random_()`
  on int64: 63 uniform bits) holds four 16-bit slots; clearing the top bit of each leaves four independent 15-bit
  uniforms, each compared with a threshold on a 2^-15 grid. p is rounded to a multiple of 2^-15 there.

The scale is 1/(1 − p used), so E[output] = input exactly. Elsewhere (CUDA, MPS) `F.dropout` is already fast and
is used as is.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

_GRID = 1 << 15
_LOW_15_BITS_OF_EACH_SLOT = 0x7FFF_7FFF_7FFF_7FFF
HITS_UP_TO = 0.25  # p at or below which the mask is drawn as hits (λ = 0.29: 0.29·n positions at ~10 ns each)


def _keep_mask(shape: torch.Size, p: float, device: torch.device,
               generator: torch.Generator | None = None) -> tuple[torch.Tensor, float]:
    """The slot scheme: a bool mask (True = keep) with P(drop) = round(p·2^15)/2^15 per element, and that p."""
    cut = round(p * _GRID)
    n = shape.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64, device=device).random_(generator=generator)
    slots = words.bitwise_and_(_LOW_15_BITS_OF_EACH_SLOT).view(torch.int16)  # 4 per word, each uniform on [0, 2^15)
    return slots[:n].view(shape).ge(cut), cut / _GRID  # drop on `cut` of the 2^15 values


def drop_positions(n: int, p: float, device: torch.device, generator: torch.Generator | None = None) -> torch.Tensor:
    """The hit scheme: flat positions [m] (repeats possible) whose union is a set where each of the n elements lies
    independently with probability p. m ~ Poisson(n·λ), λ = −ln(1 − p); each position uniform on [0, n)."""
    if n == 0:
        return torch.empty(0, dtype=torch.long, device=device)
    rate = torch.tensor(n * -math.log1p(-p), dtype=torch.float64)
    m = int(torch.poisson(rate, generator=generator).item())
    shift = max(0, 33 - n.bit_length())  # n·2^shift ≥ 2^32: torch draws 64 bits for a range that wide
    draws = torch.randint(n << shift, (m,), generator=generator, device=device)
    return draws >> shift if shift else draws


def scale_mask(shape: torch.Size, p: float, dtype: torch.dtype, device: torch.device,
               generator: torch.Generator | None = None) -> torch.Tensor:
    """Dropout's multiplier: 0 on dropped elements, 1/(1 − p used) on kept ones. [shape]."""
    if p <= HITS_UP_TO:
        n = shape.numel()
        mask = torch.full((n,), 1.0 / (1.0 - p), dtype=dtype, device=device)
        return mask.index_fill_(0, drop_positions(n, p, device, generator), 0.0).view(shape)
    keep, p_used = _keep_mask(shape, p, device, generator)
    return keep.to(dtype).mul_(1.0 / (1.0 - p_used))


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu":
        return F.dropout(x, p, True)
    return x * scale_mask(x.shape, p, x.dtype, x.device)  # autograd: grad × the same mask


def dropout_add(x: torch.Tensor, y: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """x + dropout(y), one pass on the CPU (addcmul with the mask)."""
    if not training or p == 0.0:
        return x + y
    if y.device.type != "cpu":
        return x + F.dropout(y, p, True)
    return torch.addcmul(x, y, scale_mask(y.shape, p, y.dtype, y.device))


class Dropout(nn.Dropout):
    """`nn.Dropout` (same state dict, same repr) with the cheaper CPU masks above; `add(x, y)` is x + self(y)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)

    def add(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return dropout_add(x, y, self.p, self.training)
