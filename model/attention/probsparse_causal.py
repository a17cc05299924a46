"""ProbSparse's causal form (the decoder's self-attention) when its queries share a few key samples (one per block of
sample_block queries: one at the decoder's usual lengths, a few for a long label_len), in few kernels.

The same mathematics as `model.attention.probsparse_attention`'s general path (Zhou et al. 2021, §3.1, causal):

- M̄ on a block's U shared keys as one GEMM with the keys as rows, [BH, U, block] (the reductions over the sample
  then run along contiguous queries), each query scored only on the sampled keys j ≤ i plus its own key
  (causal_sampling=True), or on every sampled key (the official code);
- M̄ only chooses queries: no gradient, no [B, H, L_Q, U] table kept;
- the u chosen queries' rows over the keys j ≤ i as one `baddbmm` onto their rows of an additive causal mask,
  explicit while small (the flash kernel with a mask when long); the lazy rows the running mean (or sum) of V,
  the chosen rows copied over it.

Measured (ETTh1 decoder self-attention [32, 4, 72, 16], one thread): the general path's masked_fill, amax,
gather, mask and SDPA took ~5 ms forward and ~4 ms backward a training step. A long label_len made the decoder longer
than sample_block, and it went to the general path, whose boolean mask SDPA converts with a `where` over [B, H, u, L]:
[64, 4, 816, 8] (label 720 + pred 96, two blocks) took 95.5 ms a call there, 66.3 here; 1248 queries 161 → 125 ms.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .probsparse_blocks import EXPLICIT_ROWS, time_major_rows
from .probsparse_small import query_rows

MAX_BLOCKS = 32  # key samples up to which this form scores block by block (the official per-query sample: general)


def causal_sampled_sparsity(q: torch.Tensor, k: torch.Tensor, keys: torch.Tensor, mean_divisor: str,
                            causal_sampling: bool, start: int = 0) -> torch.Tensor:
    """M̄ of queries start … start + c − 1 on their shared sample, unscaled. q: [BH, c, D] (those queries), k: [BH, L,
    D] (every key); keys: [U] → [BH, c].

    causal_sampling: only the sampled keys j ≤ i and the query's own key count (n = those + 1 for "U", i + 1 for
    "L_K"); else every sampled key (n = U or L_K), as the official code scores them.
    """
    BH, c, D = q.shape
    L, U = k.shape[1], keys.numel()
    scores = torch.matmul(k.index_select(1, keys), q.transpose(1, 2))  # [BH, U, c]: q_i·k_s
    if not causal_sampling:
        return scores.amax(dim=1) - scores.sum(dim=1) / (U if mean_divisor == "U" else L)
    position = torch.arange(start, start + c, device=q.device)  # [c]: the queries i
    hidden = keys.unsqueeze(1) > position  # [U, c]: key s lies in query i's future
    own = (q * k[:, start:start + c]).sum(dim=-1)  # [BH, c]: q_i·k_i
    # (additive -inf and a 0/1 factor: masked_fill with a broadcast mask is ~5× slower here)
    peak = torch.maximum((scores + torch.zeros(U, c, dtype=q.dtype, device=q.device).masked_fill_(
        hidden, float("-inf"))).amax(dim=1), own)
    total = (scores * (~hidden).to(q.dtype)).sum(dim=1).add_(own)
    if mean_divisor == "U":
        n = (U - hidden.sum(dim=0) + 1).to(q.dtype)  # [c]
    else:
        n = (position + 1).to(q.dtype)
    return peak.sub_(total.div_(n))


def running_values(V: torch.Tensor, decoder_lazy: str) -> torch.Tensor:
    """Lazy rows of the causal decoder: Σ_{j≤i} v_j ("cumsum") or its mean ("cummean"). V: [B, H, L, D] → a new
    tensor [B, L, H, D], time-major (contiguous), so that the layer merges the heads without a copy."""
    running = V.transpose(1, 2).cumsum(dim=1)  # [B, L, H, D]
    if decoder_lazy == "cummean":
        counts = torch.arange(1, V.shape[2] + 1, device=V.device, dtype=V.dtype).view(-1, 1, 1)  # [L, 1, 1]
        running = running / counts
    return running


def shared_sample_causal(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, draws: torch.Tensor, block: int, u: int,
                         *, mean_divisor: str, causal_sampling: bool, decoder_lazy: str, need_rows: bool,
                         order_selected: bool = True
                         ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """(context [B, H, L, D], rows [B, H, u, L] or None, selected [B, H, u], M̄ on the q·k/√D scale [B, H, L]).

    Q, K, V: [B, H, L, D] (causal self-attention, L_Q = L_K = L); draws: [n_blocks, U], row b the keys queries
    b·block … (b + 1)·block − 1 are scored on (the last block may be partial).
    """
    B, H, L, D = Q.shape
    BH, scale = B * H, 1 / math.sqrt(D)
    q, k, v = (t.reshape(BH, L, D) for t in (Q, K, V))  # [BH, L, D]
    with torch.no_grad():
        M_bar = torch.cat([causal_sampled_sparsity(q[:, a:a + block], k, keys, mean_divisor, causal_sampling, start=a)
                           for a, keys in zip(range(0, L, block), draws)], dim=1)  # [BH, L]
        selected = M_bar.topk(u, dim=-1, sorted=order_selected).indices  # [BH, u] (sorted: largest M̄ first)
    flat = query_rows(selected, L)  # [BH·u] rows of q
    top = q.reshape(BH * L, D).index_select(0, flat).view(BH, u, D)  # [BH, u, D]
    future = torch.full((L, L), float("-inf"), device=Q.device, dtype=Q.dtype).triu_(1)  # [L, L]: 0 on j ≤ i
    mask = future.index_select(0, selected.view(-1)).view(BH, u, L)  # [BH, u, L]
    rows = None
    if need_rows or BH * u * L <= EXPLICIT_ROWS:
        rows = torch.softmax(torch.baddbmm(mask, top, k.transpose(1, 2), alpha=scale), dim=-1)  # [BH, u, L]
        context = rows @ v  # [BH, u, D]
    else:
        context = F.scaled_dot_product_attention(top.view(B, H, u, D), k.view(B, H, L, D), v.view(B, H, L, D),
                                                 attn_mask=mask.view(B, H, u, L), scale=scale).reshape(BH, u, D)
    running = running_values(v.view(B, H, L, D), decoder_lazy).view(B * L * H, D)  # time-major rows
    # (under CUDA autocast the running means are float32, cumsum's type there, and the rows bf16)
    out = running.index_copy_(0, time_major_rows(selected, L, H), context.reshape(BH * u, D).to(running.dtype))
    return (out.view(B, L, H, D).transpose(1, 2), rows.view(B, H, u, L) if need_rows else None,
            selected.view(B, H, u), M_bar.mul_(scale).view(B, H, L))
