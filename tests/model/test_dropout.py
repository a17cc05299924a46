"""The CPU dropout (model/dropout.py): each element dropped independently with probability p (the hit scheme for small
p, the slot scheme above), exact inverted scaling, its gradient, the fused x + dropout(y)."""
from __future__ import annotations

import math

import torch
from hypothesis import given, settings, strategies as st

from informer_lab.model.attention import full_attention
from informer_lab.model.dropout import HITS_UP_TO, Dropout, _keep_mask, drop_positions, dropout, dropout_add, scale_mask


def dropped(p: float, n: int) -> torch.Tensor:
    """One mask's dropped elements as a bool [n] (the scheme the layers use for this p)."""
    return scale_mask(torch.Size([n]), p, torch.float64, torch.device("cpu")) == 0


def test_hit_scheme_drops_each_element_with_probability_p():
    torch.manual_seed(0)
    n = 1_000_000
    for p in (0.05, 0.2, HITS_UP_TO):
        rate = dropped(p, n).double().mean().item()
        assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / n), (p, rate)


def test_hit_scheme_count_is_binomial_so_drops_are_independent():
    """Independent Bernoulli(p) elements ⇔ the count of drops is Binomial(n, p) for every subset; check the count's
    mean and variance over many masks, and neighbours dropped together at rate p²."""
    torch.manual_seed(1)
    n, masks, p = 400, 4000, 0.1
    drops = torch.stack([dropped(p, n) for _ in range(masks)]).double()  # [masks, n]
    counts = drops.sum(1)
    mean, var = counts.mean().item(), counts.var().item()
    assert abs(mean - n * p) < 5 * math.sqrt(n * p * (1 - p) / masks)
    assert abs(var / (n * p * (1 - p)) - 1) < 0.1  # a Poisson count of distinct positions would not be binomial
    both = (drops[:, :-1] * drops[:, 1:]).mean().item()
    assert abs(both - p * p) < 5 * math.sqrt(p * p / (masks * (n - 1)))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_drop_positions_are_uniform_over_the_elements(n, seed):
    gen = torch.Generator().manual_seed(seed)
    positions = torch.cat([drop_positions(n, 0.5, torch.device("cpu"), gen) for _ in range(300)])
    assert positions.min() >= 0 and positions.max() < n
    counts = torch.bincount(positions, minlength=n).double()
    expected = positions.numel() / n
    assert ((counts - expected).abs() < 6 * math.sqrt(expected) + 1).all(), counts


def test_slot_scheme_above_the_hit_range():
    torch.manual_seed(2)
    n = 4 * 250_000
    for p in (0.3, 0.5, 0.9):
        keep, p_used = _keep_mask(torch.Size([n]), p, torch.device("cpu"))
        assert abs(p_used - p) < 2 ** -15
        assert abs((1.0 - keep.double().mean().item()) - p_used) < 5 * math.sqrt(p * (1 - p) / n)
        by_slot = 1.0 - keep.view(-1, 4).double().mean(0)  # one rate per 16-bit slot of the 64-bit draws
        assert torch.all((by_slot - p_used).abs() < 5 * math.sqrt(p_used * (1 - p_used) / (n // 4)))
        rate = dropped(p, n).double().mean().item()
        assert abs(rate - p_used) < 5 * math.sqrt(p * (1 - p) / n)


def test_kept_values_are_scaled_and_the_gradient_is_the_same_factor():
    torch.manual_seed(1)
    for p, p_used in ((0.05, 0.05), (0.3, round(0.3 * 2 ** 15) / 2 ** 15)):
        x = torch.randn(7, 33, 5, requires_grad=True)  # numel not a multiple of 4
        y = dropout(x, p, True)
        factor = y.detach() / x.detach()
        kept = factor != 0
        assert 0 < kept.sum() < x.numel()
        torch.testing.assert_close(factor[kept], torch.full_like(factor[kept], 1 / (1 - p_used)))
        y.sum().backward()
        torch.testing.assert_close(x.grad, factor)


def test_dropout_add_is_x_plus_dropout_of_y_with_the_same_draws():
    x, y = torch.randn(4, 9, 8), torch.randn(4, 9, 8, requires_grad=True)
    for p in (0.05, 0.4):
        torch.manual_seed(3)
        fused = dropout_add(x, y, p, True)
        torch.manual_seed(3)
        torch.testing.assert_close(fused, x + dropout(y, p, True))
    layer = Dropout(0.1)
    torch.manual_seed(4)
    a = layer.add(x, y)
    torch.manual_seed(4)
    torch.testing.assert_close(a, x + layer(y))
    layer.eval()
    torch.testing.assert_close(layer.add(x, y), x + y)


def test_same_seed_same_mask_and_eval_is_identity():
    layer = Dropout(0.2)
    x = torch.randn(4, 10, 8)
    torch.manual_seed(3)
    a = layer(x)
    torch.manual_seed(3)
    b = layer(x)
    assert torch.equal(a, b) and not torch.equal(a, x)
    layer.eval()
    assert layer(x) is x
    assert dropout(x, 0.0, True) is x
    assert Dropout(0.2).state_dict() == torch.nn.Dropout(0.2).state_dict()
    assert drop_positions(0, 0.1, torch.device("cpu")).numel() == 0


def test_full_attention_dropout_on_cpu_drops_softmax_entries():
    torch.manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 6, 4) for _ in range(3))
    for p in (0.05, 0.25, 0.5):
        torch.manual_seed(5)
        got = full_attention(Q, K, V, causal=True, dropout_p=p).context
        rows = torch.softmax((Q @ K.transpose(-2, -1) / 2.0).masked_fill(torch.ones(6, 6).triu(1).bool(), -math.inf),
                             -1)
        torch.manual_seed(5)
        mask = scale_mask(rows.shape, p, rows.dtype, rows.device)
        torch.testing.assert_close(got, (rows * mask) @ V)
