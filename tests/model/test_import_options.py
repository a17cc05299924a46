"""The InformerConfig options that imported models switch on (analysis/checkpoints/imports): defaults unchanged, each checked."""
import pytest
import torch

from informer_lab.model import Batch, Informer, InformerConfig
from informer_lab.model.attention import draw_key_sample, sample_sizes
from informer_lab.model.lags import hf_sinusoid_table, instance_scale


def tiny(**changes) -> InformerConfig:
    return InformerConfig(**{**dict(enc_in=2, dec_in=2, c_out=2, seq_len=24, label_len=8, pred_len=6, n_marks=3,
                                    d_model=8, n_heads=2, d_ff=8, dropout=0.0), **changes})


def test_defaults_keep_informer2020s_behaviour():
    c = tiny()
    assert (c.mix_sites, c.value_bias, c.distil_padding, c.single_head_union, c.active_counts, c.embedding, c.lags,
            c.instance_scaling, c.final_norm) == ("decoder_self", True, 1, False, "paper", "conv", (), "none", True)
    assert (c.history_len, c.enc_len) == (0, 24)


def test_hf_sample_sizes_use_log1p_and_scale_U_with_the_queries():
    assert sample_sizes(5, 96, 96) == (25, 25)
    assert sample_sizes(5, 96, 96, "hf") == (96, 25)  # U = 5·96·⌈ln 97⌉ capped at 96; u = 5·⌈ln 97⌉ = 25
    assert sample_sizes(2, 6, 6, "hf") == (6, 4)


def test_one_shared_sample_does_not_repeat_the_block():
    sample = draw_key_sample(10, 7, 5, 1_000_000, torch.Generator().manual_seed(0), torch.device("cpu"))
    assert sample.index.shape == (10, 5) and bool((sample.index == sample.index[0]).all())
    again = torch.randint(0, 7, (5,), generator=torch.Generator().manual_seed(0))  # HF's draw, same numbers
    assert torch.equal(sample.index[0], again)


@pytest.mark.parametrize("changes, message", [
    (dict(embedding="lags", lags=(1, 30)), "lags in"),
    (dict(embedding="lags", lags=()), "lags in"),
    (dict(lags=(1,)), "read only by embedding='lags'"),
    (dict(instance_scaling="mean"), "needs embedding='lags'"),
    (dict(embedding="lags", lags=(1,), c_out=3), "c_out ≤ enc_in"),
    (dict(embedding="lags", lags=(1,), dec_in=1, c_out=1), "dec_in = enc_in"),
    (dict(distil_padding=3), "distil_padding"),
    (dict(mix_sites="encoder"), "mix_sites"),
])
def test_inconsistent_options_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(**changes)


def test_the_lags_embedding_reads_history_and_only_the_forecast_steps():
    c = tiny(embedding="lags", lags=(1, 4), instance_scaling="std", final_norm=False, active_counts="hf",
             sample_block=24)
    assert (c.history_len, c.enc_len) == (4, 20)
    torch.manual_seed(0)
    model = Informer(c).eval()
    g = torch.Generator().manual_seed(1)
    x_enc, x_dec = torch.randn(2, 24, 2, generator=g), torch.randn(2, 14, 2, generator=g)
    marks = torch.randn(2, 24, 3, generator=g), torch.randn(2, 14, 3, generator=g)
    forecast = model(Batch(x_enc, marks[0], x_dec, marks[1]), generator=torch.Generator().manual_seed(0))
    changed = x_dec.clone()
    changed[:, :8] += 5.0  # the label rows are not read
    same = model(Batch(x_enc, marks[0], changed, marks[1]), generator=torch.Generator().manual_seed(0))
    assert torch.allclose(forecast, same)
    # the forecast is mapped back by each window's own loc and scale (std over the encoder's 20 positions)
    with torch.no_grad():
        model.projection.weight.zero_()
        model.projection.bias.fill_(1.0)
        loc, scale = x_enc[:, 4:].mean(1, keepdim=True), (x_enc[:, 4:].var(1, unbiased=False, keepdim=True)
                                                           + 1e-5).sqrt()
        assert torch.allclose(model(Batch(x_enc, marks[0], x_dec, marks[1])), (loc + scale).expand(2, 6, 2))


def test_instance_scales_and_the_sinusoid():
    x = torch.tensor([[[1.0], [-3.0]]])
    assert instance_scale(x, "mean")[1].item() == 2.0 and instance_scale(x, "mean")[0].item() == 0.0
    loc, scale = instance_scale(x, "std")
    assert loc.item() == -1.0 and abs(scale.item() - (4.0 + 1e-5) ** 0.5) < 1e-6
    table = hf_sinusoid_table(3, 4)  # columns: sin(t), sin(t/100), cos(t), cos(t/100)
    assert torch.allclose(table[2], torch.tensor([torch.sin(torch.tensor(2.0)), torch.sin(torch.tensor(0.02)),
                                                  torch.cos(torch.tensor(2.0)), torch.cos(torch.tensor(0.02))]))


def test_a_lags_model_with_fewer_targets_than_inputs_maps_back_by_the_targets_own_scale():
    """Features MS: the target is the window's last column; the forecast is rescaled by that column's loc and
    scale, not the first's."""
    c = tiny(embedding="lags", lags=(0, 4), instance_scaling="std", c_out=1)
    torch.manual_seed(0)
    model = Informer(c).eval()
    g = torch.Generator().manual_seed(1)
    x_enc = torch.randn(3, 24, 2, generator=g) * torch.tensor([1.0, 7.0]) + torch.tensor([-3.0, 5.0])
    x_dec, marks = torch.randn(3, 14, 2, generator=g), (torch.randn(3, 24, 3, generator=g),
                                                          torch.randn(3, 14, 3, generator=g))
    with torch.no_grad():
        model.projection.weight.zero_()
        model.projection.bias.fill_(1.0)
        target = x_enc[:, 4:, 1:]
        loc, scale = target.mean(1, keepdim=True), (target.var(1, unbiased=False, keepdim=True) + 1e-5).sqrt()
        forecast = model(Batch(x_enc, marks[0], x_dec, marks[1]))
    assert forecast.shape == (3, 6, 1)
    assert torch.allclose(forecast, (loc + scale).expand(3, 6, 1))
