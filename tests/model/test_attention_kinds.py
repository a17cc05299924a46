"""Every efficient attention kind against its paper's definition:

- its allowed pattern equals a brute-force mask built cell by cell from the paper's words (loops, no shared code);
- its output equals dense masked attention over that mask (float64, 1e-10), rows included;
- with parameters that allow every key it equals full attention (SDPA) to 1e-6; LSH with one bucket too;
- no causal kind reads a future key: perturbing queries, keys and values after t leaves every output ≤ t unchanged;
- its cost grows as the paper says: the number of query–key pairs scored, from L = 512 to 4,096.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from informer_lab.model.attention import SPARSE_KINDS, dense_pattern, positional_table, sparse_attention
from informer_lab.model.attention.compressed import compress, memory_visible
from informer_lab.model.attention.lsh import hash_vectors, lsh_table, random_rotations

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def _float64():
    """float64 for this module's tests only (set at import, it leaked into every module collected after it)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


# ------------------------------------------------------------------ brute force, from the papers' words
def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def brute_logsparse(L, local, causal):
    """LogTrans Fig. 3c: the left window of `local` cells densely, then exponential steps from its edge."""
    m = np.zeros((L, L), bool)
    for i in range(L):
        for j in range(L):
            if causal and j > i:
                continue
            d = abs(i - j)
            m[i, j] = d <= local or _pow2(d - local)
    return m


def brute_strided(L, l, causal):
    """Sparse Transformer: A(1) = the previous l cells (and itself), A(2) = every l-th cell."""
    m = np.zeros((L, L), bool)
    for i in range(L):
        for j in range(L):
            if causal and j > i:
                continue
            d = abs(i - j)
            m[i, j] = d <= l or d % l == 0
    return m


def brute_fixed(L, l, c, causal):
    m = np.zeros((L, L), bool)
    for i in range(L):
        for j in range(L):
            if causal and j > i:
                continue
            m[i, j] = j // l == i // l or j % l >= l - c
    return m


def brute_window(L, w, dilation, G, causal):
    G = {g % L for g in G}
    m = np.zeros((L, L), bool)
    for i in range(L):
        for j in range(L):
            if causal and j > i:
                continue
            d = j - i
            in_window = d % dilation == 0 and abs(d) // dilation <= w
            m[i, j] = in_window or i in G or j in G
    return m


def brute_block(L, H, n, causal):
    size = math.ceil(L / n)
    n = math.ceil(L / size)  # the blocks that exist (L = 9, n = 4: three blocks of 3)
    m = np.zeros((H, L, L), bool)
    for h in range(H):
        for i in range(L):
            b = i // size
            if causal:
                t = b - h % n if b - h % n >= 0 else b
            else:
                t = (b + h) % n
            for j in range(L):
                m[h, i, j] = j // size == t and (not causal or j <= i)
    return m


def brute_local(L, b, causal):
    m = np.zeros((L, L), bool)
    for i in range(L):
        for j in range(L):
            m[i, j] = j // b == i // b and (not causal or j <= i)
    return m


def brute_lsh(qb, kb, chunk, causal, shared):
    """Reformer §2 for one (batch, head): per round, sort by (bucket, position), chunk, read own and previous chunk's
    same-bucket keys; causal: the 2c most recent same-bucket keys j ≤ i. Union over rounds; shared: no self unless
    alone; a query with nothing reads key min(i, L_K − 1)."""
    rounds, L_Q = qb.shape
    L_K = kb.shape[1]
    m = np.zeros((L_Q, L_K), bool)
    for r in range(rounds):
        if causal:
            for i in range(L_Q):
                same = [j for j in range(i + 1) if kb[r, j] == qb[r, i]]
                for j in same[-2 * chunk:]:
                    m[i, j] = True
            continue
        c_k = min(chunk, L_K)
        chunks = math.ceil(L_K / c_k)
        c_q = math.ceil(L_Q / chunks)
        k_rank = {j: s for s, j in enumerate(sorted(range(L_K), key=lambda j: (kb[r, j], j)))}
        q_rank = {i: s for s, i in enumerate(sorted(range(L_Q), key=lambda i: (qb[r, i], i)))}
        for i in range(L_Q):
            for j in range(L_K):
                if kb[r, j] == qb[r, i] and k_rank[j] // c_k in (q_rank[i] // c_q, q_rank[i] // c_q - 1):
                    m[i, j] = True
    if shared:
        for i in range(L_Q):
            others = m[i].copy()
            others[i] = False
            if others.any():
                m[i, i] = False
    for i in range(L_Q):
        if not m[i].any():
            m[i, min(i, L_K - 1)] = True
    return m


def masked_attention(Q, K, V, mask, weight=None, memory=None):
    """softmax(QKᵀ/√D + mask) V in full, with an optional soft weight [.., L_Q, L_K] and memory keys."""
    scale = 1 / math.sqrt(Q.shape[-1])
    s = (Q @ K.transpose(-2, -1)) * scale
    s = s.masked_fill(~mask, float("-inf"))
    w = torch.ones_like(s) if weight is None else weight.expand_as(s)
    if memory is not None:
        K_m, V_m, visible = memory
        s = torch.cat([s, ((Q @ K_m.transpose(-2, -1)) * scale).masked_fill(~visible, float("-inf"))], -1)
        w = torch.cat([w, torch.ones(*w.shape[:-1], K_m.shape[2])], -1)
        V = torch.cat([V.expand(*K_m.shape[:2], -1, -1), V_m], dim=2)
    e = torch.exp(s - s.amax(-1, keepdim=True)) * w
    p = e / e.sum(-1, keepdim=True)
    return p @ V


def qkv(B=2, H=3, L=29, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, L, D, generator=g) for _ in range(3))


CASES = [("logsparse", {"local": 2}), ("logsparse", {"local": 0}), ("strided", {"stride": 5}),
         ("fixed", {"block": 6, "summary": 2}), ("window", {"window": 3, "dilation": 2, "globals": (0, -1)}),
         ("window", {"window": 4}), ("block", {"blocks": 3}), ("compressed", {"block": 7, "stride": 3}),
         ("adaptive", {"span": 5.0, "max_span": 9, "ramp": 3.0})]


def brute(kind, L, H, options, causal):
    o = options
    if kind == "logsparse":
        return torch.from_numpy(brute_logsparse(L, o["local"], causal))
    if kind == "strided":
        return torch.from_numpy(brute_strided(L, o["stride"], causal))
    if kind == "fixed":
        return torch.from_numpy(brute_fixed(L, o["block"], o["summary"], causal))
    if kind == "window":
        return torch.from_numpy(brute_window(L, o["window"], o.get("dilation", 1), o.get("globals", ()), causal))
    if kind == "block":
        return torch.from_numpy(brute_block(L, H, o["blocks"], causal))
    if kind == "compressed":
        return torch.from_numpy(brute_local(L, o["block"], causal))
    if kind == "adaptive":
        d = torch.arange(L).view(-1, 1) - torch.arange(L).view(1, -1)
        d = d.clamp(min=-10**9) if causal else d.abs()
        weight = ((o["ramp"] + o["span"] - d) / o["ramp"]).clamp(0, 1)
        return (weight > 0) & (d >= 0) & (d <= o["max_span"] + o["ramp"])


@pytest.mark.parametrize("kind, options", CASES)
@pytest.mark.parametrize("causal", [False, True])
def test_each_pattern_is_its_papers_definition_and_the_output_is_masked_attention(kind, options, causal):
    Q, K, V = qkv()
    B, H, L, _ = Q.shape
    mask = brute(kind, L, H, options, causal)
    table = positional_table(kind, L, H, causal=causal, options=options)
    if kind == "window":
        from informer_lab.model.attention.window import window_pattern

        assert torch.equal(window_pattern(L, causal=causal, window=options["window"],
                                          dilation=options.get("dilation", 1), globals_=options.get("globals", ())),
                           mask)
    else:
        pattern = dense_pattern(table, L)
        assert torch.equal(pattern, mask.expand_as(pattern)) if pattern.dim() >= mask.dim() else \
            torch.equal(pattern.expand_as(mask), mask)
    weight = memory = None
    if kind == "adaptive":
        d = (torch.arange(L).view(-1, 1) - torch.arange(L).view(1, -1))
        d = d if causal else d.abs()
        weight = ((options["ramp"] + options["span"] - d) / options["ramp"]).clamp(0, 1) * mask
    if kind == "compressed":
        visible = memory_visible(L, causal=causal, block=options["block"], stride=options["stride"])
        memory = (compress(K, options["stride"]), compress(V, options["stride"]), visible)
    result = sparse_attention(kind, Q, K, V, causal=causal, options=options, need_rows=True, need_scores=True)
    expected = masked_attention(Q, K, V, mask, weight, memory)
    assert (result.context - expected).abs().max() < 1e-10
    if kind not in ("compressed", "adaptive"):  # M on the computed rows: max − mean of q·k/√D over the keys read
        s = (Q @ K.transpose(-2, -1)) / math.sqrt(Q.shape[-1])
        allowed = mask.expand_as(s)
        M = s.masked_fill(~allowed, float("-inf")).amax(-1) - (s * allowed).sum(-1) / allowed.sum(-1)
        assert (result.scores - M).abs().max() < 1e-10
    if kind != "compressed":
        assert torch.allclose(result.rows.sum(-1), torch.ones(B, H, L))
        assert not bool((result.rows > 0)[..., ~mask.expand(B, H, L, L)].any())  # no weight off the pattern


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shared", [False, True])
def test_lsh_reads_the_same_bucket_in_its_chunks_as_the_reformer_defines(causal, shared):
    Q, K, V = qkv(L=40, seed=1)
    options = {"buckets": 4, "rounds": 2, "chunk": 6, "shared": shared}
    rotations = random_rotations(Q.shape[-1], 4, 2, torch.Generator().manual_seed(3), Q.device)
    keys = Q / Q.norm(dim=-1, keepdim=True) if shared else K
    qb, kb = hash_vectors(Q, rotations, 4), hash_vectors(keys, rotations, 4)
    table = lsh_table(qb, qb if shared else kb, chunk=6, causal=causal, shared=shared)
    pattern = dense_pattern(table, 40)
    for b in range(Q.shape[0]):
        for h in range(Q.shape[1]):
            expected = brute_lsh(qb[b, h].numpy(), (qb if shared else kb)[b, h].numpy(), 6, causal, shared)
            assert np.array_equal(pattern[b, h].numpy(), expected), (b, h)
    result = sparse_attention("lsh", Q, K, V, causal=causal, options=options, need_rows=True,
                              generator=torch.Generator().manual_seed(3))
    assert (result.context - masked_attention(Q, keys, V, pattern)).abs().max() < 1e-10
    fast = sparse_attention("lsh", Q, K, V, causal=causal, options=options, generator=torch.Generator().manual_seed(3))
    assert (fast.context - result.context).abs().max() < 1e-10  # the sorted-chunk GEMMs (no rows asked for)


FULL = [("logsparse", {"local": 64}), ("strided", {"stride": 64}), ("fixed", {"block": 64}),
        ("window", {"window": 64}), ("block", {"blocks": 1}), ("compressed", {"block": 64}),
        ("adaptive", {"span": 64.0, "max_span": 64, "ramp": 1.0}), ("lsh", {"buckets": 1, "chunk": 64, "shared": False})]


@pytest.mark.parametrize("kind, options", FULL)
@pytest.mark.parametrize("causal", [False, True])
def test_parameters_that_allow_every_key_give_full_attention(kind, options, causal):
    Q, K, V = (t.float() for t in qkv(L=50, seed=2))
    result = sparse_attention(kind, Q, K, V, causal=causal, options=options)
    full = F.scaled_dot_product_attention(Q, K, V, is_causal=causal)
    assert (result.context - full).abs().max() < 1e-6


def test_lsh_with_one_bucket_is_full_attention_of_the_shared_projection():
    """Shared-QK: keys are the normalised queries, and a query does not read itself (Reformer §2.2)."""
    Q, _, V = qkv(L=30, seed=4)
    result = sparse_attention("lsh", Q, Q, V, causal=False, options={"buckets": 1, "chunk": 30, "shared": True})
    keys = Q / Q.norm(dim=-1, keepdim=True)
    no_self = ~torch.eye(30, dtype=torch.bool)
    assert (result.context - masked_attention(Q, keys, V, no_self)).abs().max() < 1e-10


@pytest.mark.parametrize("kind", SPARSE_KINDS)
def test_no_causal_kind_reads_a_future_key(kind):
    Q, K, V = qkv(L=41, seed=5)
    t = 23
    options = {"globals": (0, 30)} if kind == "window" else {"block": 5, "stride": 3} if kind == "compressed" else {}
    before = sparse_attention(kind, Q, K, V, causal=True, options=options, generator=torch.Generator().manual_seed(0))
    Q2, K2, V2 = Q.clone(), K.clone(), V.clone()
    for X in (Q2, K2, V2):
        X[:, :, t + 1:] = torch.randn_like(X[:, :, t + 1:]) * 3
    after = sparse_attention(kind, Q2, K2, V2, causal=True, options=options,
                             generator=torch.Generator().manual_seed(0))
    assert torch.equal(before.context[:, :, : t + 1], after.context[:, :, : t + 1])


def _pairs(kind: str, L: int) -> int:
    """Query–key pairs one head scores at length L (self-attention, non-causal, default parameters)."""
    if kind == "lsh":
        Q = torch.randn(1, 1, L, 16, generator=torch.Generator().manual_seed(0))
        b = hash_vectors(Q, random_rotations(16, 8, 2, torch.Generator().manual_seed(1), Q.device), 8)
        return lsh_table(b, b, chunk=32, causal=False, shared=False).pairs()
    table = positional_table(kind, L, 1, causal=False, options={})
    pairs = table.pairs()
    if kind == "compressed":
        pairs += int(memory_visible(L, causal=False, block=16, stride=4).sum())
    return pairs


@pytest.mark.parametrize("kind, low, high", [("logsparse", 1.0, 1.2), ("strided", 1.4, 1.6), ("fixed", 1.4, 1.6),
                                             ("window", 0.95, 1.05), ("block", 1.95, 2.05),
                                             ("compressed", 1.9, 2.05), ("adaptive", 0.95, 1.05),
                                             ("lsh", 0.9, 1.25)])
def test_the_cost_grows_as_the_paper_says(kind, low, high):
    """Growth exponent of the pairs scored from L = 512 to 4,096 (full attention: 2): LogSparse O(L log L),
    strided and fixed O(L√L), window and adaptive span O(L·w), LSH O(L·c) (at most rounds · 2c keys a query; at
    short lengths fewer, as chunks cut buckets), block O(L²/n), compressed O(L²/k)."""
    small, big = _pairs(kind, 512), _pairs(kind, 4096)
    if kind == "lsh":
        assert big <= 4096 * 2 * 2 * 32
    assert low <= math.log(big / small) / math.log(8) <= high
    assert big < 4096 ** 2  # and always fewer than full attention's pairs


@pytest.mark.parametrize("L, blocks", [(29, 3), (9, 4), (32, 4), (30, 7), (1, 2), (12, 12)])
@pytest.mark.parametrize("causal", [False, True])
def test_block_attention_without_a_table_is_its_brute_force_pattern_on_every_row(L, blocks, causal):
    """The dense per-pair path (SDPA, no rows) and the recorded path both equal masked attention over the paper's
    pattern, with short last blocks and with fewer blocks than asked for (L = 9, n = 4: no query left without keys)."""
    Q, K, V = qkv(B=2, H=5, L=L, seed=4)
    mask = torch.from_numpy(brute_block(L, 5, blocks, causal))
    assert bool(mask.any(-1).all())  # every query reads at least one key
    expected = masked_attention(Q, K, V, mask)
    fast = sparse_attention("block", Q, K, V, causal=causal, options={"blocks": blocks})
    recorded = sparse_attention("block", Q, K, V, causal=causal, options={"blocks": blocks}, need_rows=True,
                                need_scores=True)
    assert (fast.context - expected).abs().max() < 1e-10
    assert (recorded.context - expected).abs().max() < 1e-10
    assert torch.equal(recorded.pattern.expand(2, 5, L, L), mask.expand(2, 5, L, L))
    assert torch.allclose(recorded.rows.sum(-1), torch.ones(2, 5, L))
    assert not bool((recorded.rows > 0)[~mask.expand(2, 5, L, L)].any())
    s = (Q @ K.transpose(-2, -1)) / math.sqrt(Q.shape[-1])
    allowed = mask.expand_as(s)
    M = s.masked_fill(~allowed, float("-inf")).amax(-1) - (s * allowed).sum(-1) / allowed.sum(-1)
    assert (recorded.scores - M).abs().max() < 1e-10


def test_the_plan_cache_is_bounded_by_bytes_and_keeps_the_recent_plans(monkeypatch):
    from informer_lab.model.attention import table as engine

    monkeypatch.setattr(engine, "_PLANS", type(engine._PLANS)())
    Q, K, V = qkv(B=1, H=2, L=200, seed=5)
    first = positional_table("window", 200, 2, causal=False, options={"window": 3})
    kept = engine._plan(first, 200, None)
    monkeypatch.setattr(engine, "PLAN_BYTES", 4 * engine._plan_bytes(kept))  # two of the later ones beside it
    for w in (4, 5, 6, 7, 8, 9):
        sparse_attention("window", Q, K, V, causal=False, options={"window": w})
        assert engine._plan(first, 200, None) is kept  # in use every call, so never the oldest: never rebuilt
        assert sum(map(engine._plan_bytes, engine._PLANS.values())) <= engine.PLAN_BYTES
    assert 2 <= len(engine._PLANS) < 7  # some of the six later plans went, the bound allowing


@pytest.mark.parametrize("L, blocks", [(12, 3), (10, 4)])
@pytest.mark.parametrize("causal", [False, True])
def test_block_attention_s_gradient_is_the_masked_attention_s(L, blocks, causal):
    """Training goes through the SDPA groups and their writes into one context: its gradient equals masked attention's
    over the brute-force pattern (and passes torch's finite-difference check)."""
    from informer_lab.model.attention.block import block_attention

    Q, K, V = (t.requires_grad_() for t in qkv(B=1, H=3, L=L, D=4, seed=6))
    mask = torch.from_numpy(brute_block(L, 3, blocks, causal))
    torch.autograd.gradcheck(lambda q, k, v: block_attention(q, k, v, causal=causal, blocks=blocks)[0], (Q, K, V))
    weights = torch.randn(1, 3, L, 4, generator=torch.Generator().manual_seed(7))
    ours = torch.autograd.grad((block_attention(Q, K, V, causal=causal, blocks=blocks)[0] * weights).sum(), (Q, K, V))
    theirs = torch.autograd.grad((masked_attention(Q, K, V, mask) * weights).sum(), (Q, K, V))
    for a, b in zip(ours, theirs):
        assert (a - b).abs().max() < 1e-10
