"""ProbSparse's encoder form in few large kernels (model/attention/probsparse_blocks.py) against the mathematics written out:
M̄ on the same key sample, the top u, their softmax rows, mean(V) for the rest — whatever the chunking, the threads,
the autograd mode or what is returned."""
import math

import pytest
import torch

import informer_lab.model.attention.probsparse_blocks as blocks
from informer_lab.model.attention import draw_key_sample, probsparse_attention


def reference(Q, K, V, index, u, divisor):
    """Written out per (batch, head): index [L_Q, U] the keys each query is scored on."""
    B, H, L_Q, D = Q.shape
    s = torch.einsum("bhid,bhjd->bhij", Q, K) / math.sqrt(D)  # [B, H, L_Q, L_K]
    sampled = torch.gather(s, 3, index.expand(B, H, L_Q, index.shape[1]))
    M = sampled.amax(-1) - sampled.sum(-1) / divisor
    chosen = M.topk(u, dim=-1).indices
    context = V.mean(dim=2, keepdim=True).expand(B, H, L_Q, D).clone()
    rows = torch.softmax(torch.gather(s, 2, chosen.unsqueeze(-1).expand(-1, -1, -1, s.shape[-1])), dim=-1)
    context.scatter_(2, chosen.unsqueeze(-1).expand(-1, -1, -1, D), rows @ V)
    return context, M, chosen, rows


def data(B=2, H=3, L=70, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, L, D, generator=g, dtype=torch.float64) for _ in range(3))


@pytest.mark.parametrize("block", [16, 32, 512])  # partial last block; a block longer than L_Q
@pytest.mark.parametrize("divisor", ["U", "L_K"])
@pytest.mark.parametrize("need_rows", [False, True])
def test_the_encoder_form_is_probsparse_written_out(block, divisor, need_rows):
    Q, K, V = data()
    result = probsparse_attention(Q, K, V, factor=3, causal=False, mean_divisor=divisor, decoder_lazy="cummean",
                                  sample_block=block, generator=torch.Generator().manual_seed(4), need_rows=need_rows)
    U = result.key_index.shape[1]
    context, M, chosen, rows = reference(Q, K, V, result.key_index, result.selected.shape[-1],
                                         U if divisor == "U" else 70)
    torch.testing.assert_close(result.scores, M, atol=1e-12, rtol=0)
    assert torch.equal(result.selected.sort(-1).values, chosen.sort(-1).values)
    torch.testing.assert_close(result.context, context, atol=1e-12, rtol=0)
    if need_rows:  # both in the order of the top u (largest M̄ first)
        assert torch.equal(result.selected, chosen)
        torch.testing.assert_close(result.rows, rows, atol=1e-12, rtol=0)
    else:
        assert result.rows is None


def test_chunks_threads_and_what_is_returned_do_not_change_the_answer(monkeypatch):
    """One head per chunk, the heads shared between two Python threads, M̄ kept or not: the same numbers."""
    Q, K, V = (t.float() for t in data(B=3, H=4, L=200, D=16, seed=1))
    draws = draw_key_sample(200, 200, 20, 32, torch.Generator().manual_seed(2), Q.device).draws
    plain = blocks.shared_sample_attention(Q, K, V, draws, 32, 15, 20, need_rows=False)
    monkeypatch.setattr(blocks, "CACHE_FLOATS", 1)  # a head at a time
    monkeypatch.setattr(blocks, "PARALLEL_FLOATS", 1)  # any call large enough for threads
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        shared = blocks.shared_sample_attention(Q, K, V, draws, 32, 15, 20, need_rows=False)
        assert torch.get_num_threads() == 2  # restored after the call
    finally:
        torch.set_num_threads(threads)
    quiet = blocks.shared_sample_attention(Q, K, V, draws, 32, 15, 20, need_rows=False, need_scores=False)
    assert plain[1] is None and shared[1] is None
    for i in (0, 2, 3):
        assert torch.equal(plain[i], shared[i])
    assert torch.equal(quiet[0], plain[0]) and torch.equal(quiet[2], plain[2]) and quiet[3] is None


def test_with_autograd_the_same_forward_and_gradients_of_the_math():
    Q, K, V = data(L=40)
    draws = draw_key_sample(40, 40, 12, 16, torch.Generator().manual_seed(3), Q.device).draws
    with torch.no_grad():
        want = blocks.shared_sample_attention(Q, K, V, draws, 16, 10, 12, need_rows=False)
    leaves = [t.clone().requires_grad_() for t in (Q, K, V)]
    got = blocks.shared_sample_attention(*leaves, draws, 16, 10, 12, need_rows=False)
    torch.testing.assert_close(got[0], want[0], atol=1e-12, rtol=0)
    assert torch.equal(got[2], want[2])
    got[0].pow(2).sum().backward()
    index = draws.repeat_interleave(16, dim=0)[:40]
    refs = [t.clone().requires_grad_() for t in (Q, K, V)]
    reference(*refs, index, 10, 12)[0].pow(2).sum().backward()
    for a, b in zip(leaves, refs):
        torch.testing.assert_close(a.grad, b.grad, atol=1e-10, rtol=0)


def test_the_key_index_is_expanded_from_the_draws_only_when_read():
    sample = draw_key_sample(100, 80, 7, 32, torch.Generator().manual_seed(0), torch.device("cpu"))
    assert sample.draws.shape == (4, 7) and "index" not in sample.__dict__
    assert torch.equal(sample.index, sample.draws.repeat_interleave(32, dim=0)[:100])


@pytest.mark.parametrize("need_rows", [False, True])
def test_one_key_sample_small_or_chunked_sliced_or_not_is_the_math(monkeypatch, need_rows):
    """A call whose queries share one key sample takes the few-kernel path when small (model/attention/probsparse_small.py)
    and the chunked path when not; both are the mathematics, on inputs sliced out of longer ones (not contiguous: the
    variants instrument's memory probe passes such) as on contiguous ones."""
    import informer_lab.model.attention.probsparse_small as small
    Q, K, V = (t[:, :, :50] for t in data(L=70, seed=5))  # [B, H, 50, D] views with the strides of L = 70
    assert not Q.is_contiguous()
    draws = draw_key_sample(50, 50, 12, 64, torch.Generator().manual_seed(6), Q.device).draws
    assert draws.shape[0] == 1
    context, M, chosen, rows = reference(Q, K, V, draws.expand(50, -1), 9, 12)
    answers = [blocks.shared_sample_attention(Q, K, V, draws, 64, 9, 12, need_rows=need_rows)]
    monkeypatch.setattr(small, "SMALL_FLOATS", 0)  # now the chunked path
    answers.append(blocks.shared_sample_attention(Q, K, V, draws, 64, 9, 12, need_rows=need_rows))
    for got in answers:
        torch.testing.assert_close(got[0], context, atol=1e-12, rtol=0)
        torch.testing.assert_close(got[3], M, atol=1e-12, rtol=0)
        assert torch.equal(got[2], chosen)
        if need_rows:
            torch.testing.assert_close(got[1], rows, atol=1e-12, rtol=0)


@pytest.mark.parametrize("block", [16, 70])  # several blocks; one sample for every query
@pytest.mark.parametrize("need_rows", [False, True])
def test_the_batched_form_a_gpu_takes_is_the_math_without_autograd(block, need_rows):
    """On a GPU every head goes at once (no cache-sized chunks on threads): the same numbers as the math."""
    Q, K, V = data(seed=7)
    draws = draw_key_sample(70, 70, 12, block, torch.Generator().manual_seed(8), Q.device).draws
    index = draws.repeat_interleave(block, dim=0)[:70]
    context, M, chosen, rows = reference(Q, K, V, index, 10, 12)
    with torch.no_grad():
        got = blocks.shared_sample_attention(Q, K, V, draws, block, 10, 12, need_rows=need_rows, batched=True)
    torch.testing.assert_close(got[0], context, atol=1e-12, rtol=0)
    torch.testing.assert_close(got[3], M, atol=1e-12, rtol=0)
    assert torch.equal(got[2].sort(-1).values, chosen.sort(-1).values)
    if need_rows:
        assert torch.equal(got[2], chosen)
        torch.testing.assert_close(got[1], rows, atol=1e-12, rtol=0)
