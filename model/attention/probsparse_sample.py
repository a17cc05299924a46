"""ProbSparse's key sample and the query sparsity measurement M̄ (Zhou et al. 2021, §3.1, Lemma 1 and Eq. 4): u and
U from the lengths, the keys drawn per block of queries, M̄ = max − mean of the sampled dot products."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch


def active_count(factor: int, length: int) -> int:
    """u = c·⌈ln L⌉ (queries) or U = c·⌈ln L⌉ (sampled keys), capped at L and at least 1."""
    return max(1, min(length, factor * math.ceil(math.log(length)))) if length > 1 else 1


def sample_sizes(factor: int, L_Q: int, L_K: int, counts: str = "paper") -> tuple[int, int]:
    """(U sampled keys, u active queries). "paper": U = c·⌈ln L_K⌉, u = c·⌈ln L_Q⌉ (`active_count`). "hf" (Hugging
    Face's ProbSparse): U = c·L_Q·⌈ln(1 + L_K)⌉, u = c·⌈ln(1 + L_Q)⌉. Each capped at its length."""
    if counts == "hf":
        return (max(1, min(L_K, factor * L_Q * math.ceil(math.log1p(L_K)))),
                max(1, min(L_Q, factor * math.ceil(math.log1p(L_Q)))))
    return active_count(factor, L_K), active_count(factor, L_Q)


# --------------------------------------------------------------------------------------------
# Key sampling and the query sparsity measurement M̄
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeySample:
    """Keys drawn (uniformly, with replacement) to score each query.

    draws: [n_blocks, U] long; queries i with equal i // block share row i // block (block 1: the official scheme).
    index: [L_Q, U]; row i lists the keys that query i is scored against (expanded from the draws when first read).
    """

    draws: torch.Tensor
    block: int
    L_Q: int

    @functools.cached_property
    def index(self) -> torch.Tensor:
        return self.draws.repeat_interleave(min(self.block, self.L_Q), dim=0)[:self.L_Q] if self.block > 1 \
            else self.draws


def draw_key_sample(L_Q: int, L_K: int, U: int, block: int, generator: torch.Generator | None,
                    device: torch.device) -> KeySample:
    """One draw per block of queries. With block=1 this is exactly the official `torch.randint(L_K, (L_Q, U))`."""
    n_blocks = -(-L_Q // block)
    gen_device = generator.device if generator is not None else torch.device("cpu")
    draws = torch.randint(L_K, (n_blocks, U), generator=generator, device=gen_device)  # [n_blocks, U]
    return KeySample(draws.to(device), block, L_Q)


def sampled_dot_products(Q: torch.Tensor, K: torch.Tensor, sample: KeySample) -> torch.Tensor:
    """q_i·k_j for every query i and its sampled keys j = index[i, s], unscaled.

    Q: [B, H, L_Q, D], K: [B, H, L_K, D] → [B, H, L_Q, U].
    Shared blocks are scored as one batched GEMM (no [B, H, L_Q, U, D] tensor is ever built);
    block=1 gathers from the whole QKᵀ when that is small, else gathers keys in chunks that bound memory.
    """
    B, H, L_Q, D = Q.shape
    U = sample.index.shape[1]
    if sample.block > 1:
        block = min(sample.block, L_Q)  # a block longer than L_Q is one block of L_Q queries
        n_full = L_Q // block
        parts = []
        if n_full:
            Q_blocks = Q[:, :, : n_full * block].reshape(B, H, n_full, block, D)
            K_blocks = K[:, :, sample.index[: n_full * block : block]]  # [B, H, n_full, U, D]
            parts.append((Q_blocks @ K_blocks.transpose(-2, -1)).reshape(B, H, n_full * block, U))
        if L_Q > n_full * block:  # the last, partial block
            K_rest = K[:, :, sample.index[n_full * block]]  # [B, H, U, D]
            parts.append(Q[:, :, n_full * block:] @ K_rest.transpose(-2, -1))  # [B, H, rest, U]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=2)
    L_K = K.shape[2]
    if B * H * L_Q * L_K <= (1 << 22):
        # Short sequences: the whole QKᵀ (≤ 16 MB) and a gather from it are far cheaper, forward and backward,
        # than B·H·L_Q tiny [U, D] products (7× a whole training step at L = 96).
        return torch.gather(Q @ K.transpose(-2, -1), 3, sample.index.expand(B, H, L_Q, U))
    out = Q.new_empty(B, H, L_Q, U)
    chunk = max(1, (1 << 24) // max(1, B * H * U * D))  # ≤ 64 MB of gathered fp32 keys at a time
    for start in range(0, L_Q, chunk):
        stop = min(L_Q, start + chunk)
        K_sampled = K[:, :, sample.index[start:stop]]  # [B, H, c, U, D]
        out[:, :, start:stop] = (K_sampled @ Q[:, :, start:stop, :, None]).squeeze(-1)
    return out


def sparsity_from_samples(QK_sample: torch.Tensor, L_K: int, mean_divisor: str) -> torch.Tensor:
    """M̄(q_i, K) = max_j q_i·k_j − (Σ_j q_i·k_j) / n over the sampled j, unscaled. [B, H, L_Q, U] → [B, H, L_Q].

    n = U (a mean over the sample) or L_K (the official code, issue #582).
    """
    divisor = QK_sample.shape[-1] if mean_divisor == "U" else L_K
    return QK_sample.amax(dim=-1) - QK_sample.sum(dim=-1) / divisor


def causal_sparsity_from_samples(QK_sample: torch.Tensor, index: torch.Tensor, positions: torch.Tensor,
                                 QK_self: torch.Tensor, mean_divisor: str) -> torch.Tensor:
    """M̄ over the keys a causal query may attend to: its sampled keys j ≤ i, plus its own key j = i.

    QK_sample: [B, H, c, U]; index: [c, U] sampled keys; positions: [c] the queries i; QK_self: [B, H, c] q_i·k_i.
    n = the allowed samples + 1 ("U") or the allowed keys i + 1 ("L_K"). Unscaled → [B, H, c].
    """
    allowed = index <= positions.unsqueeze(1)  # [c, U]
    peak = torch.maximum(QK_sample.masked_fill(~allowed, float("-inf")).amax(dim=-1), QK_self)
    total = (QK_sample * allowed).sum(dim=-1) + QK_self
    n = allowed.sum(dim=-1) + 1 if mean_divisor == "U" else positions + 1
    return peak - total / n.to(QK_sample.dtype)


def sampled_sparsity(Q: torch.Tensor, K: torch.Tensor, sample: KeySample, mean_divisor: str,
                     causal: bool = False) -> torch.Tensor:
    """M̄ for every query, unscaled: [B, H, L_Q]. Scored a few blocks at a time, so the
    [B, H, L_Q, U] table of sampled dot products never exists whole (it would be the largest tensor).

    causal=True scores each query only on the sampled keys it may attend to (see causal_sparsity_from_samples);
    causal=False uses every sampled key (the official code does so even in the causal decoder).
    """
    B, H, L_Q, _ = Q.shape
    U, block = sample.draws.shape[1], sample.block
    chunk = max(block, ((1 << 21) // max(1, B * H * U)) // block * block)  # ≤ 8 MB of fp32 scores at a time
    parts = []
    for start in range(0, L_Q, chunk):  # a chunk starts at a block's first query
        stop = min(L_Q, start + chunk)
        part = KeySample(sample.draws[start // block:-(-stop // block)], block, stop - start)
        Q_part, index = Q[:, :, start:stop], part.index
        QK_sample = sampled_dot_products(Q_part, K, part)
        if causal:
            positions = torch.arange(start, stop, device=Q.device)
            QK_self = (Q_part * K[:, :, start:stop]).sum(dim=-1)  # [B, H, c]
            parts.append(causal_sparsity_from_samples(QK_sample, index, positions, QK_self, mean_divisor))
        else:
            parts.append(sparsity_from_samples(QK_sample, K.shape[2], mean_divisor))
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
