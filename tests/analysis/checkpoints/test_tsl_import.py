"""Importing Time-Series-Library Informer checkpoints: our forward reproduces TSL's to 1e-5.

TSL's forward is `tsl_reference.tsl_forward`, an independent functional rewrite (checked once against TSL's own
modules, ≤ 7e-7 on six shapes) that draws its key samples from torch's global RNG as TSL's `_prob_QK`; our model
draws the same samples from a `torch.Generator` seeded alike.
"""
import pytest
import torch

from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.imports.tsl import TSL_QUIRKS, infer_tsl_config, load_tsl_checkpoint, tsl_state_dict_to_ours
from informer_lab.model import Batch, HeadMask, Informer, distilled_length

from .official_reference import make_official_state_dict
from .tsl_reference import make_tsl_state_dict, tsl_forward

ENC_IN, DEC_IN, C_OUT, N_MARKS, D_MODEL, D_FF, FACTOR = 5, 4, 3, 4, 32, 48, 3
SEQ_LEN, LABEL_LEN, PRED_LEN = 96, 48, 24  # U = u = 15 < 72 (decoder), 15 < 49 (after TSL's distilling): sparse
TOL = 1e-5


def tsl_dict(e_layers, d_layers, n_heads, seed=0, distil=True):
    return make_tsl_state_dict(ENC_IN, DEC_IN, C_OUT, D_MODEL, n_heads, D_FF, e_layers, d_layers, N_MARKS, seed,
                               distil=distil)


def make_batch(B=3, seed=123):
    g = torch.Generator().manual_seed(seed)
    x_dec = torch.cat([torch.randn(B, LABEL_LEN, DEC_IN, generator=g), torch.zeros(B, PRED_LEN, DEC_IN)], dim=1)
    return Batch(torch.randn(B, SEQ_LEN, ENC_IN, generator=g), torch.rand(B, SEQ_LEN, N_MARKS, generator=g) - 0.5,
                 x_dec, torch.rand(B, LABEL_LEN + PRED_LEN, N_MARKS, generator=g) - 0.5)


def import_model(sd, n_heads, **overrides):
    config = infer_tsl_config(sd, seq_len=SEQ_LEN, label_len=LABEL_LEN, pred_len=PRED_LEN, factor=FACTOR,
                              n_heads=n_heads, **overrides)
    model = Informer(config)
    model.load_state_dict(tsl_state_dict_to_ours(sd, config), strict=True)
    return model.eval(), config


def reference(sd, batch, seed, n_heads):
    torch.manual_seed(seed)
    return tsl_forward(sd, batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec, n_heads=n_heads, factor=FACTOR,
                       pred_len=PRED_LEN)


def ours(model, batch, seed):
    with torch.no_grad():
        return model(batch, generator=torch.Generator().manual_seed(seed))


def max_diff(a, b):
    return (a - b).abs().max().item()


SHAPES = [(1, 1, 4, True), (2, 1, 4, True), (3, 2, 2, True), (2, 2, 1, True), (3, 1, 1, True), (2, 2, 4, False),
          (3, 2, 1, False)]


# --------------------------------------------------------------------------------------------
# (a) same seed, same forecast
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("e_layers, d_layers, n_heads, distil", SHAPES)
@pytest.mark.parametrize("seed", [0, 7])
def test_imported_model_reproduces_the_tsl_forward(e_layers, d_layers, n_heads, distil, seed):
    sd = tsl_dict(e_layers, d_layers, n_heads, seed=seed + 100, distil=distil)
    model, config = import_model(sd, n_heads)
    assert (config.e_layers, config.d_layers, config.distil) == ((e_layers,), d_layers, distil or e_layers == 1)
    batch = make_batch()
    expected = reference(sd, batch, seed, n_heads)
    actual = ours(model, batch, seed)
    assert actual.shape == expected.shape == (3, PRED_LEN, C_OUT)
    assert max_diff(actual, expected) < TOL


def test_one_head_reproduces_tsl_one_window_at_a_time_too():
    sd = tsl_dict(2, 1, 1, seed=4)
    model, _ = import_model(sd, 1)
    batch = make_batch(B=1)
    assert max_diff(ours(model, batch, 2), reference(sd, batch, 2, 1)) < TOL


def test_the_config_has_tsls_shapes_and_quirks():
    config = infer_tsl_config(tsl_dict(3, 2, 4), seq_len=96, label_len=48, pred_len=24)
    assert (config.enc_in, config.dec_in, config.c_out, config.d_model, config.d_ff, config.n_marks) == \
        (ENC_IN, DEC_IN, C_OUT, D_MODEL, D_FF, N_MARKS)
    assert (config.n_heads, config.factor, config.value_bias, config.mark_bias) == (8, 1, False, False)
    assert all(getattr(config, k) == v for k, v in TSL_QUIRKS.items())


def test_tsl_distilling_keeps_its_longer_lengths():
    assert [distilled_length(96, 2), distilled_length(49, 2)] == [49, 26]
    assert [distilled_length(96), distilled_length(48)] == [48, 24]


# --------------------------------------------------------------------------------------------
# (b) every quirk is needed, and the key draws matter
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("quirk_off", [dict(mix_sites="decoder_self"), dict(distil_padding=1),
                                       dict(cross_attention="full"), dict(mean_divisor="U"),
                                       dict(decoder_lazy="cummean"), dict(sample_block=4)])
def test_each_quirk_is_needed(quirk_off):
    sd = tsl_dict(2, 2, 4)
    model, _ = import_model(sd, 4, **quirk_off)
    batch = make_batch()
    assert max_diff(ours(model, batch, 4), reference(sd, batch, 4, 4)) > 1e-3


def test_the_single_head_union_is_needed_with_one_head_and_a_batch():
    sd = tsl_dict(2, 2, 1)
    model, _ = import_model(sd, 1, single_head_union=False)
    batch = make_batch()
    expected = reference(sd, batch, 4, 1)
    assert max_diff(ours(model, batch, 4), expected) > 1e-3
    # one window at a time, TSL itself forecasts without the union: ours without it agrees
    for b in range(3):
        window = batch.slice(b, b + 1)
        assert max_diff(ours(model, window, 4), reference(sd, window, 4, 1)) < TOL


def test_a_different_seed_gives_a_different_forecast():
    sd = tsl_dict(2, 1, 4)
    model, _ = import_model(sd, 4)
    batch = make_batch()
    assert max_diff(reference(sd, batch, 0, 4), reference(sd, batch, 1, 4)) > 1e-2
    assert max_diff(ours(model, batch, 0), ours(model, batch, 1)) > 1e-2


def test_head_mask_variants_equal_one_mask_at_a_time():
    """TSL mixes heads at the cross-attention too: the variant path must not trim its query rows."""
    sd = tsl_dict(2, 2, 4)
    model, _ = import_model(sd, 4, cross_attention="full")
    batch = make_batch(B=2)
    gates = model.full_gates(3)
    gates[1, model.n_sites - 1, 0] = 0.0  # the last cross-attention loses head 0
    gates[2, 0, 3] = 0.0
    with torch.no_grad():
        together = model(batch, head_mask=HeadMask(gates, variants=True), generator=torch.Generator().manual_seed(1))
        one_by_one = torch.cat([model(batch, head_mask=HeadMask(gates[k:k + 1]),
                                      generator=torch.Generator().manual_seed(1)) for k in range(3)])
    assert max_diff(together, one_by_one) < TOL


# --------------------------------------------------------------------------------------------
# (c) through a real file, and refusals
# --------------------------------------------------------------------------------------------
def settings(**kw):
    return dict(seq_len=SEQ_LEN, label_len=LABEL_LEN, pred_len=PRED_LEN, factor=FACTOR, n_heads=4, **kw)


def saved(tmp_path, obj, name="checkpoint.pth"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


@pytest.mark.parametrize("wrap", [None, "module"])
def test_round_trip_through_a_checkpoint_file(tmp_path, wrap):
    sd = tsl_dict(2, 1, 4, seed=5)
    path = saved(tmp_path, {f"module.{k}": v for k, v in sd.items()} if wrap else sd)
    model, config = load_tsl_checkpoint(path, **settings())
    assert not model.training and config.e_layers == (2,)
    batch = make_batch()
    assert max_diff(ours(model, batch, 3), reference(sd, batch, 3, 4)) < TOL


def test_an_imputation_checkpoint_is_refused_by_name(tmp_path):
    sd = tsl_dict(2, 1, 4)
    sd["projection.weight"], sd["projection.bias"] = torch.zeros(C_OUT, D_MODEL), torch.zeros(C_OUT)
    with pytest.raises(CheckpointError, match=r"imputation.*projection\.bias") as info:
        load_tsl_checkpoint(saved(tmp_path, sd), **settings())
    assert len(str(info.value)) <= 300


def test_a_fixed_time_embedding_is_refused(tmp_path):
    sd = tsl_dict(2, 1, 4)
    for side in ("enc", "dec"):
        del sd[f"{side}_embedding.temporal_embedding.embed.weight"]
        sd[f"{side}_embedding.temporal_embedding.hour_embed.emb.weight"] = torch.zeros(24, D_MODEL)
    with pytest.raises(CheckpointError, match=r"only embed='timeF'.*hour_embed"):
        load_tsl_checkpoint(saved(tmp_path, sd), **settings())


def test_an_official_checkpoint_is_not_a_tsl_one(tmp_path):
    sd = make_official_state_dict(ENC_IN, DEC_IN, C_OUT, D_MODEL, 4, D_FF, 2, 1, N_MARKS, seed=0)
    with pytest.raises(CheckpointError, match=r"not a TSL Informer: projection\.bias lies outside the decoder"):
        load_tsl_checkpoint(saved(tmp_path, sd), **settings())


def test_a_missing_key_is_refused_by_name(tmp_path):
    sd = tsl_dict(2, 1, 4)
    del sd["decoder.layers.0.cross_attention.key_projection.bias"]
    with pytest.raises(CheckpointError, match=r"TSL Informer.*missing key.*cross_attention\.key_projection\.bias"):
        load_tsl_checkpoint(saved(tmp_path, sd), **settings())


def test_length_one_is_refused():
    with pytest.raises(CheckpointError, match="length 1"):
        infer_tsl_config(tsl_dict(2, 1, 4), seq_len=96, label_len=0, pred_len=1)


def test_an_imported_tsl_model_gets_the_padding_2_transfer_and_its_rollout_sums_to_one():
    """The pyramid's maps come from the model's own layers: TSL's distilling pads its conv by 2 (96 → 49), so P is the
    padding-2 map, and rollout through the mixed (mix at every site) heads still gives shares that sum to 1."""
    import numpy as np

    from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
    from informer_lab.analysis.anatomy.transfer import structural_transfer

    model, config = import_model(tsl_dict(2, 1, 4), 4)
    assert config.distil_padding == 2 and config.mix_sites == "all"
    pieces = record_pieces(model, make_batch(B=1), seed=0)
    for form in ("structural", "routed", "jacobian"):
        graph = window_graph(model, pieces, 0, distil=form)
        P = graph.encoder[0][0][1]
        assert P.shape == (49, 96)
        if form == "structural":
            np.testing.assert_allclose(P, structural_transfer(96, 2))
        r = rollout(graph, range(1, PRED_LEN + 1))
        np.testing.assert_allclose(r.inputs.sum(axis=1) + r.label, 1.0)
