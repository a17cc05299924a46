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
