"""ProbSparse's encoder form (non-causal, one key sample per block of queries), arranged for speed and memory.

The same mathematics as `model.attention.probsparse_attention`'s general path (Zhou et al. 2021, §3.1):

- each block's U sampled keys are gathered once, and all of a block's dot products are one GEMM (the sampled keys ×
  the block's queries);
- M̄ = max over the sample − q·(Σ sampled k)/n: the keys are gathered with one more row, their sum, so the same GEMM
  gives the sum of a query's sampled dot products (no second pass); M̄ only chooses queries, so it takes no gradient;
- the u queries with the largest M̄ get their softmax rows over every key, the others mean(V). Without autograd the
  rows are explicit, over the spent work space, with torch's fused softmax in place: at L = 8192 (B 4, H 8, D 64,
  one thread) a call took 240 ms against 256 with the flash kernel of `scaled_dot_product_attention`.

Without autograd the heads are done a few at a time, each chunk's part of the output its work space until it is
written (the call needs little more than its output, as `scaled_dot_product_attention` does), its dot products small
enough to stay in the cache. Its kernels run on one torch thread; on a call big enough, the chunks are shared between
as many Python threads as torch had threads. Measured: at seq_len 96 on two threads of a busy two-core
machine the general path's kernels, each waiting at its barrier for a descheduled thread, took 73 ms where one thread
takes 0.9 ms; at 8192 the dot products of 1 or 2 heads at a time took 43 ms, of all 32 at once 77 ms (the cache).
Pure functions of their inputs; nothing but a thread pool is kept between calls.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .probsparse_small import query_rows, small_shared_attention, takes_small_path
from .threads import one_torch_thread, run_chunks

EXPLICIT_ROWS = 1 << 20  # B·H·u·L_K up to which the selected queries' rows are computed explicitly (4 MB)
CACHE_FLOATS = 1 << 19  # 2 MB: the dot products of a chunk of heads (one head at L = 8192)
PARALLEL_FLOATS = 1 << 16  # B·H·L_Q·D per thread below which a call runs in the calling thread alone
WORK_FLOATS = 1 << 21  # 8 MB: the autograd path's work space for M̄
DEVICE_WORK_FLOATS = 1 << 26  # 256 MB on a GPU: every head's M̄ in one pass up to L ≈ 40,000 (B 4, H 8, D 64)


def work_floats(L_Q: int, D: int, n_all: int, U: int, block: int) -> int:
    """The scratch `block_scores` needs per head: the gathered keys and sums, and the full blocks' products."""
    return n_all * (U + 1) * D + (U + 1) * (L_Q // block) * block


def block_scores(q: torch.Tensor, k: torch.Tensor, draws: torch.Tensor, block: int, divisor: int,
                 work: torch.Tensor | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """M̄ of every query, unscaled: [c, L_Q] (written into `out` when given). q: [c, L_Q, D], k: [c, L_K, D]; draws:
    [n_blocks, U], the keys drawn for queries i with i // block = row (the last block may be partial). `work`: at
    least c · `work_floats(...)` floats of scratch (None: allocated)."""
    c, L_Q, D = q.shape
    n_all, U = draws.shape
    n_full = L_Q // block
    full = n_full * block
    if work is None:
        work = q.new_empty(c * work_floats(L_Q, D, n_all, U, block))
    at = c * n_all * (U + 1) * D
    spare = torch.cat([draws, draws[:, :1]], dim=1).reshape(-1)  # [n_all·(U + 1)]: a slot for each block's sum
    keys = torch.index_select(k, 1, spare, out=work[:at].view(c, n_all * (U + 1), D)).view(c, n_all, U + 1, D)
    torch.sum(keys[:, :, :U], dim=2, out=keys[:, :, U])  # [c, n_all, D]: Σ of each block's sampled keys
    M_bar = q.new_empty(c, L_Q) if out is None else out
    if n_full:
        blocks = q[:, :full].view(c, n_full, block, D)
        S = torch.matmul(keys[:, :n_full], blocks.transpose(-1, -2),
                         out=work[at:at + c * (U + 1) * full].view(c, n_full, U + 1, block))  # [c, n, U + 1, block]
        peak = torch.amax(S[:, :, :U], dim=2)  # [c, n_full, block]
        M_bar[:, :full] = peak.sub_(S[:, :, U], alpha=1 / divisor).view(c, full)
    if full < L_Q:  # the last, partial block
        S = q[:, full:] @ keys[:, -1].transpose(-1, -2)  # [c, rest, U + 1]
        M_bar[:, full:] = S[:, :, :U].amax(dim=-1) - S[:, :, U] / divisor
    return M_bar


# ------------------------------------------------------------------------------------------ the attention
def shared_sample_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, draws: torch.Tensor, block: int,
                            u: int, divisor: int, need_rows: bool, need_scores: bool = True,
                            order_selected: bool = True, batched: bool | None = None
                            ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
    """(context [B, H, L_Q, D], rows [B, H, u, L_K] or None, selected [B, H, u], M̄ on the q·k/√D scale [B, H, L_Q]
    or None).

    batched (None: on any device but the CPU): every head at once, as with autograd, instead of cache-sized chunks on
    Python threads. On an H100 the chunks took 42.7 ms at L = 8192 (B 4, H 8, D 64), SDPA 16.1 ms and the per-query
    sample (block = 1, a few large kernels) 8.4 ms: a GPU has no cache to fit and launches each small kernel.

    Q: [B, H, L_Q, D], K, V: [B, H, L_K, D]; draws [n_blocks, U]: the sampled keys of each block of `block` queries;
    divisor: the n of M̄'s mean (U, or L_K as in the official code); need_rows / need_scores: return the softmax rows /
    M̄ (without them M̄ lives in the work space only)."""
    B, H, L_Q, D = Q.shape
    L_K, (n_all, U) = K.shape[2], draws.shape
    BH, block, scale = B * H, min(block, L_Q), 1 / math.sqrt(D)
    q, k, v = (t.reshape(BH, -1, D).contiguous() for t in (Q, K, V))  # [BH, L, D]: views (copies of slices)
    on_cpu = Q.device.type == "cpu"
    if (not on_cpu if batched is None else batched) or \
            (torch.is_grad_enabled() and (Q.requires_grad or K.requires_grad or V.requires_grad)):
        return _differentiable(q, k, v, draws, block, u, divisor, need_rows, Q.new_empty(BH, L_Q), B, order_selected,
                               work_floats_max=WORK_FLOATS if on_cpu else DEVICE_WORK_FLOATS)
    M_bar = Q.new_empty(BH, L_Q) if need_scores or torch.is_grad_enabled() else None
    selected = torch.empty(BH, u, dtype=torch.long, device=Q.device)
    rows = Q.new_empty(BH, u, L_K) if need_rows else None
    if takes_small_path(BH, L_Q, L_K, U, n_all):  # a dozen kernels over every head (model/attention/probsparse_small.py)
        out = Q.new_empty(BH, L_Q, D)
        M_bar = M_bar if M_bar is not None else Q.new_empty(BH, L_Q)
        # One thread, the calling one: at L = 96 (B 4, H 8, D 64) the heads split between two Python threads took
        # 2.1-2.5 ms where one thread takes 1.3-1.7: each of the dozen short kernels hands the GIL over.
        with torch.no_grad(), one_torch_thread():
            small_shared_attention(q, k, v, draws[0], u, divisor, scale, out, selected, M_bar, rows, order_selected)
        return (out.view(B, H, L_Q, D), rows.view(B, H, u, L_K) if need_rows else None, selected.view(B, H, u),
                M_bar.mul_(scale).view(B, H, L_Q) if need_scores else None)
    out, context = Q.new_empty(BH, L_Q, D), Q.new_empty(BH, u, D)
    one_block = n_all == 1  # every query scored on the same keys: M̄ straight from one GEMM, no work space
    per_head = (U * L_Q if one_block else work_floats(L_Q, D, n_all, U, block)) + (0 if need_scores else L_Q)
    chunk = max(1, min(BH, CACHE_FLOATS // max(per_head, u * L_K)))

    def heads(a: int, b: int) -> None:
        """Everything of heads a … b − 1 (a cache-sized chunk); with several blocks, the chunk's part of the output is
        its work space (the sampled keys, their products, M̄, then the selected queries' rows) until it is written."""
        c, kc, vc, oc = b - a, k[a:b], v[a:b], out[a:b]
        work = oc.view(-1) if per_head <= L_Q * D and u * L_K <= L_Q * D else Q.new_empty(c * max(per_head, u * L_K))
        scores = M_bar[a:b] if need_scores else work[work.numel() - c * L_Q:].view(c, L_Q)
        if one_block:
            products = torch.bmm(kc.index_select(1, draws[0]), q[a:b].transpose(1, 2))  # [c, U, L_Q]
            torch.sub(products.amax(dim=1), products.sum(dim=1), alpha=1 / divisor, out=scores)
        else:
            block_scores(q[a:b], kc, draws, block, divisor, work, out=scores)
        chosen = selected[a:b] = scores.topk(u, dim=-1, sorted=order_selected).indices  # [c, u]
        flat = query_rows(chosen, L_Q)  # [c·u] rows
        top = q[a:b].reshape(c * L_Q, D).index_select(0, flat).view(c, u, D)
        # The explicit rows, softmax in place (one fused pass a row): recorded, or over the work space, whose M̄ and
        # products are spent once the queries are chosen.
        R = rows[a:b] if need_rows else work[:c * u * L_K].view(c, u, L_K)  # [c, u, L_K]
        torch.baddbmm(R, top, kc.transpose(1, 2), beta=0, alpha=scale, out=R)  # q·k/√D
        torch.bmm(torch.softmax(R, dim=-1, out=R), vc, out=context[a:b])
        oc.copy_(vc.mean(dim=1, keepdim=True).expand(c, L_Q, D))  # every other query: mean(V) …
        oc.view(c * L_Q, D).index_copy_(0, flat, context[a:b].view(c * u, D).to(oc.dtype))  # … the selected: rows

    with torch.no_grad(), one_torch_thread() as threads:
        n_chunks = -(-BH // chunk)
        workers = min(threads, BH, max(1, BH * L_Q * D // PARALLEL_FLOATS))
        if workers > 1 and n_chunks < workers:  # at least a chunk per thread
            chunk, n_chunks = -(-BH // workers), workers
        run_chunks(n_chunks, lambda i: heads(i * chunk, min(BH, (i + 1) * chunk)), workers)
    return (out.view(B, H, L_Q, D), rows.view(B, H, u, L_K) if need_rows else None, selected.view(B, H, u),
            M_bar.mul_(scale).view(B, H, L_Q) if need_scores else None)


def _differentiable(q, k, v, draws, block, u, divisor, need_rows, M_bar, B, order_selected=True,
                    work_floats_max=WORK_FLOATS):
    """The same with autograd (training): M̄ and the choice without a gradient, in chunks; the rows (SDPA or explicit)
    and the lazy fill as differentiable operations over every head at once."""
    BH, L_Q, D = q.shape
    L_K, H, scale = k.shape[1], BH // B, 1 / math.sqrt(D)
    explicit = need_rows or BH * u * L_K <= EXPLICIT_ROWS  # short rows: three small kernels beat the flash kernel's
    per_head = work_floats(L_Q, D, *draws.shape, block)
    chunk = max(1, min(BH, work_floats_max // per_head))
    with torch.no_grad():
        work = q.new_empty(chunk * per_head)
        for h0 in range(0, BH, chunk):
            h1 = min(BH, h0 + chunk)
            block_scores(q[h0:h1], k[h0:h1], draws, block, divisor, work, out=M_bar[h0:h1])
        selected = M_bar.topk(u, dim=-1, sorted=order_selected).indices  # [BH, u]
    flat = query_rows(selected, L_Q)  # [BH·u] rows
    top = q.reshape(BH * L_Q, D).index_select(0, flat).view(BH, u, D)
    rows = torch.softmax((top * scale) @ k.transpose(1, 2), dim=-1) if explicit else None  # [BH, u, L_K]
    context = rows @ v if explicit else F.scaled_dot_product_attention(
        top.view(B, H, u, D), k.view(B, H, L_K, D), v.view(B, H, L_K, D), scale=scale).reshape(BH, u, D)
    out = time_major_fill(v.view(B, H, L_K, D).mean(dim=2), selected, context.type_as(v), L_Q)  # [B, L_Q, H, D]
    return (out.transpose(1, 2), rows.view(B, H, u, L_K) if need_rows else None, selected.view(B, H, u),
            M_bar.mul_(scale).view(B, H, L_Q))


def time_major_rows(selected: torch.Tensor, L_Q: int, H: int) -> torch.Tensor:
    """Rows of a [B·L_Q·H, D] table (time-major: row (b·L_Q + i)·H + h) of the chosen queries. selected: [B·H, u]."""
    BH = selected.shape[0]
    head = torch.arange(BH, device=selected.device)
    first = (head // H) * (L_Q * H) + head % H  # [BH]: row of query 0 of (b, h)
    return (selected * H + first.unsqueeze(1)).view(-1)  # [BH·u]


def time_major_fill(lazy: torch.Tensor, selected: torch.Tensor, context: torch.Tensor, L_Q: int) -> torch.Tensor:
    """The lazy rows everywhere, the chosen queries' rows over them, laid out time-major, so that the layer merges the
    heads without a copy: lazy [B, H, D], selected [B·H, u], context [B·H, u, D] → [B, L_Q, H, D]."""
    B, H, D = lazy.shape
    table = lazy.unsqueeze(1).expand(B, L_Q, H, D).reshape(B * L_Q * H, D)
    filled = table.index_copy(0, time_major_rows(selected, L_Q, H), context.reshape(-1, D).to(table.dtype))
    return filled.view(B, L_Q, H, D)
