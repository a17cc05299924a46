"""ProbSparse and full attention against the mathematics they claim to compute."""
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from informer_lab.model.attention import (AttentionLayer, active_count, draw_key_sample, full_attention, lazy_context,
                             probsparse_attention, sampled_dot_products, sparsity_from_samples)


def qkv(B=2, H=3, L_Q=40, L_K=40, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, L_Q, D, generator=g, dtype=torch.float64),
            torch.randn(B, H, L_K, D, generator=g, dtype=torch.float64),
            torch.randn(B, H, L_K, D, generator=g, dtype=torch.float64))


def reference_attention(Q, K, V, causal):
    """softmax(QKᵀ/√D)V written out, with j > i masked when causal."""
    scores = torch.einsum("bhid,bhjd->bhij", Q, K) / math.sqrt(Q.shape[-1])
    if causal:
        i = torch.arange(Q.shape[2]).view(-1, 1)
        j = torch.arange(K.shape[2]).view(1, -1)
        scores = scores.masked_fill(j > i, float("-inf"))
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(scores, -1), V)


def prob(Q, K, V, causal=False, factor=5, block=1, seed=0, divisor="U", lazy="cummean"):
    return probsparse_attention(Q, K, V, factor=factor, causal=causal, mean_divisor=divisor, decoder_lazy=lazy,
                                sample_block=block, generator=torch.Generator().manual_seed(seed))


def test_active_count_is_c_ceil_ln_L_capped():
    assert active_count(5, 96) == 25 and active_count(5, 48) == 20 and active_count(5, 8192) == 50
    assert active_count(5, 10) == 10 and active_count(1, 1) == 1


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [1, 7, 64])  # 64 ≥ L: one shared sample (the encoder's and the decoder's forms)
def test_probsparse_with_all_queries_active_equals_full_attention(causal, block):
    Q, K, V = qkv(L_Q=30, L_K=30)
    result = prob(Q, K, V, causal=causal, factor=100, block=block)  # u = U = L: every query is selected
    assert result.selected.shape[-1] == 30
    torch.testing.assert_close(result.context, reference_attention(Q, K, V, causal), atol=1e-10, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_full_attention_sdpa_and_explicit_path_agree_with_reference(causal):
    Q, K, V = qkv()
    fast = full_attention(Q, K, V, causal=causal).context
    explicit = full_attention(Q, K, V, causal=causal, need_rows=True)
    torch.testing.assert_close(fast, reference_attention(Q, K, V, causal), atol=1e-10, rtol=0)
    torch.testing.assert_close(explicit.context, fast, atol=1e-10, rtol=0)
    torch.testing.assert_close(explicit.rows.sum(-1), torch.ones(2, 3, 40, dtype=torch.float64))


@pytest.mark.parametrize("block", [1, 4, 64])
@pytest.mark.parametrize("divisor", ["U", "L_K"])
def test_sampled_sparsity_equals_brute_force_on_the_same_sample(block, divisor):
    Q, K, V = qkv(L_Q=37, L_K=50)
    result = prob(Q, K, V, block=block, divisor=divisor, seed=3)
    index = result.key_index  # [L_Q, U]
    U = index.shape[1]
    assert U == active_count(5, 50)
    brute = torch.empty(2, 3, 37, dtype=torch.float64)
    for b in range(2):
        for h in range(3):
            for i in range(37):
                dots = [float(Q[b, h, i] @ K[b, h, j]) / math.sqrt(8) for j in index[i].tolist()]
                brute[b, h, i] = max(dots) - sum(dots) / (U if divisor == "U" else 50)
    torch.testing.assert_close(result.scores, brute, atol=1e-10, rtol=0)
    # the u selected queries are exactly the u largest M̄
    top = brute.topk(result.selected.shape[-1], dim=-1).indices.sort(-1).values
    assert torch.equal(result.selected.sort(-1).values, top)


def test_block_sampling_shares_draws_within_a_block_and_per_query_does_not():
    g = torch.Generator().manual_seed(0)
    shared = draw_key_sample(20, 100, 15, 8, g, torch.device("cpu")).index
    assert torch.equal(shared[0], shared[7]) and not torch.equal(shared[7], shared[8])
    assert torch.equal(shared[16], shared[19])
    per_query = draw_key_sample(20, 100, 15, 1, torch.Generator().manual_seed(0), torch.device("cpu")).index
    assert len({tuple(r) for r in per_query.tolist()}) == 20
    # block=1 is exactly the official draw torch.randint(L_K, (L_Q, U))
    torch.manual_seed(5)
    official = torch.randint(100, (20, 15))
    assert torch.equal(draw_key_sample(20, 100, 15, 1, torch.Generator().manual_seed(5), torch.device("cpu")).index,
                       official)


def test_sampled_dot_products_block_and_gather_paths_agree():
    Q, K, _ = qkv(L_Q=33, L_K=45)
    sample = draw_key_sample(33, 45, 20, 6, torch.Generator().manual_seed(1), torch.device("cpu"))
    as_gemm = sampled_dot_products(Q, K, sample)
    as_gather = sampled_dot_products(Q, K, type(sample)(sample.index, 1, 33))  # per query: draws = index
    torch.testing.assert_close(as_gemm, as_gather, atol=1e-10, rtol=0)
    assert as_gemm.shape == (2, 3, 33, 20)
    assert sparsity_from_samples(as_gemm, 45, "U").shape == (2, 3, 33)


def test_per_query_sample_scored_by_chunked_gather_when_qkt_is_large():
    # B·H·L_Q·L_K > 2^22: block=1 gathers the sampled keys in chunks instead of indexing the whole QKᵀ
    g = torch.Generator().manual_seed(2)
    Q, K = torch.randn(1, 1, 2100, 4, generator=g), torch.randn(1, 1, 2100, 4, generator=g)
    sample = draw_key_sample(2100, 2100, 40, 1, torch.Generator().manual_seed(3), torch.device("cpu"))
    got = sampled_dot_products(Q, K, sample)
    expected = (K[0, 0][sample.index] @ Q[0, 0].unsqueeze(-1)).squeeze(-1)  # [L_Q, U, D] @ [L_Q, D, 1]
    torch.testing.assert_close(got[0, 0], expected, atol=1e-5, rtol=1e-5)


def test_lazy_rows_are_mean_of_values_in_the_encoder():
    Q, K, V = qkv(L_Q=60, L_K=60)
    result = prob(Q, K, V, factor=2)  # u = 2·⌈ln 60⌉ = 10 of 60
    lazy = torch.ones(2, 3, 60, dtype=torch.bool)
    lazy.scatter_(2, result.selected, False)
    expected = V.mean(dim=2, keepdim=True).expand_as(result.context)
    assert lazy.sum() == 2 * 3 * 50
    torch.testing.assert_close(result.context[lazy], expected[lazy], atol=1e-12, rtol=0)
    # and the selected rows are full-attention rows
    full = reference_attention(Q, K, V, causal=False)
    torch.testing.assert_close(result.context[~lazy], full[~lazy], atol=1e-10, rtol=0)


@pytest.mark.parametrize("block", [1, 64])
@pytest.mark.parametrize("rule", ["cumsum", "cummean"])
def test_lazy_rows_follow_the_cumulative_rule_in_the_causal_decoder(rule, block):
    Q, K, V = qkv(L_Q=50, L_K=50)
    result = prob(Q, K, V, causal=True, factor=2, lazy=rule, block=block)
    lazy = torch.ones(2, 3, 50, dtype=torch.bool)
    lazy.scatter_(2, result.selected, False)
    for i in range(50):
        running = V[:, :, : i + 1].sum(dim=2)
        if rule == "cummean":
            running = running / (i + 1)
        rows = lazy[:, :, i]
        torch.testing.assert_close(result.context[:, :, i][rows], running[rows], atol=1e-10, rtol=0)
    full = reference_attention(Q, K, V, causal=True)
    torch.testing.assert_close(result.context[~lazy], full[~lazy], atol=1e-10, rtol=0)
    assert torch.equal(lazy_context(V, 50, causal=True, decoder_lazy=rule)[:, :, 0], V[:, :, 0])


def layer(kind="prob", causal=False, mix=False, H=4, d_model=16):
    torch.manual_seed(0)
    return AttentionLayer(kind, d_model, H, causal=causal, mix=mix, factor=2, dropout=0.0, mean_divisor="U",
                          decoder_lazy="cummean", sample_block=4).eval()


@pytest.mark.parametrize("kind,causal,mix", [("prob", False, False), ("prob", True, True), ("full", True, False),
                                             ("full", False, False)])
def test_zero_gated_head_contributes_exactly_nothing_on_every_row(kind, causal, mix):
    """Perturb everything head 2 reads; with its gate at 0 the layer output must not move by one bit."""
    attn = layer(kind, causal, mix)
    x = torch.randn(3, 40, 16)
    gate = torch.ones(1, 4)
    gate[0, 2] = 0.0
    out = attn(x, x, gate=gate, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        cols = slice(2 * 4, 3 * 4)  # head 2's rows of the projections (D = 4)
        attn.value_projection.weight[cols] += torch.randn(4, 16) * 5
        attn.value_projection.bias[cols] += 3.0
    perturbed = attn(x, x, gate=gate, generator=torch.Generator().manual_seed(0))
    assert torch.equal(out, perturbed)
    ungated = attn(x, x, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(ungated, perturbed)


def test_zero_gate_equals_removing_the_heads_slice_of_the_output_projection():
    attn = layer()
    x = torch.randn(2, 30, 16)
    gate = torch.ones(1, 4)
    gate[0, 1] = 0.0
    gated = attn(x, x, gate=gate, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        attn.out_projection.weight[:, 4:8] = 0.0
    removed = attn(x, x, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(gated, removed, atol=1e-6, rtol=0)


def test_mean_gated_head_is_exactly_its_mean_on_every_row():
    from informer_lab.model.hooks import recording

    attn = layer()
    attn.hook_context.name = "ctx"
    x = torch.randn(2, 30, 16)
    mean = torch.randn(30, 4, 4)
    gate = torch.ones(2, 4)
    gate[:, 3] = 0.0
    with recording("ctx") as rec:
        attn(x, x, gate=gate, mean=mean, generator=torch.Generator().manual_seed(0))
    context = rec.records["ctx"].clone()  # before the gate
    context[:, :, 3] = mean[:, 3]  # what the gated head must be replaced by
    expected = attn.out_projection(context.reshape(2, 30, 16))
    actual = attn(x, x, gate=gate, mean=mean, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_mix_interleaves_heads_and_time_like_the_official_view():
    attn = layer(mix=True)
    attn.hook_context.name = "ctx"
    from informer_lab.model.hooks import recording

    x = torch.randn(1, 12, 16)
    with recording("ctx") as rec:
        out = attn(x, x, generator=torch.Generator().manual_seed(0))
    ctx = rec.records["ctx"]  # [1, 12, H, D]
    merged = ctx.permute(0, 2, 1, 3).contiguous().view(1, 12, 16)  # [B, H, L, D] viewed as [B, L, H·D]
    torch.testing.assert_close(out, attn.out_projection(merged))


@pytest.mark.parametrize("divisor", ["U", "L_K"])
@pytest.mark.parametrize("block", [1, 8, 64])
def test_causal_sampling_scores_only_keys_the_query_may_attend_to(divisor, block):
    Q, K, V = qkv(L_Q=30, L_K=30)
    result = prob(Q, K, V, causal=True, block=block, divisor=divisor, seed=2)
    index = result.key_index
    brute = torch.empty(2, 3, 30, dtype=torch.float64)
    for b in range(2):
        for h in range(3):
            for i in range(30):
                keys = [j for j in index[i].tolist() if j <= i] + [i]  # allowed samples and the query's own key
                dots = [float(Q[b, h, i] @ K[b, h, j]) / math.sqrt(8) for j in keys]
                brute[b, h, i] = max(dots) - sum(dots) / (len(dots) if divisor == "U" else i + 1)
    torch.testing.assert_close(result.scores, brute, atol=1e-10, rtol=0)
    official = probsparse_attention(Q, K, V, factor=5, causal=True, mean_divisor=divisor, decoder_lazy="cumsum",
                                    sample_block=block, generator=torch.Generator().manual_seed(2),
                                    causal_sampling=False)
    assert not torch.allclose(official.scores, result.scores)  # the official score counts future keys


# --------------------------------------------------------------------------------------------
# U follows L_K, u follows L_Q (lengths with different ⌈ln L⌉), and the key draws are uniform
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("block", [1, 16])
@pytest.mark.parametrize("L_Q, L_K", [(72, 48), (48, 72), (12, 200)])
def test_key_sample_size_follows_L_K_and_selected_queries_follow_L_Q(L_Q, L_K, block):
    assert math.ceil(math.log(L_Q)) != math.ceil(math.log(L_K))  # so that mixing them up would show
    Q, K, V = qkv(L_Q=L_Q, L_K=L_K)
    result = prob(Q, K, V, block=block, seed=4)
    U, u = 5 * math.ceil(math.log(L_K)), min(L_Q, 5 * math.ceil(math.log(L_Q)))
    assert result.key_index.shape == (L_Q, min(U, L_K))
    assert result.selected.shape == (2, 3, u) and result.scores.shape == (2, 3, L_Q)
    brute = torch.empty(2, 3, L_Q, dtype=torch.float64)
    for i in range(L_Q):
        dots = torch.einsum("bhd,bhkd->bhk", Q[:, :, i], K[:, :, result.key_index[i]]) / math.sqrt(8)
        brute[:, :, i] = dots.amax(-1) - dots.mean(-1)
    torch.testing.assert_close(result.scores, brute, atol=1e-10, rtol=0)
    # every query that was not selected returns mean(V) over all L_K keys; the selected ones their softmax row
    lazy = torch.ones(2, 3, L_Q, dtype=torch.bool).scatter_(2, result.selected, False)
    mean_v = V.mean(dim=2, keepdim=True).expand(-1, -1, L_Q, -1)
    torch.testing.assert_close(result.context[lazy], mean_v[lazy], atol=1e-12, rtol=0)
    full = reference_attention(Q, K, V, causal=False)
    torch.testing.assert_close(result.context[~lazy], full[~lazy], atol=1e-10, rtol=0)


@settings(max_examples=40, deadline=None)
@given(L_Q=st.integers(1, 120), L_K=st.integers(2, 120), U=st.integers(1, 40), block=st.sampled_from([1, 3, 512]),
       seed=st.integers(0, 2**31 - 1))
def test_every_key_index_is_drawn_at_a_uniform_rate(L_Q, L_K, U, block, seed):
    generator = torch.Generator().manual_seed(seed)
    draws = torch.cat([draw_key_sample(L_Q, L_K, U, block, generator, torch.device("cpu")).index[::block].reshape(-1)
                       for _ in range(max(1, (40 * L_K) // (U * (-(-L_Q // block)))))])  # ≥ 40 draws per key
    assert int(draws.min()) >= 0 and int(draws.max()) < L_K
    counts = torch.bincount(draws, minlength=L_K).numpy()
    assert chisquare(counts).pvalue > 1e-6, counts
