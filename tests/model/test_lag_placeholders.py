"""The lags embedding's decoder placeholders (InformerConfig.placeholders, model/lags.py): "zero" reads x_dec's
forecast steps as given (HF's zeros, −loc/scale once scaled); "last" repeats the window's last value in every
channel, whatever x_dec holds there."""
import pytest
import torch

from informer_lab.model import Informer
from informer_lab.model.lags import LagEmbedding, instance_scale
from tests.model.lag_cases import C, L, LABEL, LAGS, MARKS, PRED, config, forecast, inputs



def test_last_equals_zero_placeholders_fed_the_windows_last_row_by_hand():
    torch.manual_seed(0)
    last = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", L - 6, PRED, placeholders="last").eval()
    plain = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", L - 6, PRED).eval()
    plain.load_state_dict(last.state_dict())
    x_enc, _, x_dec, m_dec = inputs()
    by_hand = x_dec.clone()
    by_hand[:, LABEL:] = x_enc[:, -1:]  # every channel, targets included
    assert torch.allclose(last(x_dec, m_dec, x_enc), plain(by_hand, m_dec, x_enc), atol=1e-6)
    assert not torch.allclose(last(x_dec, m_dec, x_enc), plain(x_dec, m_dec, x_enc), atol=1e-4)


def test_a_zero_placeholder_reads_as_minus_loc_over_scale_and_last_as_the_last_value():
    """What the lag-0 feature of a forecast step holds, computed from the window's statistics."""
    x_enc, _, x_dec, _ = inputs()
    x_dec[:, LABEL:] = 0.0
    loc, scale = instance_scale(x_enc[:, max(LAGS):], "std")
    for kind, expected in (("zero", -loc / scale), ("last", (x_enc[:, -1:] - loc) / scale)):
        embedding = LagEmbedding(C, MARKS, 8, 0.0, LAGS, "std", L - 6, PRED, placeholders=kind).eval()
        seen = {}
        embedding.value_projection.register_forward_hook(lambda _m, args, _out: seen.update(features=args[0]))
        embedding(x_dec, torch.zeros(2, LABEL + PRED, MARKS), x_enc)
        lag0 = seen["features"][..., :C * len(LAGS)].reshape(2, PRED, C, len(LAGS))[..., LAGS.index(0)]
        assert torch.allclose(lag0, expected.expand(2, PRED, C), atol=1e-5), kind


@pytest.mark.parametrize("placeholders, invariant", [("last", True), ("zero", False)])
def test_with_last_placeholders_the_forecast_does_not_read_x_decs_forecast_steps(placeholders, invariant):
    torch.manual_seed(0)
    model = Informer(config(c_out=2, placeholders=placeholders)).eval()
    x_enc, m_enc, x_dec, m_dec = inputs()
    other = x_dec.clone()
    other[:, LABEL:] = torch.randn(2, PRED, C) * 5.0
    same = torch.allclose(forecast(model, x_enc, m_enc, x_dec, m_dec), forecast(model, x_enc, m_enc, other, m_dec),
                          atol=1e-6)
    assert same == invariant


def test_last_placeholders_need_the_lags_embedding():
    with pytest.raises(ValueError, match="placeholders='last' needs embedding='lags'"):
        config(placeholders="last", embedding="conv", lags=(), instance_scaling="none")
    with pytest.raises(ValueError, match="placeholders must be one of"):
        config(placeholders="mean")
