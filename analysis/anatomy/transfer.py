"""The distilling step as a transfer matrix P [L_out × L] from a layer's positions to the distilled ones.

Distilling (Zhou et al. 2021, §3.2) is Conv1d(k = 3, circular padding p) → BatchNorm → ELU → MaxPool1d(k = 3, s = 2,
p = 1) with no residual. Conv output k reads inputs (k − p + t) mod L, t = 0, 1, 2 (the first and last wrap round);
pool output j reads conv outputs 2j − 1 … 2j + 1 of the L + 2p − 2 there are. Three forms of P, rows summing to 1:

- structural: the conv's three taps composed with the pool's three, every tap and window cell alike: for p = 1 the
  weights 1, 2, 3, 2, 1 / 9 over inputs 2j − 2 … 2j + 2 inside, fewer cells at the edges; for p = 2 (Time-Series-
  Library) the same shape one step to the left (96 → 49);
- routed (the default): the max-pool's winning conv position per channel (the hook "kept"), spread evenly over that
  position's three taps, averaged over channels;
- jacobian: ‖∂y_j/∂x_i‖_F over the channel blocks, exact to first order. With BatchNorm in eval mode every step is
  per channel, so ∂y_{j,c}/∂x_i = ELU'(z_{k,c})·a_c·W[c, :, t] for the winner k of (j, c) and the tap t of k that
  reads i: the blocks come in closed form (checked against autograd in the tests), without a [L_out·d, L·d] matrix.

The value embedding's own k = 3 conv and the attention are not part of P.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from informer_lab.model import on_cpu
from informer_lab.model.distilling import DistillingLayer, batch_norm_rows, circular_conv, max_pool3, pool_indices

FORMS = ("routed", "structural", "jacobian")
KERNEL = 3


def conv_length(L: int, padding: int) -> int:
    return L + 2 * padding - KERNEL + 1


def pooled_length(L_conv: int) -> int:
    return (L_conv - 1) // 2 + 1


def tap_inputs(L: int, padding: int) -> np.ndarray:
    """[L_conv, 3] the input position each tap of each conv output reads: (k − p + t) mod L."""
    k = np.arange(conv_length(L, padding))[:, None]
    return (k - padding + np.arange(KERNEL)[None, :]) % L


def _normalise(P: np.ndarray) -> np.ndarray:
    sums = P.sum(axis=-1, keepdims=True)
    return np.divide(P, sums, out=np.zeros_like(P), where=sums > 0)


def structural_transfer(L: int, padding: int = 1) -> np.ndarray:
    """[L_out, L] the taps of every conv output in every pool window, counted alike, rows normalised."""
    L_conv = conv_length(L, padding)
    taps = tap_inputs(L, padding)  # [L_conv, 3]
    L_out = pooled_length(L_conv)
    P = np.zeros((L_out, L))
    for j in range(L_out):
        for k in range(max(2 * j - 1, 0), min(2 * j + 1, L_conv - 1) + 1):
            np.add.at(P[j], taps[k], 1.0)
    return _normalise(P)


def routed_transfer(kept: np.ndarray, L: int, padding: int = 1) -> np.ndarray:
    """[L_out, L] from the pool's winners kept [C, L_out] (conv positions, the hook "<distil>.kept" of one window):
    each channel's winner spread evenly over its three taps, averaged over channels."""
    kept = np.asarray(kept, dtype=np.int64)
    C, L_out = kept.shape
    taps = tap_inputs(L, padding)[kept]  # [C, L_out, 3]
    P = np.zeros((L_out, L))
    rows = np.broadcast_to(np.arange(L_out)[None, :, None], taps.shape)
    np.add.at(P, (rows.reshape(-1), taps.reshape(-1)), 1.0 / (KERNEL * C))
    return _normalise(P)


@torch.no_grad()
def jacobian_transfer(distil: DistillingLayer, x: torch.Tensor) -> np.ndarray:
    """[L_out, L] ‖∂y_j/∂x_i‖_F of the distilling layer (eval mode) at one window's input x [L, d_model], rows
    normalised."""
    if distil.training:
        raise ValueError("the Jacobian form needs the model in eval mode (BatchNorm's running statistics)")
    distil = on_cpu(distil)  # computed on the CPU, in float64 where it sums
    x = x.detach().cpu().to(distil.conv.weight.dtype)[None]  # [1, L, d]
    L, p = x.shape[1], distil.conv.padding[0]
    z = batch_norm_rows(circular_conv(x, distil.conv), distil.norm)  # [1, L_conv, C] before the ELU
    y = F.elu(z, distil.activation.alpha)
    winners = pool_indices(y, max_pool3(y))[0]  # [L_out, C] conv positions
    norm = distil.norm
    a = (norm.running_var + norm.eps).rsqrt()
    a = a if norm.weight is None else a * norm.weight  # [C]
    z_won = z[0].gather(0, winners)  # [L_out, C]
    slope = torch.where(z_won > 0, torch.ones_like(z_won), distil.activation.alpha * torch.exp(z_won))  # ELU'
    s = (slope * a).double()  # [L_out, C]
    W = distil.conv.weight.double()  # [C_out, C_in, 3]
    L_out = winners.shape[0]
    taps = torch.as_tensor(tap_inputs(L, p))[winners]  # [L_out, C, 3] input position of each tap
    if L >= KERNEL:  # the three taps read three different inputs: the block norms add up channel by channel
        tap_sq = (W * W).sum(dim=1)  # [C, 3] ‖W[c, :, t]‖²
        contrib = (s * s)[..., None] * tap_sq[None]  # [L_out, C, 3]
        J2 = torch.zeros(L_out, L, dtype=torch.float64)
        J2.scatter_add_(1, taps.reshape(L_out, -1), contrib.reshape(L_out, -1))
    else:  # taps wrap onto the same input: add the tap vectors before the norm
        blocks = torch.zeros(L_out, L, W.shape[0], W.shape[1], dtype=torch.float64)  # [L_out, L, C, C_in]
        for j in range(L_out):
            for c in range(W.shape[0]):
                for t in range(KERNEL):
                    blocks[j, taps[j, c, t], c] += s[j, c] * W[c, :, t]
        J2 = (blocks * blocks).sum(dim=(2, 3))
    return _normalise(J2.sqrt().numpy())


def transfer_matrix(form: str, distil: DistillingLayer, x: torch.Tensor | None, kept: np.ndarray | None,
                    L: int) -> np.ndarray:
    """P of one distilling step in `form` (FORMS): x [L, d] the step's input (jacobian), kept [C, L_out] its pool
    winners (routed)."""
    padding = distil.conv.padding[0]
    if form == "structural":
        return structural_transfer(L, padding)
    if form == "routed":
        if kept is None:
            raise ValueError("the routed form needs the pool's winners (hook '<distil>.kept')")
        return routed_transfer(kept, L, padding)
    if form == "jacobian":
        if x is None:
            raise ValueError("the Jacobian form needs the distilling step's input")
        return jacobian_transfer(distil, x)
    raise ValueError(f"distil form must be one of {', '.join(FORMS)}, got {form!r}")


__all__ = ["FORMS", "jacobian_transfer", "routed_transfer", "structural_transfer", "tap_inputs",
           "transfer_matrix"]
