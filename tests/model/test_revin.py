"""Reversible instance normalisation held to its definition: the forecast is the same network's forecast of the
window standardised by its own statistics, mapped back; a shift of the window shifts the forecast by as much; the
gradient sees the statistics; the variants' forward and head masks agree with it."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from informer_lab.analysis.learning.windows import decoder_values
from informer_lab.model import Batch, HeadMask, Informer
from tests.model.test_informer import batch_for, run, tiny


def revin_model(c_out=1, seed=0, **changes):
    torch.manual_seed(seed)
    model = Informer(tiny(c_out=c_out, revin=True, **changes)).eval()
    with torch.no_grad():  # away from the identity affine, so that γ and β are exercised
        model.revin.weight.copy_(torch.tensor([0.7, 1.3, 1.9]))
        model.revin.bias.copy_(torch.tensor([0.2, -0.4, 0.1]))
    return model


def consistent_batch(config, B=3, seed=0, level=0.0):
    """x_dec built from x_enc (its last label_len rows, then zeros), as the lab's windows are."""
    raw = batch_for(config, B, seed)
    x_enc = raw.x_enc + level + torch.linspace(0, 3, config.seq_len)[None, :, None]  # a trend
    return Batch(x_enc, raw.mark_enc, decoder_values(x_enc, config.label_len, config.pred_len), raw.mark_dec)


@pytest.mark.parametrize("c_out", [1, 3])
def test_the_forecast_is_the_plain_networks_forecast_of_the_standardised_window_mapped_back(c_out):
    model = revin_model(c_out)
    plain = Informer(model.config.replace(revin=False)).eval()
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("revin.")})
    batch = consistent_batch(model.config)
    x = batch.x_enc.double()
    mean, std = x.mean(1, keepdim=True), (x.var(1, keepdim=True, unbiased=False) + 1e-5).sqrt()
    gamma, beta = model.revin.weight.double(), model.revin.bias.double()
    x_hat = ((x - mean) / std * gamma + beta).float()
    L = model.config.label_len
    dec_hat = torch.cat([x_hat[:, -L:], torch.zeros_like(batch.x_dec[:, L:])], 1)
    inner = run(plain, Batch(x_hat, batch.mark_enc, dec_hat, batch.mark_dec)).double()
    k = slice(3 - c_out, 3)  # the targets are the last c_out inputs
    expected = (inner - beta[k]) / (gamma[k] + 1e-10) * std[..., k] + mean[..., k]
    torch.testing.assert_close(run(model, batch).double(), expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(shift=st.floats(-1e3, 1e3), seed=st.integers(0, 5))
def test_a_shifted_window_gives_the_forecast_shifted_by_as_much(shift, seed):
    model = revin_model(3)
    batch = consistent_batch(model.config, seed=seed)
    moved = consistent_batch(model.config, seed=seed, level=shift)
    scale = max(1.0, abs(shift))
    torch.testing.assert_close(run(model, moved), run(model, batch) + shift, rtol=0, atol=2e-5 * scale)


def test_the_gradient_sees_the_statistics_a_shift_of_every_input_moves_each_forecast_by_one():
    model = revin_model(1)
    config = model.config
    batch = consistent_batch(config, B=1)
    x_enc = batch.x_enc.clone().requires_grad_(True)
    out = model(Batch(x_enc, batch.mark_enc, decoder_values(x_enc, config.label_len, config.pred_len),
                      batch.mark_dec), generator=torch.Generator().manual_seed(0))
    grad, = torch.autograd.grad(out[0, 5, 0], x_enc)
    # d forecast / d (x + b·1) = 1 for the target channel, 0 for the others (shift equivariance, per channel)
    assert grad[0, :, 2].sum().item() == pytest.approx(1.0, abs=1e-4)
    assert grad[0, :, :2].sum(0).abs().max().item() < 1e-4


def test_head_mask_variants_and_a_masked_head_agree_with_the_plain_forward():
    model = revin_model(3)
    batch = consistent_batch(model.config, B=2)
    gates = model.full_gates(3)
    gates[1, 0, 2] = 0.0
    gates[2, model.n_sites - 1, 0] = 0.0
    together = run(model, batch, head_mask=HeadMask(gates, variants=True))
    for k in range(3):
        alone = run(model, batch, head_mask=HeadMask(gates[k:k + 1]))
        torch.testing.assert_close(together[2 * k:2 * k + 2], alone, rtol=1e-5, atol=1e-5)


def test_revin_is_refused_where_it_has_no_meaning():
    with pytest.raises(ValueError, match="revin needs embedding='conv'"):
        tiny(revin=True, embedding="lags", lags=(1,), c_out=3)
    with pytest.raises(ValueError, match="revin needs dec_in = enc_in"):
        tiny(revin=True, dec_in=2)
