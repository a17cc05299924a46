"""LSH attention (Kitaev et al. 2020, "Reformer: The Efficient Transformer", §2).

Angular locality-sensitive hashing: for n_b buckets draw a random rotation R [D, n_b/2] and hash a vector x by
h(x) = argmax([xR; −xR]) of its direction, so that vectors pointing the same way share a bucket. Queries and keys
are sorted by (bucket, position) and cut into m chunks; a query reads the keys of its own chunk and of the chunk
before whose bucket is its own: P_i = {j : h(q_i) = h(k_j), chunk(k_j) ∈ {chunk(q_i) − 1, chunk(q_i)}}. With several
rounds (independent rotations) a query reads the union of its rounds (the paper's weighting of rounds, with each
repeated key counted once, is the softmax over that union). O(rounds · 2c) keys per query.

Shared-QK attention (the paper's): keys are the queries, normalised (k_j = q_j / ‖q_j‖), one hash serves both, and a
query does not read itself unless it has no other key. As a same-weights swap of a model trained with separate
query and key projections, queries and keys are hashed with the same rotations (no shared projection).

Causal sites: sorting and chunking would let a future key decide which past keys a query reads (its chunk's
members), a leak the paper's causal masking does not close. Here a causal query reads the 2c most recent keys j ≤ i
of its bucket (in each round): the neighbours its chunk and the one before would hold, chosen from the past only.
One bucket with a chunk ≥ L reads every key: full attention (of the shared projection's keys, when shared).
"""
from __future__ import annotations

import math

import torch

from .table import KeyTable, dedupe


def random_rotations(D: int, buckets: int, rounds: int, generator: torch.Generator | None,
                     device: torch.device) -> torch.Tensor:
    """[D, rounds, n_b/2] Gaussian rotations (the key sample of this kind: seeded by the call's generator)."""
    if buckets % 2 and buckets != 1:
        raise ValueError(f"LSH needs an even number of buckets (or 1), got {buckets}")
    gen_device = generator.device if generator is not None else torch.device("cpu")
    R = torch.randn(D, rounds, max(1, buckets // 2), generator=generator, device=gen_device)
    return R.to(device)


def hash_vectors(X: torch.Tensor, rotations: torch.Tensor, buckets: int) -> torch.Tensor:
    """Buckets of X [B, H, L, D] per round: [B, H, rounds, L] (argmax of [xR; −xR] of the unit vector)."""
    if buckets == 1:
        return torch.zeros(*X.shape[:2], rotations.shape[1], X.shape[2], dtype=torch.long, device=X.device)
    unit = X / X.norm(dim=-1, keepdim=True).clamp(min=1e-12)
    proj = torch.einsum("bhld,drk->bhrlk", unit, rotations.to(X.dtype))  # [B, H, rounds, L, n_b/2]
    return torch.cat([proj, -proj], dim=-1).argmax(dim=-1)


def _ranks(buckets: torch.Tensor) -> torch.Tensor:
    """The rank of every position in the (bucket, position) order: [..., L] → [..., L]."""
    L = buckets.shape[-1]
    order = (buckets * L + torch.arange(L, device=buckets.device)).argsort(dim=-1)
    return torch.empty_like(order).scatter_(-1, order, torch.arange(L, device=buckets.device).expand_as(order))


def lsh_table(q_buckets: torch.Tensor, k_buckets: torch.Tensor, *, chunk: int, causal: bool,
              shared: bool) -> KeyTable:
    """q_buckets [B, H, rounds, L_Q], k_buckets [B, H, rounds, L_K] → a table [B, H, L_Q, rounds · 2c]: the keys of
    the query's chunk and the chunk before, in the (bucket, position) order, whose bucket is the query's."""
    B, H, rounds, L_Q = q_buckets.shape
    L_K = k_buckets.shape[-1]
    if causal:
        return _finish(*_recent_in_bucket(q_buckets, k_buckets, 2 * max(1, chunk)), L_Q, L_K, shared)
    c_k = max(1, min(chunk, L_K))
    m = math.ceil(L_K / c_k)  # chunks
    c_q = math.ceil(L_Q / m)
    k_order = (k_buckets * L_K + torch.arange(L_K, device=k_buckets.device)).argsort(dim=-1)  # sorted → key
    q_chunk = _ranks(q_buckets) // c_q  # [B, H, rounds, L_Q]
    slots = torch.arange(2 * c_k, device=q_buckets.device) - c_k  # the chunk before, then the query's own
    sorted_pos = q_chunk.unsqueeze(-1) * c_k + slots  # [B, H, rounds, L_Q, 2c] positions in the key order
    inside = (sorted_pos >= 0) & (sorted_pos < L_K)
    flat = sorted_pos.clamp(0, L_K - 1).reshape(B, H, rounds, -1)
    keys = torch.gather(k_order, -1, flat).view(B, H, rounds, L_Q, 2 * c_k)
    same = torch.gather(k_buckets, -1, keys.reshape(B, H, rounds, -1)).view_as(keys) == q_buckets.unsqueeze(-1)
    valid = inside & same
    index = keys.permute(0, 1, 3, 2, 4).reshape(B, H, L_Q, rounds * 2 * c_k)
    valid = valid.permute(0, 1, 3, 2, 4).reshape(B, H, L_Q, rounds * 2 * c_k)
    return _finish(index, valid, L_Q, L_K, shared)


def _recent_in_bucket(q_buckets: torch.Tensor, k_buckets: torch.Tensor, width: int):
    """Causal: per round, the `width` most recent keys j ≤ i whose bucket is query i's (L_Q = L_K)."""
    B, H, rounds, L = q_buckets.shape
    positions = torch.arange(L, device=q_buckets.device)
    key_code = k_buckets * L + positions  # sortable (bucket, position)
    order = key_code.argsort(dim=-1)
    sorted_code = torch.gather(key_code, -1, order)
    # where query i's (bucket, i) would sit among the sorted keys: the keys before it in its bucket are ≤ i
    end = torch.searchsorted(sorted_code.contiguous(), (q_buckets * L + positions).contiguous(), right=True)
    slots = end.unsqueeze(-1) - width + torch.arange(width, device=q_buckets.device)  # [B, H, rounds, L, w]
    inside = slots >= 0
    keys = torch.gather(order, -1, slots.clamp(min=0).reshape(B, H, rounds, -1)).view(*slots.shape)
    same = torch.gather(k_buckets, -1, keys.reshape(B, H, rounds, -1)).view_as(keys) == q_buckets.unsqueeze(-1)
    valid = inside & same & (keys <= positions.view(1, 1, 1, L, 1))
    index = keys.permute(0, 1, 3, 2, 4).reshape(B, H, L, rounds * width)
    return index, valid.permute(0, 1, 3, 2, 4).reshape(B, H, L, rounds * width)


def _finish(index: torch.Tensor, valid: torch.Tensor, L_Q: int, L_K: int, shared: bool) -> KeyTable:
    """Each key once; shared-QK's self rule; a query with no key left reads key min(i, L_K − 1)."""
    table = dedupe(KeyTable(index, valid))
    index, valid = table.index, table.valid
    positions = torch.arange(L_Q, device=index.device).view(1, 1, L_Q, 1)
    if shared:  # a query reads itself only when nothing else is left (its own key dominates its dot products)
        is_self = index == positions
        others = valid & ~is_self
        valid = others | (~others.any(dim=-1, keepdim=True) & is_self & valid)
    missing = ~valid.any(dim=-1)  # no key left (its bucket is alone in its chunks): it reads key min(i, L_K − 1)
    if bool(missing.any()):
        index, valid = index.clone(), valid.clone()
        fallback = positions.squeeze(-1).clamp(max=L_K - 1).expand_as(missing)
        index[..., -1] = torch.where(missing, fallback, index[..., -1])
        valid[..., -1] |= missing
    return KeyTable(index, valid)


def shared_keys(Q: torch.Tensor) -> torch.Tensor:
    """Shared-QK attention's keys: the queries, normalised (k_j = q_j / ‖q_j‖)."""
    return Q / Q.norm(dim=-1, keepdim=True).clamp(min=1e-12)


__all__ = ["hash_vectors", "lsh_table", "random_rotations", "shared_keys"]


def lsh_attention_sorted(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, q_buckets: torch.Tensor,
                         k_buckets: torch.Tensor, *, chunk: int, shared: bool) -> torch.Tensor:
    """Non-causal LSH attention as the Reformer computes it: per round, queries and keys gathered in (bucket,
    position) order, cut into chunks, each chunk of queries one GEMM against its chunk of keys and the one before,
    masked to the same bucket; the rounds combined by their log-sum-exps, a key a query reads in several rounds
    counted once (its score lowered by the log of that count: the softmax over the union of the rounds, as
    `lsh_table` defines it). O(L · rounds · 2c · D). Same result as the table path (tests)."""
    B, H, rounds, L_Q = q_buckets.shape
    L_K = k_buckets.shape[-1]
    D = Q.shape[-1]
    scale = 1.0 / math.sqrt(D)
    c_k = max(1, min(chunk, L_K))
    m = math.ceil(L_K / c_k)
    c_q = math.ceil(L_Q / m)
    device = Q.device
    q_pos, k_pos = torch.arange(L_Q, device=device), torch.arange(L_K, device=device)
    q_order = (q_buckets * L_Q + q_pos).argsort(dim=-1)  # [B, H, R, L_Q] sorted slot → query
    k_order = (k_buckets * L_K + k_pos).argsort(dim=-1)
    q_chunk = torch.empty_like(q_order).scatter_(-1, q_order, (q_pos // c_q).expand_as(q_order))  # query → chunk
    k_chunk = torch.empty_like(k_order).scatter_(-1, k_order, (k_pos // c_k).expand_as(k_order))
    lse_rounds, out_rounds, query_rounds = [], [], []
    for r in range(rounds):
        qi = torch.nn.functional.pad(q_order[:, :, r], (0, m * c_q - L_Q), value=-1).view(B, H, m, c_q)
        kj = torch.nn.functional.pad(k_order[:, :, r], (0, m * c_k - L_K), value=-1).view(B, H, m, c_k)
        kj = torch.cat([torch.cat([torch.full_like(kj[:, :, :1], -1), kj[:, :, :-1]], dim=2), kj], dim=-1)  # [.., 2c]
        q_g = torch.gather(Q, 2, qi.clamp(min=0).reshape(B, H, -1, 1).expand(B, H, m * c_q, D)).view(B, H, m, c_q, D)
        k_g = torch.gather(K, 2, kj.clamp(min=0).reshape(B, H, -1, 1).expand(B, H, m * 2 * c_k, D)).view(
            B, H, m, 2 * c_k, D)
        v_g = torch.gather(V, 2, kj.clamp(min=0).reshape(B, H, -1, 1).expand(B, H, m * 2 * c_k, V.shape[-1])).view(
            B, H, m, 2 * c_k, -1)
        scores = (q_g @ k_g.transpose(-2, -1)) * scale  # [B, H, m, c_q, 2c]
        qi_e, kj_e = qi.clamp(min=0).unsqueeze(-1), kj.clamp(min=0).unsqueeze(-2)
        ok = (qi.unsqueeze(-1) >= 0) & (kj.unsqueeze(-2) >= 0)
        ok &= _at(q_buckets[:, :, r], qi_e) == _at(k_buckets[:, :, r], kj_e)
        if shared:
            ok &= qi_e != kj_e
        count = torch.zeros(scores.shape, dtype=scores.dtype, device=device)
        for s in range(rounds):  # in how many rounds j is one of i's keys
            same = _at(q_buckets[:, :, s], qi_e) == _at(k_buckets[:, :, s], kj_e)
            cq, ck = _at(q_chunk[:, :, s], qi_e), _at(k_chunk[:, :, s], kj_e)
            count += (same & ((ck == cq) | (ck == cq - 1))).to(scores.dtype)
        scores = scores.masked_fill(~ok, float("-inf")) - torch.log(count.clamp(min=1))
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)  # [B, H, m, c_q, 1]
        p = torch.exp(scores - lse.masked_fill(~torch.isfinite(lse), 0))
        lse_rounds.append(lse.reshape(B, H, -1))
        out_rounds.append((p @ v_g).reshape(B, H, m * c_q, -1))
        query_rounds.append(qi.reshape(B, H, -1))
    # back to query order, then the rounds weighted by their share of the whole softmax
    lse_all, out_all = [], []
    for lse, out, qi in zip(lse_rounds, out_rounds, query_rounds):
        place = qi.masked_fill(qi < 0, L_Q)  # padded slots land in a spare row
        # (each buffer takes its source's type: under autocast logsumexp is float32 and the products bf16)
        lse_q = torch.full((B, H, L_Q + 1), float("-inf"), dtype=lse.dtype, device=device).scatter(-1, place, lse)
        out_q = out.new_zeros(B, H, L_Q + 1, out.shape[-1]).scatter(2, place.unsqueeze(-1).expand_as(out), out)
        lse_all.append(lse_q[:, :, :L_Q])
        out_all.append(out_q[:, :, :L_Q])
    lse_stack = torch.stack(lse_all)  # [R, B, H, L_Q]
    total = torch.logsumexp(lse_stack, dim=0)
    weights = torch.exp(lse_stack - total.masked_fill(~torch.isfinite(total), 0)).nan_to_num(0.0)
    context = (weights.unsqueeze(-1) * torch.stack(out_all)).sum(dim=0)
    alone = ~torch.isfinite(total)  # no key in any round: key min(i, L_K − 1), as the table defines
    if bool(alone.any()):
        fallback = torch.gather(V, 2, q_pos.clamp(max=L_K - 1).view(1, 1, L_Q, 1).expand(B, H, L_Q, V.shape[-1]))
        context = torch.where(alone.unsqueeze(-1), fallback, context)
    return context


def _at(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """values [B, H, L] at index [B, H, m, a, b] (any trailing shape) → same shape as index."""
    B, H = values.shape[:2]
    return torch.gather(values, -1, index.reshape(B, H, -1)).view(index.shape)
