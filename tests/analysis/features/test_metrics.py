"""Sites, activations and the held-out figures on the tiny trained model: every residual site is listed with spans of
its recorded length, splicing in x itself leaves the forecast's MSE exactly unchanged, and FVU / L0 / dead are the
formulas on the codes the dictionary gives."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.model import key_generator, recording

from informer_lab.analysis.anatomy.lens import window_batches
from informer_lab.analysis.compare.verdict import forecast_windows
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features.metrics import evaluate
from informer_lab.analysis.features.sae import SAESettings, fvu, train_sae
from informer_lab.analysis.features.sites import check_site, collect, position_spans, residual_sites

SITES = ("encoder.0.layer0.out", "encoder.0.distil0.out", "encoder.0.layer1.out", "encoder.out", "decoder.layer0.out")


@pytest.fixture(scope="module")
def tiny_sae(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    train = collect(model, tiny_prepared, "train", "encoder.out", windows=128, seed=0)
    return train, train_sae(train.values, SAESettings(k=4, expansion=2, steps=150, batch_size=128, seed=0))


def test_every_residual_site_is_listed_with_spans_of_its_recorded_length(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    assert residual_sites(model) == SITES
    batch, _ = next(window_batches(tiny_prepared, "test", [0, 1]))
    with torch.no_grad(), recording(*SITES) as rec:
        model(batch, generator=key_generator(0))
    for site in SITES:
        spans = position_spans(model, site)
        assert len(spans) == rec.records[site].shape[1], site
        assert (spans[:, 0] <= spans[:, 1]).all()
    assert position_spans(model, "encoder.0.layer0.out")[:, 0].tolist() == list(range(48))
    assert position_spans(model, "encoder.out")[:3].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert position_spans(model, "decoder.layer0.out")[0, 0] == 48 - 24
    with pytest.raises(ConfigError, match="encoder.out"):
        check_site(model, "cross.0.context")


def test_splicing_in_x_itself_leaves_the_mse_exactly_unchanged(tiny_trained, tiny_prepared, tiny_sae):
    model = tiny_trained[0].model
    _, trained = tiny_sae
    result = evaluate(model, tiny_prepared, trained.sae, "decoder.layer0.out", windows=24, seed=2, batch_size=64,
                      splice_sae=False)
    assert result.metrics.spliced_delta_mse == 0.0 and np.array_equal(result.model_mse, result.spliced_mse)
    preds, truth = forecast_windows(model, tiny_prepared, "test", result.activations.windows, seed=2, batch_size=64)
    assert result.metrics.model_mse == pytest.approx(((preds - truth) ** 2).mean(), rel=1e-5)


def test_held_out_figures_are_the_formulas(tiny_trained, tiny_prepared, tiny_sae):
    model = tiny_trained[0].model
    train, trained = tiny_sae
    assert train.values.shape == (len(train.windows), 24, 16)
    result = evaluate(model, tiny_prepared, trained.sae, "encoder.out", windows=40, seed=0)
    m = result.metrics
    x = result.activations.values
    x_hat, z = trained.sae(x)
    assert m.fvu == pytest.approx(fvu(x.numpy(), x_hat.numpy()), rel=1e-9)
    assert m.l0 == pytest.approx(float((z > 0).sum(-1).float().mean()), rel=1e-9) and m.l0 <= 4
    assert m.dead_fraction == pytest.approx(float(((z > 0).reshape(-1, z.shape[-1]).sum(0) == 0).float().mean()))
    assert np.allclose(result.codes.dense(), z.numpy())
    assert np.allclose(result.codes.feature(3), z[..., 3].numpy())
    assert m.positions == 40 * 24 and m.windows == 40
    assert np.isfinite(m.spliced_delta_mse) and m.spliced_mse == pytest.approx(m.model_mse + m.spliced_delta_mse)
    assert (np.isnan(m.spliced_delta_mse_low) and m.reason) or m.spliced_delta_mse_low <= m.spliced_delta_mse
