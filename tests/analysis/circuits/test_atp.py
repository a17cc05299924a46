"""Attribution patching against exact patching: equal where the forecast is linear in the patched contexts, apart
where a patch moves a saturated softmax downstream; over pairs, the comparison's interval and the heads named."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from informer_lab.model import Batch, Informer, InformerConfig

from informer_lab.analysis.circuits.attribution import (atp_estimates, atp_vs_exact, exact_patches,
                                                       exact_position_patches, pair_windows)
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV


def linear_after_cross(**changes) -> Informer:
    """A small model whose forecast is linear in its last cross-attention heads' contexts: the decoder's norms after
    the cross-attention and its FFN activation are identities (out_projection → residual → W2·W1 → projection)."""
    torch.manual_seed(0)
    config = InformerConfig(**{**dict(enc_in=2, dec_in=2, c_out=2, seq_len=24, label_len=8, pred_len=6, n_marks=3,
                                      d_model=16, n_heads=4, e_layers=(2,), d_ff=16, dropout=0.0, factor=1),
                               **changes})
    model = Informer(config)
    layer = model.decoder.layers[-1]
    layer.norm2, layer.norm3, model.decoder.norm = nn.Identity(), nn.Identity(), nn.Identity()
    layer.ffn.activation = lambda x: x
    return model.eval()


def pair_batches(model: Informer, K: int = 3):
    c = model.config
    g = torch.Generator().manual_seed(5)

    def batch():
        x = torch.randn(K, c.seq_len, c.enc_in, generator=g)
        x_dec = torch.cat([x[:, -c.label_len:], torch.zeros(K, c.pred_len, c.enc_in)], dim=1)
        return Batch(x, torch.randn(K, c.seq_len, c.n_marks, generator=g), x_dec,
                     torch.randn(K, c.dec_len, c.n_marks, generator=g))
    return batch(), batch()


def test_atp_equals_exact_patching_where_the_forecast_is_linear_in_the_context():
    model = linear_after_cross()
    A, B = pair_batches(model)
    atp, positions = atp_estimates(model, A, B, seed=1)
    exact = exact_patches(model, A, B, seed=1)
    cross = [s.index for s in model.sites if s.kind == "cross"]
    np.testing.assert_allclose(atp[:, cross], exact[:, cross], rtol=1e-5, atol=1e-7)
    assert np.abs(exact[:, cross]).max() > 1e-3  # not trivially zero
    np.testing.assert_allclose(positions["cross.0"].sum(axis=1), atp[:, cross[0]], rtol=1e-10)


def test_exact_position_patches_equal_atp_where_linear_and_each_patch_is_one_position():
    """Per (head, query position): exact = AtP where the forecast is linear in the context (the cross site of the
    linear model), in every chunking of the variants; a patch of one position of an encoder head moves the forecast
    but less than patching the head whole."""
    model = linear_after_cross()
    A, B = pair_batches(model)
    _, positions = atp_estimates(model, A, B, seed=1)
    with torch.no_grad():  # an exact patch is a difference of two float32 forecasts: good to their last bits only
        resolution = 2 * float(np.spacing(np.float32(model(B).abs().max())))
    for max_rows in (3, 7, 10_000):  # one variant a call, chunks that split a site's variants, all at once
        exact = exact_position_patches(model, A, B, seed=1, sites=["cross.0"], max_rows=max_rows)
        np.testing.assert_allclose(exact["cross.0"], positions["cross.0"], rtol=1e-5, atol=resolution)
    assert np.abs(exact["cross.0"]).max() > 1e-4
    encoder = exact_position_patches(model, A, B, seed=1, sites=["encoder.0.0"])["encoder.0.0"]  # [K, L, H]
    heads = exact_patches(model, A, B, seed=1)[:, 0]  # the same site, whole heads
    assert encoder.shape == (3, model.config.seq_len, model.config.n_heads) and np.abs(encoder).max() > 0
    assert np.abs(encoder).max() < np.abs(heads).max()


def test_atp_misses_where_a_patch_moves_a_saturated_softmax():
    """decoder_self heads reach the forecast only through the cross-attention's queries (its norm1 made an identity
    too): with the query weights small that softmax is nearly linear and AtP nearly exact; scaled up, it saturates
    and the first-order estimate drifts from the exact patch (Kramár et al. 2024)."""
    errors = []
    for scale in (0.3, 100.0):
        model = linear_after_cross()
        model.decoder.layers[0].norm1 = nn.Identity()
        with torch.no_grad():
            model.decoder.layers[0].cross_attention.query_projection.weight.mul_(scale)
        A, B = pair_batches(model)
        sites = [s.index for s in model.sites if s.kind == "decoder_self"]
        exact = exact_patches(model, A, B)[:, sites]
        errors.append(np.abs(atp_estimates(model, A, B)[0][:, sites] - exact).max() / np.abs(exact).max())
    assert errors[0] < 1e-3 and errors[1] > 0.05, errors


def test_pairs_are_spread_and_never_a_window_with_itself(tiny_prepared):
    pairs = pair_windows(tiny_prepared, "test", 20)
    assert len(pairs.clean) == 20 and (pairs.clean != pairs.corrupt).all()
    assert (np.diff(pairs.clean) == pairs.stride).all()
    with pytest.raises(ValueError):
        pair_windows(tiny_prepared, "test", 0)


def test_atp_vs_exact_on_a_trained_model(tiny_trained):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    result = atp_vs_exact(checkpoint.model, prepared, "test", pairs=24, seed=0)
    assert len(result.table) == 24 * len(checkpoint.model.sites) * 4
    assert set(result.positions["site"]) == {s.name for s in checkpoint.model.sites}
    per_pair = result.positions.groupby(["pair", "site", "head"])["atp"].sum().to_numpy()
    np.testing.assert_allclose(np.sort(per_pair), np.sort(result.table["atp"].to_numpy()), rtol=1e-9, atol=1e-12)
    assert -1 <= result.rho.estimate <= 1
    heads = result.heads
    assert not (heads["disagree"] & ~heads["disagree_raw"]).any()  # BH never lists a head the raw test keeps out
    shown = heads.dropna(subset=["difference_low"])
    assert ((shown["difference_low"] <= shown["difference"]) & (shown["difference"] <= shown["difference_high"])).all()
