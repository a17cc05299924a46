"""Importing official Informer2020 checkpoints: our forward reproduces the official one to 1e-5.

The official forward is `official_reference.official_forward`, an independent functional rewrite that
draws its key samples from torch's global RNG exactly like the official `_prob_QK`; our model draws the
same samples from a `torch.Generator` seeded alike.
"""
import pickle

import pytest
import torch

from informer_lab.analysis.errors import CheckpointError
from informer_lab.model import Batch, Informer
from informer_lab.analysis.checkpoints.official import infer_official_config, load_official_checkpoint, official_state_dict_to_ours

from .official_reference import make_official_state_dict, official_forward

ENC_IN, DEC_IN, C_OUT, N_MARKS = 5, 4, 3, 4
D_MODEL, N_HEADS, D_FF, FACTOR = 32, 4, 48, 5
SEQ_LEN, LABEL_LEN, PRED_LEN = 96, 48, 24  # ProbSparse is really sparse here: U = u = 25 < 72 and 20 < 96
TOL = 1e-5


class Opaque:
    """Anything that is not a tensor: weights_only loading must refuse to unpickle it."""

    def __init__(self):
        self.payload = [1, 2, 3]


def official_dict(e_layers, d_layers, seed=0, **kw):
    return make_official_state_dict(ENC_IN, DEC_IN, C_OUT, D_MODEL, N_HEADS, D_FF, e_layers, d_layers, N_MARKS,
                                    seed, **kw)


def settings(**kw):
    return dict(seq_len=SEQ_LEN, label_len=LABEL_LEN, pred_len=PRED_LEN, factor=FACTOR, n_heads=N_HEADS, **kw)


def make_batch(B=3, seed=123, n_marks=N_MARKS):
    g = torch.Generator().manual_seed(seed)
    x_enc = torch.randn(B, SEQ_LEN, ENC_IN, generator=g)
    x_dec = torch.cat([torch.randn(B, LABEL_LEN, DEC_IN, generator=g), torch.zeros(B, PRED_LEN, DEC_IN)], dim=1)
    return Batch(x_enc, torch.rand(B, SEQ_LEN, n_marks, generator=g) - 0.5,
                 x_dec, torch.rand(B, LABEL_LEN + PRED_LEN, n_marks, generator=g) - 0.5)


def import_model(sd, **overrides):
    config = infer_official_config(sd, **settings(**overrides))
    model = Informer(config)
    model.load_state_dict(official_state_dict_to_ours(sd, config), strict=True)
    return model.eval(), config


def reference(sd, batch, seed, e_layers, d_layers, **kw):
    torch.manual_seed(seed)
    return official_forward(sd, batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec, n_heads=N_HEADS,
                            factor=FACTOR, pred_len=PRED_LEN, e_layers=e_layers, d_layers=d_layers, **kw)


def ours(model, batch, seed):
    with torch.no_grad():
        return model(batch, generator=torch.Generator().manual_seed(seed))


def max_diff(a, b):
    return (a - b).abs().max().item()


ARCHITECTURES = [((2,), 1), ((2,), 2), ((3, 2, 1), 1), ((3, 2, 1), 2)]


# --------------------------------------------------------------------------------------------
# (a) same seed, same forecast
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("e_layers, d_layers", ARCHITECTURES)
@pytest.mark.parametrize("seed", [0, 7])
def test_imported_model_reproduces_the_official_forward(e_layers, d_layers, seed):
    sd = official_dict(e_layers, d_layers, seed=seed + 100)
    model, config = import_model(sd)
    assert config.e_layers == e_layers and config.d_layers == d_layers
    batch = make_batch()
    expected = reference(sd, batch, seed, e_layers, d_layers)
    actual = ours(model, batch, seed)
    assert actual.shape == expected.shape == (3, PRED_LEN, C_OUT)
    assert max_diff(actual, expected) < TOL


def test_reproduction_holds_for_minutely_marks_without_bias_and_relu():
    sd = make_official_state_dict(ENC_IN, DEC_IN, C_OUT, D_MODEL, N_HEADS, D_FF, (3, 2), 2, 5, seed=3,
                                  mark_bias=False)
    model, config = import_model(sd, activation="relu")
    assert (config.n_marks, config.mark_bias) == (5, False)
    batch = make_batch(n_marks=5)
    expected = reference(sd, batch, 11, (3, 2), 2, activation="relu")
    assert max_diff(ours(model, batch, 11), expected) < TOL


def test_reproduction_holds_with_full_attention_and_without_distilling():
    sd = official_dict((3,), 1, distil=False)
    model, config = import_model(sd, encoder_attention="full", decoder_attention="full")
    assert config.distil is False
    batch = make_batch()
    assert max_diff(ours(model, batch, 0), reference(sd, batch, 0, (3,), 1, attn="full")) < TOL


def test_inferred_config_has_the_official_shapes_and_quirks():
    config = infer_official_config(official_dict((3, 2, 1), 2), seq_len=96, label_len=48, pred_len=24)
    assert (config.enc_in, config.dec_in, config.c_out, config.d_model, config.d_ff) == \
        (ENC_IN, DEC_IN, C_OUT, D_MODEL, D_FF)
    assert (config.e_layers, config.d_layers, config.n_marks, config.mark_bias) == ((3, 2, 1), 2, N_MARKS, True)
    assert config.n_heads == 8 and config.factor == 5  # the official defaults when not given
    assert (config.mean_divisor, config.decoder_lazy, config.mix, config.sample_block) == ("L_K", "cumsum", True, 1)


# --------------------------------------------------------------------------------------------
# (b) the key-index draws matter
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("e_layers, d_layers", [((2,), 1), ((3, 2, 1), 2)])
def test_a_different_seed_gives_a_different_forecast(e_layers, d_layers):
    sd = official_dict(e_layers, d_layers)
    model, _ = import_model(sd)
    batch = make_batch()
    assert max_diff(reference(sd, batch, 0, e_layers, d_layers), reference(sd, batch, 1, e_layers, d_layers)) > 1e-2
    assert max_diff(ours(model, batch, 0), ours(model, batch, 1)) > 1e-2
    # and each seed still matches its counterpart
    assert max_diff(ours(model, batch, 1), reference(sd, batch, 1, e_layers, d_layers)) < TOL


# --------------------------------------------------------------------------------------------
# (c) through a real file
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("e_layers, d_layers", [((2,), 2), ((3, 2, 1), 1)])
def test_round_trip_through_a_checkpoint_file(tmp_path, e_layers, d_layers):
    sd = official_dict(e_layers, d_layers, seed=5)
    path = tmp_path / "checkpoint.pth"
    torch.save(sd, path)
    model, config = load_official_checkpoint(path, **settings())
    assert not model.training and config.e_layers == e_layers
    batch = make_batch()
    assert max_diff(ours(model, batch, 3), reference(sd, batch, 3, e_layers, d_layers)) < TOL


@pytest.mark.parametrize("wrap", ["model", "state_dict", "module"])
def test_wrapped_and_data_parallel_checkpoints_load(tmp_path, wrap):
    sd = official_dict((2,), 1)
    saved = {f"module.{k}": v for k, v in sd.items()} if wrap == "module" else {wrap: sd, "epoch": 6}
    torch.save(saved, tmp_path / "checkpoint.pth")
    model, _ = load_official_checkpoint(tmp_path / "checkpoint.pth", **settings())
    batch = make_batch()
    assert max_diff(ours(model, batch, 2), reference(sd, batch, 2, (2,), 1)) < TOL


# --------------------------------------------------------------------------------------------
# (d) refusals
# --------------------------------------------------------------------------------------------
def saved(tmp_path, obj, name="checkpoint.pth"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


def test_missing_key_is_refused_by_name(tmp_path):
    sd = official_dict((2,), 1)
    del sd["decoder.layers.0.cross_attention.key_projection.bias"]
    with pytest.raises(CheckpointError,
                       match=r"missing key.*decoder\.layers\.0\.cross_attention\.key_projection\.bias"):
        load_official_checkpoint(saved(tmp_path, sd), **settings())


def test_extra_key_is_refused_by_name(tmp_path):
    sd = official_dict((2,), 1)
    sd["decoder.layers.0.extra_gate.weight"] = torch.ones(3)
    with pytest.raises(CheckpointError, match=r"unknown key.*decoder\.layers\.0\.extra_gate\.weight"):
        load_official_checkpoint(saved(tmp_path, sd), **settings())


def test_wrong_shape_is_refused_with_expected_and_actual(tmp_path):
    sd = official_dict((2,), 1)
    sd["encoder.attn_layers.1.attention.value_projection.weight"] = torch.zeros(D_MODEL, D_MODEL + 1)
    with pytest.raises(CheckpointError, match=r"encoder\.attn_layers\.1\.attention\.value_projection\.weight: "
                                              rf"expected \[{D_MODEL}, {D_MODEL}\], got \[{D_MODEL}, {D_MODEL + 1}\]"):
        load_official_checkpoint(saved(tmp_path, sd), **settings())


def test_pickled_arbitrary_object_is_refused(tmp_path):
    sd = official_dict((2,), 1)
    path = saved(tmp_path, {"model": sd, "args": Opaque()})
    with pytest.raises(CheckpointError, match=r"contains Python code to run.*Opaque.*refused for safety") as info:
        load_official_checkpoint(path, **settings())
    assert "weights_only" not in str(info.value)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("content", [b"date,OT\n2016-07-01 00:00:00,30.5\n", pickle.dumps([1, 2, 3]), b""])
def test_a_file_that_is_not_a_checkpoint_is_refused(tmp_path, content):
    path = tmp_path / "not_a_checkpoint.pth"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=r"not_a_checkpoint\.pth.*(not a torch checkpoint|not a state_dict)"):
        load_official_checkpoint(path, **settings())


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_official_checkpoint(tmp_path / "nowhere.pth", **settings())


def test_a_checkpoint_that_is_not_a_state_dict_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="not a state_dict"):
        load_official_checkpoint(saved(tmp_path, [torch.zeros(3)]), **settings())


def test_fixed_time_embedding_is_refused_as_not_timef(tmp_path):
    sd = official_dict((2,), 1)
    for side in ("enc", "dec"):
        for p in ("weight", "bias"):
            del sd[f"{side}_embedding.temporal_embedding.embed.{p}"]
        for field, size in (("month", 13), ("day", 32), ("weekday", 7), ("hour", 24)):
            sd[f"{side}_embedding.temporal_embedding.{field}_embed.emb.weight"] = torch.zeros(size, D_MODEL)
    with pytest.raises(CheckpointError, match=r"only embed='timeF'.*hour_embed"):
        load_official_checkpoint(saved(tmp_path, sd), **settings())


def test_config_that_does_not_match_the_dict_is_refused():
    sd = official_dict((2,), 1)
    config = infer_official_config(sd, **settings()).replace(e_layers=(3,))
    with pytest.raises(CheckpointError, match=r"missing key.*encoder\.attn_layers\.2\."):
        official_state_dict_to_ours(sd, config)


# --------------------------------------------------------------------------------------------
# (e) mix is exercised
# --------------------------------------------------------------------------------------------
def test_without_mix_the_forecast_differs():
    sd = official_dict((2,), 2)
    mixed, _ = import_model(sd)
    unmixed, config = import_model(sd, mix=False)
    assert config.mix is False
    batch = make_batch()
    expected = reference(sd, batch, 4, (2,), 2)
    assert max_diff(ours(mixed, batch, 4), expected) < TOL
    assert max_diff(ours(unmixed, batch, 4), expected) > 1e-2
    # and the reference agrees with our unmixed model when it, too, skips the mix
    assert max_diff(ours(unmixed, batch, 4), reference(sd, batch, 4, (2,), 2, mix=False)) < TOL


@pytest.mark.parametrize("quirk_off", [dict(mean_divisor="U"), dict(decoder_lazy="cummean"), dict(sample_block=4)])
def test_each_other_quirk_is_needed_too(quirk_off):
    sd = official_dict((2,), 2)
    model, _ = import_model(sd, **quirk_off)
    batch = make_batch()
    assert max_diff(ours(model, batch, 4), reference(sd, batch, 4, (2,), 2)) > 1e-3
