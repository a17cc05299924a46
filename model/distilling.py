"""Self-attention distilling (Zhou et al. 2021, §3.2) in time-major layout: Conv1d(k=3, circular) → BatchNorm → ELU
→ MaxPool(3, 2, 1), each step computed on [B, L, d_model] rows, never transposed to [B, d_model, L].

The modules keep their `nn.Conv1d` / `nn.BatchNorm1d` / `nn.ELU` parameters and buffers (state dicts unchanged), but
the CPU spent more in the layouts than in the maths (mkldnn's convolution and its backward, a transpose
copy on each side and `max_pool2d_with_indices`, 2.1 ms a call on [32, 64, 96], were ~10% of a training step):

- the circular convolution is one GEMM over the k shifted copies of each row (`circular_unfold`: one `index_select`
  of whole rows, wrapping around), the same sum of products as `nn.Conv1d(padding_mode="circular")`;
- BatchNorm over rows [N, C] with its backward written out (`batch_norm_rows`); running statistics as
  `nn.BatchNorm1d` keeps them;
- the max-pool as the elementwise maximum of three strided slices (`max_pool3`), the winner of each window worked out
  only when a gradient or a recorder asks for it, with MaxPool1d's rule (the first maximum in the window wins).
"""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

from .hooks import HookPoint

# --------------------------------------------------------------------------------------------
# Circular convolution as one GEMM
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _unfold_rows(L: int, kernel: int, padding: int) -> torch.Tensor:
    """Row t·k + j of the unfolded window reads input row (t + j − padding) mod L. [L_out·k] long (CPU)."""
    L_out = L + 2 * padding - kernel + 1
    t = torch.arange(L_out).unsqueeze(1) + torch.arange(kernel) - padding  # [L_out, k]
    return t.remainder(L).reshape(-1)


def circular_unfold(x: torch.Tensor, kernel: int, padding: int) -> torch.Tensor:
    """x: [B, L, C] → [B, L_out, k·C], L_out = L + 2·padding − k + 1; column j·C + c of row t is x[(t + j − padding)
    mod L, c] (tap j of a circular convolution window)."""
    B, L, C = x.shape
    rows = _unfold_rows(L, kernel, padding).to(x.device)
    L_out = rows.numel() // kernel
    offsets = torch.arange(0, B * L, L, device=x.device).unsqueeze(1)  # [B, 1]
    picked = x.reshape(B * L, C).index_select(0, (offsets + rows).view(-1))  # [B·L_out·k, C]
    return picked.view(B, L_out, kernel * C)


def conv_taps(weight: torch.Tensor) -> torch.Tensor:
    """A Conv1d weight [O, C, k] as the matrix [O, k·C] that multiplies `circular_unfold`'s columns."""
    O, C, k = weight.shape
    return weight.permute(0, 2, 1).reshape(O, k * C)


def circular_conv(x: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
    """`conv` (kernel k, circular padding p) on time-major x: [B, L, C] → [B, L + 2p − k + 1, O], contiguous."""
    return F.linear(circular_unfold(x, conv.kernel_size[0], conv.padding[0]), conv_taps(conv.weight), conv.bias)


# --------------------------------------------------------------------------------------------
# BatchNorm over rows
# --------------------------------------------------------------------------------------------
class _RowBatchNorm(torch.autograd.Function):
    """Training-mode batch normalisation of y [N, C] with batch statistics (biased variance). Two passes, mean then
    the centred squares (`torch.var_mean` over the rows is ~10× slower on the CPU, one element at a time)."""

    @staticmethod
    def forward(ctx, y, weight, bias, eps):
        N = y.shape[0]
        mean = y.mean(dim=0)  # [C]
        centred = y - mean  # [N, C]
        var = (centred * centred).sum(dim=0).div_(N)  # [C]
        rstd = (var + eps).rsqrt()
        a = rstd if weight is None else rstd * weight
        ctx.save_for_backward(centred, rstd, a)
        ctx.has_weight, ctx.has_bias = weight is not None, bias is not None
        ctx.mark_non_differentiable(mean, var)
        out = centred * a if bias is None else torch.addcmul(bias, centred, a)  # (y − mean)·rstd·w + b
        return out, mean, var

    @staticmethod
    def backward(ctx, grad, _mean, _var):
        centred, rstd, a = ctx.saved_tensors
        N = centred.shape[0]
        sum_g = grad.sum(0)  # [C]
        sum_g_xhat = (grad * centred).sum(0).mul_(rstd)  # Σ g·xhat, xhat = (y − mean)·rstd
        # dL/dy = a·(g − Σg/N − xhat·Σ(g·xhat)/N) = g·a + (y − mean)·k1 + k0
        k1 = -a * rstd * sum_g_xhat / N
        k0 = -a * sum_g / N
        grad_y = torch.addcmul(k0, grad, a).addcmul_(centred, k1) if ctx.needs_input_grad[0] else None
        grad_w = sum_g_xhat if ctx.has_weight and ctx.needs_input_grad[1] else None
        grad_b = sum_g if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_y, grad_w, grad_b, None


def batch_norm_rows(y: torch.Tensor, norm: nn.BatchNorm1d) -> torch.Tensor:
    """`norm` applied to rows y [..., C] (statistics over every leading position, as BatchNorm1d over [B, C, L] takes
    them over B and L), with the module's running statistics updated in training as it updates them."""
    shape, C = y.shape, y.shape[-1]
    rows = y.reshape(-1, C)
    training = norm.training or norm.running_mean is None
    if not training:
        a = (norm.running_var + norm.eps).rsqrt()
        a = a if norm.weight is None else a * norm.weight
        c = -norm.running_mean * a if norm.bias is None else norm.bias - norm.running_mean * a
        return torch.addcmul(c, rows, a).view(shape)
    N = rows.shape[0]
    if N <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(shape)}")
    out, mean, var = _RowBatchNorm.apply(rows, norm.weight, norm.bias, norm.eps)
    if norm.track_running_stats and norm.running_mean is not None:
        with torch.no_grad():
            norm.num_batches_tracked.add_(1)
            m = 1.0 / float(norm.num_batches_tracked) if norm.momentum is None else norm.momentum
            norm.running_mean.mul_(1 - m).add_(mean, alpha=m)
            norm.running_var.mul_(1 - m).add_(var, alpha=m * N / (N - 1))
    return out.view(shape)


# --------------------------------------------------------------------------------------------
# MaxPool1d(kernel 3, stride 2, padding 1) over time
# --------------------------------------------------------------------------------------------
def pooled_length(L: int) -> int:
    return (L - 1) // 2 + 1


def _windows(y: torch.Tensor):
    """Window j reads rows 2j − 1 (left, j ≥ 1), 2j (centre) and 2j + 1 (right, 2j + 1 < L) of y [B, L, C]."""
    L = y.shape[1]
    L_out, n_right = pooled_length(L), L // 2
    return y[:, 0:2 * L_out - 1:2], y[:, 1:2 * L_out - 2:2], y[:, 1:2 * n_right:2], n_right


def pool_winners(y: torch.Tensor, pooled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Which row of its window each pooled value came from, MaxPool1d's way (the first maximum: left before centre
    before right). → (left_won [B, L_out − 1, C] for windows 1 …, centre_won [B, L_out, C]), bool."""
    centre, left, _, _ = _windows(y)
    left_won = left == pooled[:, 1:]
    centre_won = centre == pooled
    centre_won[:, 1:] &= ~left_won
    return left_won, centre_won


class _MaxPool3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        centre, left, right, n_right = _windows(y)
        out = centre.contiguous()  # [B, L_out, C]
        torch.maximum(out[:, :n_right], right, out=out[:, :n_right])
        torch.maximum(out[:, 1:], left, out=out[:, 1:])
        ctx.save_for_backward(y, out)
        return out

    @staticmethod
    def backward(ctx, grad):  # grad: [B, L_out, C]
        y, out = ctx.saved_tensors
        left_won, centre_won = pool_winners(y, out)
        _, _, _, n_right = _windows(y)
        grad_y = torch.zeros_like(y)
        grad_y[:, 0::2][:, :out.shape[1]] = grad * centre_won  # even rows: centres
        right_won = ~(centre_won[:, :n_right] | F.pad(left_won, (0, 0, 1, 0))[:, :n_right])
        odd = grad[:, :n_right] * right_won  # odd row 2j + 1: right of window j …
        odd[:, :left_won.shape[1]] += grad[:, 1:] * left_won  # … and left of window j + 1
        grad_y[:, 1:2 * n_right:2] = odd
        return grad_y


def max_pool3(y: torch.Tensor) -> torch.Tensor:
    """MaxPool1d(kernel 3, stride 2, padding 1) along time: y [B, L, C] → [B, ⌊(L − 1)/2⌋ + 1, C]. Values, and the
    gradient routed to the first maximum of each window, as MaxPool1d's."""
    return _MaxPool3.apply(y)


def pool_indices(y: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
    """MaxPool1d's `return_indices`: the input row each pooled value came from. [B, L_out, C] long."""
    left_won, centre_won = pool_winners(y, pooled)
    L_out = pooled.shape[1]
    centre = torch.arange(0, 2 * L_out, 2, device=y.device).view(1, L_out, 1)
    kept = torch.where(centre_won, centre, centre + 1)
    kept[:, 1:] = torch.where(left_won, centre[:, 1:] - 1, kept[:, 1:])
    return kept


class DistillingLayer(nn.Module):
    """Conv1d(k=3, circular) → BatchNorm → ELU → MaxPool(3, 2, 1): halves the length.

    Hooks: out [B, L_out, d_model]; kept [B, d_model, L_out], the input position each pooled value came from.
    L_out = ⌊(L + 2·padding − 3)/2⌋ + 1 (`model.encoder.distilled_length`).
    """

    def __init__(self, d_model: int, padding: int = 1):
        super().__init__()
        self.conv = nn.Conv1d(d_model, d_model, kernel_size=3, padding=padding, padding_mode="circular")
        self.norm = nn.BatchNorm1d(d_model)
        self.activation = nn.ELU()
        self.pool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)  # no parameters; kept for its repr
        self.hook_out = HookPoint("out")
        self.hook_kept = HookPoint("kept")

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, L, d_model]
        y = F.elu(batch_norm_rows(circular_conv(x, self.conv), self.norm), self.activation.alpha)  # [B, L_c, d_model]
        pooled = max_pool3(y)  # [B, L_out, d_model]
        if self.hook_kept.wanted():
            self.hook_kept(pool_indices(y.detach(), pooled.detach()).transpose(1, 2).contiguous())
        return self.hook_out(pooled)
