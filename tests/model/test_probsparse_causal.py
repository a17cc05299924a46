"""ProbSparse's decoder form (a few key samples, one per block of queries: model/attention/probsparse_causal.py)
against the mathematics written out on the same sample: M̄ on the allowed keys, the top u, their causal softmax rows,
the running mean or sum of V for the rest; forward, rows and gradients, explicit or flash rows."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

import informer_lab.model.attention.probsparse_causal as causal_form
from informer_lab.model.attention import probsparse_attention


def data(B=2, H=3, L=30, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, L, D, generator=g, dtype=torch.float64) for _ in range(3))


def reference(Q, K, V, index, u, divisor, causal_sampling, lazy):
    """Per query i, written out: its scores on its sampled keys index[i] it may see (and its own), M̄, the top u,
    their rows. index: [L, U] (or [U], one sample for every query)."""
    B, H, L, D = Q.shape
    index = index.expand(L, -1) if index.dim() == 1 else index
    s = torch.einsum("bhid,bhjd->bhij", Q, K) / math.sqrt(D)  # [B, H, L, L]
    M = torch.empty(B, H, L, dtype=Q.dtype)
    for i in range(L):
        keys = index[i]
        if causal_sampling:
            seen = [j for j in keys.tolist() if j <= i] + [i]
            n = len(seen) if divisor == "U" else i + 1
        else:
            seen = keys.tolist()
            n = len(seen) if divisor == "U" else L
        dots = s[:, :, i, seen]
        M[:, :, i] = dots.amax(-1) - dots.sum(-1) / n
    chosen = M.topk(u, dim=-1).indices  # [B, H, u]
    future = torch.arange(L).view(1, L) > torch.arange(L).view(L, 1)
    rows = torch.softmax(s.masked_fill(future, float("-inf")), -1)  # every query's causal row
    rows = torch.gather(rows, 2, chosen.unsqueeze(-1).expand(-1, -1, -1, L))  # [B, H, u, L]
    running = V.cumsum(2) / (torch.arange(1, L + 1, dtype=V.dtype).view(L, 1) if lazy == "cummean" else 1)
    context = running.scatter(2, chosen.unsqueeze(-1).expand(-1, -1, -1, D), rows @ V)
    return context, M, chosen, rows


@settings(max_examples=30, deadline=None)
@given(L=st.integers(2, 40), factor=st.integers(1, 6), divisor=st.sampled_from(["U", "L_K"]),
       causal_sampling=st.booleans(), lazy=st.sampled_from(["cummean", "cumsum"]), seed=st.integers(0, 1000))
def test_the_decoder_form_is_causal_probsparse_written_out(L, factor, divisor, causal_sampling, lazy, seed):
    Q, K, V = data(L=L, seed=seed)
    result = probsparse_attention(Q, K, V, factor=factor, causal=True, mean_divisor=divisor, decoder_lazy=lazy,
                                  sample_block=512, causal_sampling=causal_sampling,
                                  generator=torch.Generator().manual_seed(seed), need_rows=True)
    keys = result.sample.draws[0]
    assert result.sample.draws.shape[0] == 1 and torch.equal(result.key_index, keys.expand(L, -1))
    u = result.selected.shape[-1]
    context, M, chosen, rows = reference(Q, K, V, keys, u, divisor, causal_sampling, lazy)
    torch.testing.assert_close(result.scores, M, atol=1e-10, rtol=0)
    top = M.topk(u, dim=-1).values
    assert torch.allclose(M.gather(-1, result.selected), top, atol=1e-10, rtol=0)  # the u largest (ties aside)
    if torch.equal(result.selected, chosen):
        torch.testing.assert_close(result.rows, rows, atol=1e-10, rtol=0)
        torch.testing.assert_close(result.context, context, atol=1e-10, rtol=0)


@settings(max_examples=30, deadline=None)
@given(L=st.integers(2, 40), block=st.integers(1, 16), factor=st.integers(1, 6), divisor=st.sampled_from(["U", "L_K"]),
       causal_sampling=st.booleans(), lazy=st.sampled_from(["cummean", "cumsum"]), seed=st.integers(0, 1000))
def test_blocks_of_queries_with_their_own_samples_are_causal_probsparse_written_out(L, block, factor, divisor,
                                                                                    causal_sampling, lazy, seed):
    """A decoder longer than sample_block (a long label_len): each block of queries scored on its own sample."""
    Q, K, V = data(L=L, seed=seed)
    result = probsparse_attention(Q, K, V, factor=factor, causal=True, mean_divisor=divisor, decoder_lazy=lazy,
                                  sample_block=block, causal_sampling=causal_sampling,
                                  generator=torch.Generator().manual_seed(seed), need_rows=True)
    assert result.sample.draws.shape[0] == -(-L // block)
    u = result.selected.shape[-1]
    context, M, chosen, rows = reference(Q, K, V, result.key_index, u, divisor, causal_sampling, lazy)
    torch.testing.assert_close(result.scores, M, atol=1e-10, rtol=0)
    assert torch.allclose(M.gather(-1, result.selected), M.topk(u, dim=-1).values, atol=1e-10, rtol=0)
    if torch.equal(result.selected, chosen):
        torch.testing.assert_close(result.rows, rows, atol=1e-10, rtol=0)
        torch.testing.assert_close(result.context, context, atol=1e-10, rtol=0)


def test_a_decoder_of_many_samples_takes_the_general_path_and_agrees_with_the_blocks(monkeypatch):
    """Past MAX_BLOCKS samples (as the official per-query sample) the general path answers; on the same draws both
    agree."""
    Q, K, V = data(L=40, seed=4)
    kwargs = dict(factor=3, causal=True, mean_divisor="U", decoder_lazy="cummean", sample_block=2, need_rows=True)
    blocks = probsparse_attention(Q, K, V, generator=torch.Generator().manual_seed(2), **kwargs)
    called = []
    monkeypatch.setattr(causal_form, "shared_sample_causal", lambda *a, **k: called.append(1))
    monkeypatch.setattr("informer_lab.model.attention.probsparse.shared_sample_causal", lambda *a, **k: called.append(1))
    monkeypatch.setattr("informer_lab.model.attention.probsparse.MAX_CAUSAL_BLOCKS", 19)  # 20 samples: the general path
    general = probsparse_attention(Q, K, V, generator=torch.Generator().manual_seed(2), **kwargs)
    assert not called and torch.equal(general.sample.draws, blocks.sample.draws)
    torch.testing.assert_close(general.scores, blocks.scores, atol=1e-10, rtol=0)
    assert torch.equal(general.selected.sort(-1).values, blocks.selected.sort(-1).values)
    torch.testing.assert_close(general.context, blocks.context, atol=1e-10, rtol=0)


@pytest.mark.parametrize("lazy", ["cummean", "cumsum"])
@pytest.mark.parametrize("block", [64, 7])  # one key sample; four, one per block of 7 queries
def test_gradients_are_those_of_the_written_out_math(lazy, block, monkeypatch):
    Q, K, V = data(L=24, seed=3)
    leaves = [t.clone().requires_grad_() for t in (Q, K, V)]
    got = probsparse_attention(*leaves, factor=3, causal=True, mean_divisor="U", decoder_lazy=lazy, sample_block=block,
                               generator=torch.Generator().manual_seed(1))
    g = torch.randn(got.context.shape, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    ours = torch.autograd.grad(got.context, leaves, g)
    refs = [t.clone().requires_grad_() for t in (Q, K, V)]
    want = reference(*refs, got.key_index, got.selected.shape[-1], "U", True, lazy)[0]
    theirs = torch.autograd.grad(want, refs, g)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)
    monkeypatch.setattr(causal_form, "EXPLICIT_ROWS", 0)  # long rows: the flash kernel with the causal mask
    flash = probsparse_attention(*leaves, factor=3, causal=True, mean_divisor="U", decoder_lazy=lazy,
                                 sample_block=block, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(flash.context, got.context, atol=1e-10, rtol=0)
    assert flash.rows is None and torch.equal(flash.selected, got.selected)
    for a, b in zip(torch.autograd.grad(flash.context, leaves, g), ours):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


def test_all_queries_active_is_causal_full_attention_in_float32():
    Q, K, V = (t.float() for t in data(B=4, H=2, L=17, D=16, seed=5))
    result = probsparse_attention(Q, K, V, factor=100, causal=True, mean_divisor="U", decoder_lazy="cummean",
                                  sample_block=512, generator=torch.Generator().manual_seed(0))
    full = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
    assert result.selected.shape[-1] == 17
    torch.testing.assert_close(result.context, full, atol=1e-5, rtol=1e-5)
