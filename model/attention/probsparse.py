"""ProbSparse self-attention (Zhou et al. 2021, §3.1): the u queries with the highest sampled sparsity M̄ attend to
every key; the others take the lazy context. Key sampling and M̄ are in probsparse_sample.py, the encoder's fast form
in probsparse_blocks.py, the decoder's (a few key samples shared by blocks of queries) in probsparse_causal.py."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .full import AttentionResult
from .probsparse_blocks import shared_sample_attention
from .probsparse_causal import MAX_BLOCKS as MAX_CAUSAL_BLOCKS, shared_sample_causal
from .probsparse_sample import draw_key_sample, KeySample, sample_sizes, sampled_sparsity


def lazy_context(V: torch.Tensor, L_Q: int, *, causal: bool, decoder_lazy: str) -> torch.Tensor:
    """What an unselected ("lazy") query returns. V: [B, H, L_K, D] → [B, H, L_Q, D].

    Non-causal: mean_j(v_j) on every row. Causal (L_Q = L_K): row i gets Σ_{j≤i} v_j (official, "cumsum")
    or its mean (1/(i+1))·Σ_{j≤i} v_j ("cummean").
    """
    if not causal:
        return V.mean(dim=-2, keepdim=True).expand(-1, -1, L_Q, -1)
    if V.shape[2] != L_Q:
        raise ValueError(f"causal ProbSparse needs L_Q == L_K, got {L_Q} and {V.shape[2]}")
    running = V.cumsum(dim=-2)
    if decoder_lazy == "cummean":
        counts = torch.arange(1, L_Q + 1, device=V.device, dtype=V.dtype).view(1, 1, L_Q, 1)
        running = running / counts
    return running


def probsparse_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, factor: int, causal: bool,
                         mean_divisor: str, decoder_lazy: str, sample_block: int, causal_sampling: bool = True,
                         generator: torch.Generator | None = None, sample: KeySample | None = None,
                         need_rows: bool = False, counts: str = "paper",
                         single_head_union: bool = False, need_scores: bool = True,
                         order_selected: bool = True) -> AttentionResult:
    """ProbSparse self-attention.

    1. Score every query by M̄ on U = c·⌈ln L_K⌉ sampled keys (causal: only those it may attend to, unless
       causal_sampling=False, the official behaviour, which also counts keys in the query's future).
    2. The u = c·⌈ln L_Q⌉ highest-scoring queries (per batch element and head) attend to all keys.
    3. Every other query takes the lazy context; the selected rows overwrite it.
    Q: [B, H, L_Q, D], K, V: [B, H, L_K, D]. need_rows=False skips materialising the u × L_K rows (SDPA).
    counts: how u and U follow the lengths (`sample_sizes`). single_head_union (TSL, one head only): every window
    computes the rows of the whole batch's top-u queries (selected is then [B, 1, B·u], with repeats).
    need_scores=False: the encoder form (`model.attention.probsparse_blocks`) keeps M̄ in its work space (scores None).
    order_selected=False: `selected` in no particular order (the same set: torch's top-k sorts after choosing) — the
    shared-sample forms then skip the sort (the training step's case, where nobody reads the order).
    """
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    U, u = sample_sizes(factor, L_Q, L_K, counts)
    scale = 1.0 / math.sqrt(D)
    if sample is None:
        sample = draw_key_sample(L_Q, L_K, U, sample_block, generator, Q.device)
    union = single_head_union and H == 1 and B > 1
    if not causal and sample.block > 1 and not union:  # the encoder form
        return AttentionResult(*shared_sample_attention(Q, K, V, sample.draws, sample.block, u,
                                                        U if mean_divisor == "U" else L_K, need_rows, need_scores,
                                                        order_selected),
                               sample)
    if causal and len(sample.draws) <= MAX_CAUSAL_BLOCKS and L_K == L_Q and not union:  # the decoder's form
        return AttentionResult(*shared_sample_causal(Q, K, V, sample.draws, min(sample.block, L_Q), u,
                                                     mean_divisor=mean_divisor, causal_sampling=causal_sampling,
                                                     decoder_lazy=decoder_lazy, need_rows=need_rows,
                                                     order_selected=order_selected), sample)

    M_bar = sampled_sparsity(Q, K, sample, mean_divisor, causal=causal and causal_sampling)  # [B, H, L_Q]
    selected = M_bar.topk(u, dim=-1, sorted=True).indices  # [B, H, u]
    if single_head_union and H == 1 and B > 1:  # TSL's squeeze quirk (InformerConfig.single_head_union)
        selected = selected.reshape(1, 1, B * u).expand(B, 1, B * u)

    Q_top = torch.gather(Q, 2, selected.unsqueeze(-1).expand(-1, -1, -1, D))  # [B, H, u, D]
    future = None
    if causal:
        future = torch.arange(L_K, device=Q.device).view(1, 1, 1, L_K) > selected.unsqueeze(-1)  # [B, H, u, L_K]
    rows = None
    if need_rows:
        scores_top = (Q_top @ K.transpose(-2, -1)) * scale  # [B, H, u, L_K]
        if causal:
            scores_top = scores_top.masked_fill(future, float("-inf"))
        rows = torch.softmax(scores_top, dim=-1)  # [B, H, u, L_K]
        context_top = rows @ V  # [B, H, u, D]
    else:  # the same softmax(q·K/√D)V for the u selected queries, without materialising their rows
        context_top = F.scaled_dot_product_attention(Q_top, K, V, attn_mask=None if future is None else ~future,
                                                     scale=scale)

    context = lazy_context(V, L_Q, causal=causal, decoder_lazy=decoder_lazy).contiguous()  # [B, H, L_Q, D]
    context = context.scatter_(2, selected.unsqueeze(-1).expand(-1, -1, -1, D), context_top.type_as(context))
    return AttentionResult(context, rows, selected, M_bar * scale, sample)
