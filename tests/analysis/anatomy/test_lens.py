"""The forecast lens against the maths: the last decoder layer and the deepest encoder cut read the forecast, a cut
keeps the layers its definition names, the tuned lens is the least-squares map, and the table's figures are the
per-window means they claim to be."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.model import Informer, InformerConfig, key_generator, recording

from informer_lab.analysis.anatomy.lens import (AffineFit, _fit_error, alignment, fit_affine, fit_tuned_lens, forecast_lens,
                                   lens_pass, spread_windows, window_batches)

SEED = 3


def fresh_model(prepared, **changes) -> Informer:
    """An untrained model for the tiny data (seq 48 / label 24 / pred 12), in eval mode."""
    torch.manual_seed(0)
    c = dict(enc_in=prepared.enc_in, dec_in=prepared.dec_in, c_out=prepared.c_out, n_marks=prepared.n_marks,
             seq_len=48, label_len=24, pred_len=12, d_model=16, n_heads=4, d_ff=32, dropout=0.0)
    return Informer(InformerConfig(**{**c, **changes})).eval()


def first_batch(prepared, n=6):
    return next(window_batches(prepared, "test", range(0, 10 * n, 10)))


def test_last_decoder_layer_and_deepest_encoder_cut_are_the_forecast(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    batch, _ = first_batch(tiny_prepared)
    p = lens_pass(model, batch, SEED)
    with torch.no_grad():
        forecast = model(batch, generator=key_generator(SEED))
    assert p.decoder.shape == (1, 6, 12, 4) and p.encoder.shape == (2, 6, 12, 4) and p.encoder_tuned is None
    torch.testing.assert_close(p.forecast, forecast, atol=1e-6, rtol=0)
    torch.testing.assert_close(p.decoder[-1], forecast, atol=1e-6, rtol=0)
    torch.testing.assert_close(p.encoder[-1], forecast, atol=1e-6, rtol=0)
    assert not torch.allclose(p.encoder[0], forecast)  # one encoder layer reads differently


@pytest.mark.parametrize("changes", [dict(e_layers=(3, 2, 1), d_layers=2),
                                     dict(mix=True, mix_sites="all", cross_attention="prob", decoder_lazy="cumsum"),
                                     dict(revin=True), dict(embedding="lags", lags=(1, 24), instance_scaling="mean")])
def test_identities_hold_for_stacks_mixing_and_revin(tiny_prepared, changes):
    model = fresh_model(tiny_prepared, **changes)
    batch, _ = first_batch(tiny_prepared, 4)
    p = lens_pass(model, batch, SEED, keep_memories=True)
    with torch.no_grad():
        forecast = model(batch, generator=key_generator(SEED))
    torch.testing.assert_close(p.decoder[-1], forecast, atol=1e-6, rtol=0)
    torch.testing.assert_close(p.encoder[-1], forecast, atol=1e-6, rtol=0)
    assert len(p.decoder) == model.config.d_layers
    if changes.get("e_layers") == (3, 2, 1):  # replicas read 48, 24, 12 steps; a cut keeps min(l + 1, n_r) layers
        assert [m.shape[1] for m in p.memories] == [48 + 24 + 12, 24 + 12 + 12, 12 + 12 + 12]


def test_a_cut_is_the_first_layers_then_the_replicas_own_norm(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    batch, _ = first_batch(tiny_prepared, 3)
    p = lens_pass(model, batch, SEED, keep_memories=True)
    with recording("encoder.0.layer0.out", "encoder.out") as rec, torch.no_grad():
        model(batch, generator=key_generator(SEED))
    with torch.no_grad():
        cut = model.encoder.replicas[0].finish(rec.records["encoder.0.layer0.out"])
    torch.testing.assert_close(p.memories[0], cut, atol=1e-6, rtol=0)
    torch.testing.assert_close(p.memories[-1], rec.records["encoder.out"], atol=1e-6, rtol=0)


def test_alignment_pairs_each_position_with_the_final_span_holding_its_start(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model  # one distilling step, padding 1: position i tiles step i, final j tiles 2j, 2j + 1
    np.testing.assert_array_equal(alignment(model, 0), np.arange(48) // 2)
    np.testing.assert_array_equal(alignment(model, 1), np.arange(24))
    stack = fresh_model(tiny_prepared, e_layers=(2, 1))  # replica 1 (24 steps, one layer) maps onto itself
    np.testing.assert_array_equal(alignment(stack, 0), np.concatenate([np.arange(48) // 2, 24 + np.arange(24)]))


def test_affine_fit_is_the_closed_form_least_squares_solution():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 5)), rng.normal(size=(200, 3))
    w, b = fit_affine(x, y, ridge=0.0)
    solution = np.linalg.lstsq(np.c_[x, np.ones(len(x))], y, rcond=None)[0]
    np.testing.assert_allclose(w, solution[:-1], atol=1e-10)
    np.testing.assert_allclose(b, solution[-1], atol=1e-10)
    # with a ridge: the least-squares solution of the centred rows stacked over √λ·I (bias unpenalised)
    xc, yc = x - x.mean(0), y - y.mean(0)
    lam = 0.5 * np.trace(xc.T @ xc) / 5
    w, b = fit_affine(x, y, ridge=0.5)
    ridge = np.linalg.lstsq(np.r_[xc, np.sqrt(lam) * np.eye(5)], np.r_[yc, np.zeros((5, 3))], rcond=None)[0]
    np.testing.assert_allclose(w, ridge, atol=1e-10)
    np.testing.assert_allclose(b, y.mean(0) - x.mean(0) @ ridge, atol=1e-10)
    fit = AffineFit(5, 3)  # the error from running sums is the direct one
    fit.add(x[:120], y[:120])
    fit.add(x[120:], y[120:])
    assert _fit_error(fit, w, b) == pytest.approx(((x @ w + b - y) ** 2).mean(), rel=1e-10)


def test_tuned_lens_is_the_least_squares_map_of_its_own_training_pairs(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    tuned = fit_tuned_lens(model, tiny_prepared, windows=8, seed=SEED)
    assert tuned.weight.shape == (1, 16, 16) and tuned.windows == 8
    row = tuned.fit.iloc[0]
    assert row.pairs == 8 * 48 and row.tuned_mse < row.untuned_mse  # identity is one candidate of the fit
    indices, _, _ = spread_windows(tiny_prepared, "train", 8)
    batch, _ = next(window_batches(tiny_prepared, "train", indices))
    memories = lens_pass(model, batch, SEED, keep_memories=True).memories
    x = memories[0].double().cpu().numpy().reshape(-1, 16)
    y = memories[1].double().cpu().numpy()[:, alignment(model, 0)].reshape(-1, 16)
    # least squares without the LayerNorm's null direction (the memory's rows are centred after γ, β: along it they
    # differ by float32 rounding alone, which a default lstsq fits with a huge coefficient; the ridge leaves it out)
    solution = np.linalg.lstsq(np.c_[x, np.ones(len(x))], y, rcond=1e-5)[0]
    exact = np.c_[x, np.ones(len(x))] @ solution
    mapped = x @ tuned.weight[0] + tuned.bias[0]
    np.testing.assert_allclose(mapped, exact, atol=1e-4 * np.abs(y).max())
    assert row.tuned_mse == pytest.approx(((mapped - y) ** 2).mean(), rel=1e-6)
    assert row.untuned_mse == pytest.approx(((x - y) ** 2).mean(), rel=1e-6)


def test_forecast_lens_tables(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    r = forecast_lens(model, tiny_prepared, "test", windows=24, seed=SEED, fit_windows=8, show=5)
    assert {"lens", "layer", "step", "mse", "mse_low", "mse_high", "mse_to_final", "mse_to_final_low",
            "mse_to_final_high", "windows", "reason"} <= set(r.table.columns)
    counts = r.table.groupby(["lens", "layer"]).size()
    assert counts.to_dict() == {("decoder", 0): 12, ("encoder", 0): 12, ("encoder", 1): 12, ("encoder_tuned", 0): 12}
    assert len(r.windows) <= 24 and np.all(np.diff(r.windows) == r.stride) and r.windows[0] == 0
    final = r.table[(r.table.lens == "decoder")]
    assert (final.mse_to_final == 0).all()
    np.testing.assert_allclose(final.mse.to_numpy(), r.table[(r.table.lens == "encoder") & (r.table.layer == 1)]
                               .mse.to_numpy(), atol=1e-9)
    # the figures are per-window means: recompute the decoder lens's MSE at every step
    errors = []
    for batch, y in window_batches(tiny_prepared, "test", r.windows):
        errors.append(((lens_pass(model, batch, SEED).forecast.double().cpu() - y.double()) ** 2).mean(-1).numpy())
    np.testing.assert_allclose(final.mse.to_numpy(), np.concatenate(errors).mean(0), rtol=1e-6)
    no_interval = r.table[r.table.mse_low.isna()]
    assert (no_interval.reason.str.len() > 0).all()  # 24 windows 25 apart: too few for an interval, said why
    # one window's readings, in data units: the last decoder layer is the model's forecast there
    f = r.forecasts
    assert list(f.columns) == ["window", "lens", "layer", "step", "column", "forecast", "truth"]
    assert set(f.window) == {5} and len(f) == 4 * 12 * 4
    batch, y = next(window_batches(tiny_prepared, "test", [5]))
    with torch.no_grad():
        own = model(batch, generator=key_generator(SEED))[0].double().cpu().numpy()
    targets = list(tiny_prepared.target_columns)
    last = f[(f.lens == "decoder") & (f.layer == 0)]
    np.testing.assert_allclose(last.forecast.to_numpy(), tiny_prepared.scaler.inverse_transform(own, targets)
                               .reshape(-1), rtol=1e-5)
    np.testing.assert_allclose(last.truth.to_numpy(), tiny_prepared.scaler.inverse_transform(
        y[0].double().numpy(), targets).reshape(-1), rtol=1e-9)


def test_the_lens_wants_an_eval_model_and_windows(tiny_prepared):
    from informer_lab.analysis.errors import ConfigError

    model = fresh_model(tiny_prepared).train()
    batch, _ = first_batch(tiny_prepared, 2)
    with pytest.raises(ValueError, match="eval mode"):
        lens_pass(model, batch, SEED)
    with pytest.raises(ConfigError, match="at least one window"):
        forecast_lens(model.eval(), tiny_prepared, windows=0)
