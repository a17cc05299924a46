"""The CPU dropout (model/dropout.py): right drop rate in every bit slot, exact inverted scaling, its gradient."""
from __future__ import annotations

import math

import torch

from model.attention import full_attention
from model.dropout import Dropout, _keep_mask, dropout


def test_drop_rate_matches_p_in_every_slot():
    torch.manual_seed(0)
    n = 4 * 250_000
    keep, p_used = _keep_mask(torch.Size([n]), 0.05, torch.device("cpu"))
    assert abs(p_used - 0.05) < 2 ** -15
    dropped = 1.0 - keep.view(-1, 4).double().mean(0)  # one rate per 16-bit slot of the 64-bit draws
    sigma = math.sqrt(p_used * (1 - p_used) / (n // 4))
    assert torch.all((dropped - p_used).abs() < 5 * sigma), dropped
    for p in (0.1, 0.5, 0.9):
        keep, p_used = _keep_mask(torch.Size([n]), p, torch.device("cpu"))
        assert abs((1.0 - keep.double().mean().item()) - p_used) < 5 * math.sqrt(p * (1 - p) / n)


def test_kept_values_are_scaled_and_the_gradient_is_the_same_factor():
    torch.manual_seed(1)
    x = torch.randn(7, 33, 5, requires_grad=True)  # numel not a multiple of 4
    y = dropout(x, 0.3, True)
    p_used = round(0.3 * 2 ** 15) / 2 ** 15
    factor = y.detach() / x.detach()
    kept = factor != 0
    assert 0 < kept.sum() < x.numel()
    torch.testing.assert_close(factor[kept], torch.full_like(factor[kept], 1 / (1 - p_used)))
    y.sum().backward()
    torch.testing.assert_close(x.grad, factor)


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


def test_full_attention_dropout_on_cpu_drops_softmax_entries():
    torch.manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 6, 4) for _ in range(3))
    torch.manual_seed(5)
    got = full_attention(Q, K, V, causal=True, dropout_p=0.25).context
    rows = torch.softmax((Q @ K.transpose(-2, -1) / 2.0).masked_fill(torch.ones(6, 6).triu(1).bool(), -math.inf), -1)
    torch.manual_seed(5)
    keep, p_used = _keep_mask(rows.shape, 0.25, torch.device("cpu"))
    torch.testing.assert_close(got, (rows * keep / (1 - p_used)) @ V)
