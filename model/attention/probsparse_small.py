"""ProbSparse's encoder form for short inputs without autograd: every query shares one key sample (L_Q ≤ sample_block)
and the whole call is a dozen kernels over all heads at once.

The same answer as `model.attention.probsparse_blocks.shared_sample_attention` (the same M̄ on the same keys, the same
top u, their softmax rows, mean(V) elsewhere; tested to float tolerance): only fewer, larger kernels. At L = 96 (issue
23: B 4, H 8, D 64) a call is ~1 ms of arithmetic, and each of the chunked path's ~35 kernels and views cost 3-25 µs of
dispatch besides: the chunked path took 1.5-2.1 ms, SDPA 1.5-1.9. Here:

    products = K[sample] · Qᵀ                        [BH, U, L_Q]   one GEMM, keys as rows
    M̄ = max − Σ / n over the sample                  [BH, L_Q]      reductions along contiguous queries
    the top u of M̄, their rows of Q                  [BH, u, D]
    their softmax rows over every key, times V       [BH, u, D]     explicit (short rows: faster than the flash kernel)
    mean(V) on every row, the u rows over it         [BH, L_Q, D]
"""
from __future__ import annotations

import functools

import torch

SMALL_FLOATS = 1 << 18  # B·H·U·L_Q up to which a one-block call takes this path (the products: 1 MB)


@functools.lru_cache(maxsize=32)
def _row_offsets(BH: int, L_Q: int, device: torch.device) -> torch.Tensor:
    """Row b·L_Q of a [BH·L_Q, D] table for every b: [BH, 1] long."""
    return torch.arange(0, BH * L_Q, L_Q, device=device).unsqueeze(1)


def query_rows(chosen: torch.Tensor, L_Q: int) -> torch.Tensor:
    """The rows of a head-major [BH·L_Q, D] table that hold the chosen queries: chosen [BH, u] → [BH·u] long."""
    return (chosen + _row_offsets(chosen.shape[0], L_Q, chosen.device)).view(-1)


def small_shared_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keys: torch.Tensor, u: int,
                           divisor: int, scale: float, out: torch.Tensor, selected: torch.Tensor,
                           M_bar: torch.Tensor | None = None, rows: torch.Tensor | None = None,
                           order_selected: bool = True) -> None:
    """Writes out [c, L_Q, D] (the context), selected [c, u], M̄ unscaled [c, L_Q] (when given) and rows [c, u, L_K]
    (when given) for heads q: [c, L_Q, D], k, v: [c, L_K, D] (contiguous), scored on the sample `keys` [U]; divisor:
    the n of M̄'s mean. No autograd (the caller holds torch.no_grad() and `one_torch_thread`).

    `out` is the work space (the products, then the chosen queries and their rows) until it is written: fresh memory
    costs a page fault per 4 KB on first touch, and in a process that has just freed a large tensor those were ~20% of
    a call.
    """
    c, L_Q, D = q.shape
    L_K, U = k.shape[1], keys.numel()
    big, n_top = c * max(U * L_Q, 0 if rows is not None else u * L_K), c * u * D
    work = out.view(-1) if big + n_top <= out.numel() else q.new_empty(big + n_top)
    products = torch.bmm(k.index_select(1, keys), q.transpose(1, 2), out=work[:c * U * L_Q].view(c, U, L_Q))
    M_bar = torch.sub(products.amax(dim=1), products.sum(dim=1), alpha=1 / divisor, out=M_bar)  # [c, L_Q]
    chosen = torch.topk(M_bar, u, dim=-1, sorted=order_selected, out=(q.new_empty(c, u), selected)).indices
    flat = query_rows(chosen, L_Q)  # [c·u] rows of q
    top = torch.index_select(q.view(c * L_Q, D), 0, flat, out=work[big:big + n_top].view(c * u, D)).view(c, u, D)
    R = rows if rows is not None else work[:c * u * L_K].view(c, u, L_K)  # over the products
    torch.baddbmm(R, top, k.transpose(1, 2), beta=0, alpha=scale, out=R)  # q·k/√D
    context = torch.bmm(torch.softmax(R, dim=-1, out=R), v)  # [c, u, D]: the softmax in place, one fused pass a row
    out.copy_(v.mean(dim=1, keepdim=True).expand(c, L_Q, D))  # every query: mean(V) …
    out.view(c * L_Q, D).index_copy_(0, flat, context.view(c * u, D).to(out.dtype))  # … the chosen: their rows


def takes_small_path(BH: int, L_Q: int, L_K: int, U: int, n_blocks: int) -> bool:
    """One key sample for every query and small enough that a dozen kernels over all heads beat chunks."""
    return n_blocks == 1 and BH * U * max(L_Q, L_K) <= SMALL_FLOATS
