"""A feature's effects against the maths, on an untrained model whose LayerNorm gains and biases are moved away from
1 and 0: the frozen-norm chain reproduces a norm exactly, the direct map of the last decoder site plus the closing
norm's β and the projection's bias is the forecast, the memory's direct map is the cross-attention's recorded context
carried through direct.py's σ, the features' effects plus the effect of what the dictionary leaves sum to the site's
own (residual and memory paths), a site behind a distilling step has no direct path, heads split the pre-activation,
and scaling a feature by 1 changes nothing while ablation agrees between the one-feature and batched runs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.anatomy.direct import decoder_pass
from informer_lab.analysis.anatomy.lens import window_batches
from informer_lab.analysis.features import effects
from informer_lab.analysis.features.residual import chain, residual_pass
from informer_lab.analysis.features.sae import SAESettings, train_sae
from informer_lab.analysis.features.sites import collect

SEED = 3


def fresh_model(prepared, **changes) -> Informer:
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


@pytest.fixture(scope="module")
def setup(tiny_prepared):
    model = fresh_model(tiny_prepared, e_layers=(2, 1))
    batch, _ = next(window_batches(tiny_prepared, "test", [0, 5, 9]))
    return model, batch, residual_pass(model, batch, SEED)


def small_sae(model, prepared, site):
    acts = collect(model, prepared, "train", site, windows=48, seed=SEED)
    return train_sae(acts.values, SAESettings(k=3, expansion=2, steps=60, batch_size=64, seed=0)).sae


def test_a_frozen_norm_chain_is_the_norm_without_its_beta(setup):
    model, _, rp = setup
    x = rp.records["encoder.0.layer1.out"]  # the closing norm's input
    norm = model.encoder.replicas[0].norm
    ch = chain(rp, ["encoder.0.final"], 16, tuple(x.shape[:2]))
    assert torch.allclose(ch.apply(x) + norm.bias.double(), rp.records["encoder.0.out"].double(), atol=1e-5)


def test_the_last_decoder_site_maps_to_the_forecast_up_to_its_biases(setup):
    model, batch, rp = setup
    m = effects.direct_map(model, rp, "decoder.layer0.out")
    direct = effects.effect_of(m, rp.records["decoder.layer0.out"])  # [B, P, C]
    W, b = model.projection.weight.double(), model.projection.bias.double()
    offset = W @ model.decoder.norm.bias.double() + b
    assert torch.allclose(direct + offset, rp.forecast.double(), atol=1e-5)


def test_the_memory_map_is_the_cross_context_carried_through_the_frozen_norms(setup):
    model, batch, rp = setup
    P, H, D = 12, 4, 4
    att = model.decoder.layers[0].cross_attention
    context = rp.records["cross.0.context"][:, -P:].double()  # [B, P, H, D] = Σ_j A (W_V m_j + b_V)
    carried = (context - att.value_projection.bias.double().view(H, D)).reshape(*context.shape[:2], -1)
    write = carried @ att.out_projection.weight.double().T  # [B, P, d] without b_O
    sigmas = decoder_pass(model, batch, SEED).sigmas
    for name, norm in (("layer0.norm2", model.decoder.layers[0].norm2), ("layer0.norm3", model.decoder.layers[0].norm3),
                       ("final", model.decoder.norm)):
        write = norm.weight.double() * (write - write.mean(-1, keepdim=True)) / sigmas[name][..., None]
    expected = write @ model.projection.weight.double().T
    m = effects.direct_map(model, rp, "encoder.out")
    assert torch.allclose(effects.effect_of(m, rp.records["encoder.out"]), expected, atol=1e-6)
    # replica 1's output reaches the memory at its own slice only
    r1 = effects.direct_map(model, rp, "encoder.1.out")
    v = torch.zeros_like(rp.records["encoder.out"])
    v[:, -rp.records["encoder.1.out"].shape[1]:] = rp.records["encoder.1.out"]
    assert torch.allclose(effects.effect_of(r1, rp.records["encoder.1.out"]), effects.effect_of(m, v), atol=1e-9)


@pytest.mark.parametrize("site", ["decoder.layer0.out", "encoder.out", "encoder.0.distil0.out"])
def test_features_plus_what_the_dictionary_leaves_sum_to_the_site(setup, tiny_prepared, site):
    model, _, rp = setup
    sae = small_sae(model, tiny_prepared, site)
    m = effects.direct_map(model, rp, site)
    x = rp.records[site].float()
    z = sae.codes(x)
    features = effects.feature_effects(m, z, sae.directions)  # [B, P, C, M]
    left = x.double() - z.double() @ sae.directions.double().T  # the bias, the mean and the error
    total = effects.effect_of(m, x)
    assert torch.allclose(features.sum(-1) + effects.effect_of(m, left), total, atol=1e-8)
    f = int(z.reshape(-1, z.shape[-1]).sum(0).argmax())
    one = effects.effect_of(m, z[..., f:f + 1].double() * sae.directions[:, f].double())
    assert torch.allclose(features[..., f], one, atol=1e-10)


def test_a_site_behind_a_distilling_step_has_no_direct_path_and_heads_split_the_pre_activation(setup, tiny_prepared):
    model, _, rp = setup
    assert effects.direct_map(model, rp, "encoder.0.layer0.out").reason == effects.NO_PATH
    sae = small_sae(model, tiny_prepared, "encoder.0.layer0.out")
    labels, parts, pre = effects.head_parts(model, rp, sae, "encoder.0.layer0.out", 1)
    assert labels == tuple(f"encoder.0.0:{h}" for h in range(4)) and parts.shape == (4, 3, 48)
    assert effects.head_parts(model, rp, small_sae(model, tiny_prepared, "encoder.0.distil0.out"),
                              "encoder.0.distil0.out", 1)[0] == ()  # distilling has no heads before it in its segment
    sae_mem = small_sae(model, tiny_prepared, "encoder.out")
    labels, parts, pre = effects.head_parts(model, rp, sae_mem, "encoder.out", 2)
    assert labels == tuple(f"encoder.0.1:{h}" for h in range(4)) + tuple(f"encoder.1.0:{h}" for h in range(4))
    L0 = rp.records["encoder.0.out"].shape[1]
    assert (parts[:4, :, L0:] == 0).all() and (parts[4:, :, :L0] == 0).all()


def test_scaling_by_one_changes_nothing_and_ablation_agrees_between_runs(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    sae = small_sae(model, tiny_prepared, "encoder.out")
    same = effects.intervene(model, tiny_prepared, sae, "encoder.out", 0, scale=1.0, windows=8, seed=SEED)
    assert same.rms == 0.0 and same.delta_mse == 0.0 and (same.table.delta == 0).all()
    batched = effects.ablation_effects(model, tiny_prepared, sae, "encoder.out", windows=8, seed=SEED, max_rows=24)
    for f in (0, 5):
        alone = effects.intervene(model, tiny_prepared, sae, "encoder.out", f, scale=0.0, windows=8, seed=SEED)
        assert batched.ablation_rms[f] == pytest.approx(alone.rms, rel=1e-3, abs=1e-6)
        assert batched.ablation_delta_mse[f] == pytest.approx(alone.delta_mse, rel=1e-3, abs=1e-7)
    heads = effects.feature_heads(model, tiny_prepared, sae, "encoder.out", int(batched.ablation_rms.argmax()),
                                  windows=8, seed=SEED)
    assert heads["head"].iloc[-1] == "remainder" or heads.empty
