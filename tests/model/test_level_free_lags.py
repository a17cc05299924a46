"""Input channels whose level the lags embedding does not read (InformerConfig.level_free, model/lags.py)."""
import pytest
import torch

from informer_lab.model import Informer
from informer_lab.model.lags import LagEmbedding
from tests.model.lag_cases import C, L, LABEL, LAGS, MARKS, PRED, config, forecast, inputs



def pair(channel: int, first: int, positions: int) -> tuple[LagEmbedding, LagEmbedding]:
    """The level-free embedding and a plain one with the same weights, except that the plain one's weight on the
    channel's log(1 + |loc|) feature (after the C·len(LAGS) lagged values) is zero."""
    torch.manual_seed(0)
    free = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", first, positions, level_free=(channel,)).eval()
    plain = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", first, positions).eval()
    plain.load_state_dict(free.state_dict())
    with torch.no_grad():
        plain.value_projection.weight[:, C * len(LAGS) + channel] = 0.0
    return free, plain


def test_the_encoder_reads_no_level_feature_for_the_channel():
    free, plain = pair(1, 0, L - 6)
    x, marks, _, _ = inputs()
    assert torch.allclose(free(x, marks), plain(x, marks), atol=1e-6)
    torch.manual_seed(0)
    levels = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", 0, L - 6).eval()
    levels.load_state_dict(free.state_dict())
    assert not torch.allclose(free(x, marks), levels(x, marks), atol=1e-4)  # the feature was read before


def test_the_decoders_forecast_steps_repeat_the_last_known_value():
    free, plain = pair(0, L - 6, PRED)
    x_enc, _, x_dec, m_dec = inputs()
    by_hand = x_dec.clone()
    by_hand[:, LABEL:, 0] = x_enc[:, -1:, 0]
    assert torch.allclose(free(x_dec, m_dec, x_enc), plain(by_hand, m_dec, x_enc), atol=1e-6)


@pytest.mark.parametrize("level_free, invariant", [((0,), True), ((0, 1), True), ((), False)])
def test_a_level_free_channels_level_does_not_reach_the_forecast(level_free, invariant):
    torch.manual_seed(0)
    model = Informer(config(level_free=level_free)).eval()
    x_enc, m_enc, x_dec, m_dec = inputs()
    shifted_enc, shifted_dec = x_enc.clone(), x_dec.clone()
    shifted_enc[..., 0] += 7.0
    shifted_dec[:, :LABEL, 0] += 7.0
    shifted_dec[:, LABEL:, 0] = torch.randn(2, PRED)  # the placeholders are not read either
    same = torch.allclose(forecast(model, x_enc, m_enc, x_dec, m_dec),
                          forecast(model, shifted_enc, m_enc, shifted_dec, m_dec), atol=1e-5)
    assert same == invariant


def test_gradients_reach_a_level_free_channel_and_sum_to_zero_over_its_window():
    """Its values within the window are read; a shift of the whole window is not, so ∂y/∂x sums to 0 over it."""
    torch.manual_seed(0)
    model = Informer(config(level_free=(0,))).eval()
    x_enc, m_enc, x_dec, m_dec = inputs()
    x_enc.requires_grad_(True)
    forecast(model, x_enc, m_enc, x_dec, m_dec).sum().backward()
    assert x_enc.grad[..., 0].abs().sum() > 1e-3
    assert torch.allclose(x_enc.grad[..., 0].sum(1), torch.zeros(2), atol=1e-5)
    assert x_enc.grad[..., 1].sum(1).abs().max() > 1e-4  # a channel with its level: no such constraint


@pytest.mark.parametrize("changes", [dict(level_free=(2,)),  # the target
                                     dict(level_free=(1, 0)), dict(level_free=(0, 0)), dict(level_free=(-1,)),
                                     dict(level_free=(0,), embedding="conv", lags=(), instance_scaling="none")])
def test_withholding_a_targets_level_or_the_conv_embeddings_is_refused(changes):
    with pytest.raises(ValueError, match="level_free needs"):
        config(**changes)
