"""The speed baseline `benchmarks.official_style.Informer` computes the official Informer2020 function.

Checked against `tests.analysis.checkpoints.official_reference.official_forward` (an independent functional rewrite of
the official forward that draws its key samples from the global RNG like the official `_prob_QK`) and
against our own model importing its weights with the official quirks. Each seed fixes the key samples.
"""
import pytest
import torch

from informer_lab.analysis.checkpoints.official import infer_official_config, official_state_dict_to_ours
from benchmarks.official_style import Informer as OfficialStyle
from informer_lab.model import Batch, Informer

from tests.analysis.checkpoints.official_reference import make_official_state_dict, official_forward

ENC_IN, DEC_IN, C_OUT, N_MARKS = 5, 4, 3, 4
SEQ_LEN, LABEL_LEN, PRED_LEN, FACTOR = 96, 48, 24, 5  # really sparse: u = U = 25 < 72 and 20 < 96
TOL = 1e-5

# (e_layers, d_layers, d_model, n_heads, d_ff, activation)
SHAPES = [(2, 1, 32, 4, 48, "gelu"), (3, 2, 24, 3, 40, "relu"), (1, 1, 16, 2, 16, "gelu")]


def baseline(e_layers, d_layers, d_model, n_heads, d_ff, activation, seed=0, **kw):
    torch.manual_seed(seed)
    return OfficialStyle(ENC_IN, DEC_IN, C_OUT, SEQ_LEN, LABEL_LEN, PRED_LEN, factor=FACTOR, d_model=d_model,
                         n_heads=n_heads, e_layers=e_layers, d_layers=d_layers, d_ff=d_ff, dropout=0.05,
                         activation=activation, **kw)


def make_batch(B=3, seed=123):
    g = torch.Generator().manual_seed(seed)
    x_enc = torch.randn(B, SEQ_LEN, ENC_IN, generator=g)
    x_dec = torch.cat([torch.randn(B, LABEL_LEN, DEC_IN, generator=g), torch.zeros(B, PRED_LEN, DEC_IN)], dim=1)
    return Batch(x_enc, torch.rand(B, SEQ_LEN, N_MARKS, generator=g) - 0.5,
                 x_dec, torch.rand(B, LABEL_LEN + PRED_LEN, N_MARKS, generator=g) - 0.5)


def run_baseline(model, batch, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        return model(batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec)


def run_reference(sd, batch, seed, e_layers, d_layers, n_heads, activation, **kw):
    torch.manual_seed(seed)
    return official_forward(sd, batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec, n_heads=n_heads,
                            factor=FACTOR, pred_len=PRED_LEN, e_layers=e_layers, d_layers=d_layers,
                            activation=activation, **kw)


def with_trained_batchnorm(model):
    """Move the BatchNorm running statistics off (0, 1), so that ignoring them would show."""
    g = torch.Generator().manual_seed(1)
    for name, buf in model.named_buffers():
        if name.endswith("running_mean"):
            buf.copy_(torch.randn(buf.shape, generator=g) * 0.5)
        elif name.endswith("running_var"):
            buf.copy_(torch.rand(buf.shape, generator=g) * 2.0 + 0.25)
    return model.eval()


def max_diff(a, b):
    return (a - b).abs().max().item()


# --------------------------------------------------------------------------------------------
# (a) the official forward
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 7])
def test_eval_forward_equals_the_official_reference(shape, seed):
    e_layers, d_layers, _, n_heads, _, activation = shape
    model = with_trained_batchnorm(baseline(*shape))
    batch = make_batch()
    expected = run_reference(model.state_dict(), batch, seed, e_layers, d_layers, n_heads, activation)
    actual = run_baseline(model, batch, seed)
    assert actual.shape == expected.shape == (3, PRED_LEN, C_OUT)
    assert max_diff(actual, expected) < TOL


def test_full_attention_and_no_distilling_equal_the_official_reference():
    model = with_trained_batchnorm(baseline(3, 1, 32, 4, 48, "gelu", attn="full", distil=False))
    batch = make_batch()
    expected = run_reference(model.state_dict(), batch, 0, 3, 1, 4, "gelu", attn="full")
    assert max_diff(run_baseline(model, batch, 0), expected) < TOL


def test_state_dict_has_the_official_names_and_shapes():
    model = baseline(2, 1, 32, 4, 48, "gelu")
    official = make_official_state_dict(ENC_IN, DEC_IN, C_OUT, 32, 4, 48, 2, 1, N_MARKS, seed=0)
    ours = model.state_dict()
    assert sorted(ours) == sorted(official)
    assert all(ours[k].shape == official[k].shape for k in ours)
    model.load_state_dict(official, strict=True)  # and the reference's random official dict runs the same
    batch = make_batch()
    assert max_diff(run_baseline(model.eval(), batch, 3),
                    run_reference(official, batch, 3, 2, 1, 4, "gelu")) < TOL


def test_the_key_samples_matter():
    """Another seed draws other keys and changes the forecast: a gather on other indices would fail above."""
    model = with_trained_batchnorm(baseline(*SHAPES[0]))
    batch = make_batch()
    assert max_diff(run_baseline(model, batch, 0), run_baseline(model, batch, 1)) > 1e-2


# --------------------------------------------------------------------------------------------
# (b) our model, importing its weights with the official quirks, gives the same forecast
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES[:2])
def test_our_model_importing_its_weights_reproduces_it(shape):
    e_layers, d_layers, _, n_heads, _, activation = shape
    model = with_trained_batchnorm(baseline(*shape))
    sd = model.state_dict()
    config = infer_official_config(sd, seq_len=SEQ_LEN, label_len=LABEL_LEN, pred_len=PRED_LEN, factor=FACTOR,
                                   n_heads=n_heads, activation=activation)
    assert config.e_layers == (e_layers,) and config.d_layers == d_layers
    ours = Informer(config)
    ours.load_state_dict(official_state_dict_to_ours(sd, config), strict=True)
    ours.eval()
    batch = make_batch()
    for seed in (0, 5):
        with torch.no_grad():
            actual = ours(batch, generator=torch.Generator().manual_seed(seed))
        assert max_diff(actual, run_baseline(model, batch, seed)) < TOL


# --------------------------------------------------------------------------------------------
# (c) it trains
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES[:2])
def test_train_mode_backward_gives_finite_gradients_everywhere(shape):
    model = baseline(*shape).train()
    batch = make_batch(B=4)
    out = model(batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec)
    torch.nn.functional.mse_loss(out, torch.randn_like(out)).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(p.grad).all(), f"{name} has a non-finite gradient"
        assert p.grad.abs().sum() > 0, f"{name} has an all-zero gradient"
