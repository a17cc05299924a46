"""Direct shares against the maths: the manual decoder pass is the model's, heads + remainder = forecast, a gated
head's share is 0, each write is the head's slice of the output projection (mix included), and a share equals the
explicit product of the frozen LayerNorm matrices."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.model import HeadMask, Informer, InformerConfig, key_generator, recording

from informer_lab.analysis.anatomy.direct import (FORECAST, REMAINDER, decoder_pass, direct_shares, rescale_factor, share_summary,
                                     top_heads)
from informer_lab.analysis.anatomy.lens import window_batches

SEED = 5


def fresh_model(prepared, **changes) -> Informer:
    """An untrained model for the tiny data, eval mode, with LayerNorm gains and biases away from 1 and 0."""
    torch.manual_seed(1)
    c = dict(enc_in=prepared.enc_in, dec_in=prepared.dec_in, c_out=prepared.c_out, n_marks=prepared.n_marks,
             seq_len=48, label_len=24, pred_len=12, d_model=16, n_heads=4, d_ff=32, dropout=0.0)
    model = Informer(InformerConfig(**{**c, **changes})).eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.3, 0.3)
    return model


def batch_of(prepared, n=4):
    return next(window_batches(prepared, "test", range(0, 7 * n, 7)))[0]


def gates_off(model, *heads) -> HeadMask:
    gates = model.full_gates(1)
    for name, h in heads:
        gates[0, next(s.index for s in model.sites if s.name == name), h] = 0
    return HeadMask(gates)


def check_writes(model: Informer, p) -> None:
    """Σ_h write_h + bias = the site's output; each write = project(that head alone) − bias (brute force)."""
    for site in model.sites:
        if site.kind == "encoder":
            continue
        att = model.attention_layer(site)
        torch.testing.assert_close(p.writes[site.name].sum(0) + att.out_projection.bias, p.attended[site.name],
                                   atol=1e-5, rtol=0)


@pytest.mark.parametrize("changes", [dict(d_layers=2), dict(mix=True, mix_sites="all", cross_attention="prob"),
                                     dict(revin=True), dict(final_norm=False),
                                     dict(embedding="lags", lags=(1, 2, 24), instance_scaling="std")])
def test_manual_pass_is_the_model_under_a_head_mask(tiny_prepared, changes):
    model = fresh_model(tiny_prepared, **changes)
    if model.revin is not None:
        with torch.no_grad():
            model.revin.weight.uniform_(0.5, 1.5)
            model.revin.bias.uniform_(-0.3, 0.3)
    batch = batch_of(tiny_prepared)
    mask = gates_off(model, ("cross.0", 2), ("decoder_self.0", 1), ("encoder.0.0", 3))
    p = decoder_pass(model, batch, SEED, mask)
    with torch.no_grad():
        forecast = model(batch, head_mask=mask, generator=key_generator(SEED))
    torch.testing.assert_close(p.forecast, forecast, atol=1e-6, rtol=0)
    assert (p.shares["cross.0"][2] == 0).all() and (p.shares["decoder_self.0"][1] == 0).all()
    check_writes(model, p)
    with torch.no_grad():  # the rescale's linear factor: rescale(y) − rescale(0) = factor·y
        _, statistics = model.normalise(batch)
        y = torch.randn_like(forecast)
        linear = model.rescale(y, batch, statistics) - model.rescale(torch.zeros_like(y), batch, statistics)
    torch.testing.assert_close(linear, rescale_factor(model, batch, statistics) * y, atol=1e-5, rtol=1e-5)


def test_mix_writes_are_each_heads_alone_through_the_projection(tiny_prepared):
    model = fresh_model(tiny_prepared, mix=True, mix_sites="all")
    batch = batch_of(tiny_prepared, 2)
    with recording("decoder_self.0.context") as rec:
        p = decoder_pass(model, batch, SEED)
    att, context = model.attention_layer(model.sites[-2]), rec.records["decoder_self.0.context"]
    for h in range(4):
        alone = torch.zeros_like(context)
        alone[:, :, h] = context[:, :, h]
        with torch.no_grad():
            write = att.project(alone)[:, -12:] - att.out_projection.bias
        torch.testing.assert_close(p.writes["decoder_self.0"][h], write, atol=1e-6, rtol=0)


def _norm_path(kind: str, layer: int, layers: int) -> list[str]:
    """The decoder LayerNorms a write of site (kind, layer) passes on its way to the projection, in order."""
    path = ([f"layers.{layer}.norm1"] if kind == "decoder_self" else []) + [f"layers.{layer}.norm2",
                                                                           f"layers.{layer}.norm3"]
    for later in range(layer + 1, layers):
        path += [f"layers.{later}.norm1", f"layers.{later}.norm2", f"layers.{later}.norm3"]
    return path + ["norm"]


def test_every_heads_share_is_the_product_of_the_frozen_layernorm_matrices(tiny_prepared):
    """Two decoder layers, every head of every decoder site: the share is W_proj · Π diag(γ)(I − 11ᵀ/d)/σ · W_O[h] ·
    context[h], each norm on the write's path with its own σ from its input in the model's forward pass (cross.0's
    heads pass norm2 and norm3 of layer 0, the three norms of layer 1 and the closing norm; decoder_self.0's heads
    norm1 of layer 0 too), times the rescale factor. A σ left out for any one head fails it."""
    model = fresh_model(tiny_prepared, d_layers=2, revin=True)
    batch = batch_of(tiny_prepared, 2)
    inputs = {}
    handles = [module.register_forward_pre_hook(lambda m, a, name=name: inputs.__setitem__(name, a[0].detach()))
               for name, module in model.decoder.named_modules() if isinstance(module, torch.nn.LayerNorm)]
    sites = [site for site in model.sites if site.kind != "encoder"]
    try:
        with recording(*(f"{site.name}.context" for site in sites)) as rec, torch.no_grad():
            model(batch, generator=key_generator(SEED))
    finally:
        for handle in handles:
            handle.remove()
    p = decoder_pass(model, batch, SEED)
    d, D = 16, 4
    with torch.no_grad():
        _, statistics = model.normalise(batch)
        factor = rescale_factor(model, batch, statistics).double()
    centre = torch.eye(d, dtype=torch.float64) - 1.0 / d
    checked = 0
    for site in sites:
        att = model.attention_layer(site)
        for h in range(model.config.n_heads):
            W_O = att.out_projection.weight.double()[:, h * D:(h + 1) * D]  # [d, D]
            for b in range(2):
                for t in (0, 7, 11):
                    q = 24 + t  # the decoder row of forecast step t
                    M = torch.eye(d, dtype=torch.float64)
                    for name in _norm_path(site.kind, site.layer, 2):
                        norm, z = model.decoder.get_submodule(name), inputs[name].double()
                        row = z[b, z.shape[1] - (36 - q)]  # the model may keep only the last rows late on
                        sigma = torch.sqrt(row.var(unbiased=False) + norm.eps)
                        M = torch.diag(norm.weight.double()) @ centre / sigma @ M
                    share = factor[b, 0] * (model.projection.weight.double() @ M @ W_O
                                            @ rec.records[f"{site.name}.context"][b, q, h].double())
                    torch.testing.assert_close(p.shares[site.name][h][b, t], share, atol=1e-6, rtol=1e-5)
                    checked += 1
    assert checked == 4 * 4 * 2 * 3  # four decoder sites × four heads × two windows × three steps


def test_parts_sum_to_the_forecast_in_data_units_and_gated_heads_are_zero(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    mask = gates_off(model, ("cross.0", 2))
    shares = direct_shares(model, tiny_prepared, "test", windows=16, seed=SEED, head_mask=mask)
    table = shares.table
    assert list(table.columns) == ["window", "step", "column", "part", "value"]
    assert set(table.part) == {*(f"{s}.0:{h}" for s in ("decoder_self", "cross") for h in range(4)), REMAINDER,
                               FORECAST}
    assert shares.gated == ("cross.0:2",) and (table[table.part == "cross.0:2"].value == 0).all()
    wide = table.pivot_table(index=["window", "step", "column"], columns="part", values="value")
    parts = wide.drop(columns=FORECAST).sum(axis=1)
    np.testing.assert_allclose(parts, wide[FORECAST], rtol=1e-9, atol=1e-5 * wide[FORECAST].abs().max())
    # the forecast part is the model's forecast under the mask, in data units
    batch, _ = next(window_batches(tiny_prepared, "test", shares.windows[:3]))
    with torch.no_grad():
        own = model(batch, head_mask=mask, generator=key_generator(SEED)).double().cpu().numpy()
    targets = list(tiny_prepared.target_columns)
    expected = tiny_prepared.scaler.inverse_transform(own, targets)  # [3, 12, 4]
    got = wide[FORECAST].unstack("column")[targets].to_numpy().reshape(-1, 12, 4)[:3]  # pivot sorts the names
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # heads carry real shares, not only the remainder
    assert table[table.part == "cross.0:1"].value.abs().max() > 1e-3

    summary = share_summary(shares)
    assert {"part", "site", "head", "column", "step", "mean_abs", "mean_abs_low", "mean_abs_high", "windows",
            "reason"} <= set(summary.columns)
    assert len(summary) == 8 * 12 * 4 and (summary[summary.part == "cross.0:2"].mean_abs == 0).all()
    top = top_heads(shares, k=2)
    assert len(top) == 2 * 4 and set(top["rank"]) == {1, 2} and "cross.0:2" not in set(top.part)
