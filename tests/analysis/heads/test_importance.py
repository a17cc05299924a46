"""Gradient head importance: it is |∂L/∂gate| (autograd per window, finite differences), exactly 0 for a head
whose output weights are zero, normalised per site; integrated gradients are complete; Spearman by ranks."""
import copy
import math

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.intervals import overlap_span, window_means
from informer_lab.analysis.learning.windows import limit_windows, split_batches
from informer_lab.analysis.heads.importance import head_importance, rank_correlation, window_losses


@pytest.fixture(scope="module")
def model(tiny_trained):
    return tiny_trained[0].model


def importance_matrix(result, n_sites, H):
    return result.table["importance"].to_numpy().reshape(n_sites, H)


def test_saliency_equals_a_manual_autograd_average_over_windows(model, tiny_prepared):
    seed, n_sites, H = 3, model.n_sites, 4
    grads_before = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    six = limit_windows(tiny_prepared, "test", 6)
    result = head_importance(model, six, "test", seed=seed, batch_size=4)  # 2 window batches: 4 + 2
    assert result.windows == 6 and result.method == "saliency" and result.convergence_delta is None
    generator = torch.Generator().manual_seed(seed)  # the predict() scheme: one generator runs on per batch
    total = torch.zeros(n_sites, H, dtype=torch.float64)
    per_window = []
    for batch, y in split_batches(six, "test", 4):
        state = generator.get_state()
        for b in range(y.shape[0]):  # one window at a time, each with the key samples of its batch
            generator.set_state(state)
            gates = torch.ones(1, n_sites, H, requires_grad=True)
            loss = window_losses(model, batch.slice(b, b + 1), y[b:b + 1], gates, generator=generator)[0]
            (grad,) = torch.autograd.grad(loss, gates)
            total += grad[0].abs().double()
            per_window.append(grad[0].abs().double().reshape(-1).numpy())
    np.testing.assert_allclose(importance_matrix(result, n_sites, H), (total / 6).numpy(), rtol=1e-4, atol=1e-7)
    # the interval: that of the per-window magnitudes (analysis.intervals; 6 windows that all share rows: none)
    means = window_means(np.stack(per_window), span=overlap_span(six.spec.seq_len, six.spec.pred_len))
    np.testing.assert_allclose(result.table["importance_lo"], means.lo, rtol=1e-4, atol=1e-7)
    assert result.table["importance_lo"].isna().all() and result.table["interval"].str.contains("no interval").all()
    for p, before in zip(model.parameters(), grads_before):  # no parameter gradient was written
        assert (p.grad is None and before is None) or torch.equal(p.grad, before)


def test_saliency_matches_central_finite_differences_in_float64(model, tiny_prepared):
    double = copy.deepcopy(model).double().cpu()  # (the fixture trains on CUDA where there is one)
    one = limit_windows(tiny_prepared, "test", 1)
    result = head_importance(double, one, "test", seed=0)
    batch, y = next(iter(split_batches(one, "test", 1)))
    batch = type(batch)(*(t.double() for t in (batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec)))
    y = y.double()
    # not smaller: top-u ties between numerically equal rows (a causal query 0 is its own running mean) flip
    # under tiny perturbations and add jumps of ~1e-8 to the loss
    eps = 1e-3

    def loss(gates):
        with torch.no_grad():
            return float(window_losses(double, batch, y, gates[None], generator=torch.Generator().manual_seed(0))[0])

    fd = np.zeros((double.n_sites, 4))
    for s in range(double.n_sites):
        for h in range(4):
            up, down = torch.ones(double.n_sites, 4, dtype=torch.float64), torch.ones(double.n_sites, 4,
                                                                                         dtype=torch.float64)
            up[s, h], down[s, h] = 1 + eps, 1 - eps
            fd[s, h] = abs(loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(importance_matrix(result, double.n_sites, 4), fd, rtol=2e-3, atol=2e-5)
    assert fd.max() > 1e-3


def test_a_head_with_zero_output_weights_has_exactly_zero_importance(model, tiny_prepared):
    before = model.attention_layer(model.sites[1]).out_projection.weight.clone()
    edited = copy.deepcopy(model)
    D = edited.config.head_dim
    silenced = [(1, 2), (3, 0), (2, 3)]
    with torch.no_grad():
        for s, h in silenced:
            edited.attention_layer(edited.sites[s]).out_projection.weight[:, h * D:(h + 1) * D] = 0.0
    table = head_importance(edited, limit_windows(tiny_prepared, "test", 16), "test").table
    for s, h in silenced:
        row = table[(table.site_index == s) & (table["head"] == h)].iloc[0]
        assert row.importance == 0.0 and row.importance_normalised == 0.0
    others = table[~table.apply(lambda r: (r.site_index, r["head"]) in silenced, axis=1)]
    assert (others.importance > 0).all()
    assert torch.equal(model.attention_layer(model.sites[1]).out_projection.weight, before)  # fixture untouched


def test_importance_is_normalised_per_site_by_its_l2_norm(model, tiny_prepared):
    table = head_importance(model, limit_windows(tiny_prepared, "val", 16), "val").table
    assert list(table.columns[:6]) == ["site", "site_index", "kind", "replica", "layer", "head"]
    assert len(table) == model.n_sites * 4 and (table.importance >= 0).all()
    norms = table.groupby("site_index")["importance_normalised"].apply(lambda v: float(np.sqrt((v ** 2).sum())))
    np.testing.assert_allclose(norms.to_numpy(), 1.0, rtol=1e-9)
    raw = table.groupby("site_index")["importance"].apply(lambda v: float(np.sqrt((v ** 2).sum())))
    first = table[table.site_index == 0]
    np.testing.assert_allclose(first.importance_normalised, first.importance / raw[0], rtol=1e-9)


def test_integrated_gradients_are_complete_on_a_full_attention_copy(model, tiny_prepared):
    """Without ProbSparse's top-u switches the loss is smooth in the gates: attributions sum to L(1) − L(0)."""
    full = copy.deepcopy(model)
    for site in full.sites:
        full.attention_layer(site).kind = "full"
    two = limit_windows(tiny_prepared, "test", 2)
    result = head_importance(full, two, "test", method="integrated_gradients", n_steps=24)
    batch, y = next(iter(split_batches(two, "test", 2)))
    with torch.no_grad():
        on = window_losses(full, batch, y, torch.ones(2, full.n_sites, 4))
        off = window_losses(full, batch, y, torch.zeros(2, full.n_sites, 4))
    gap = float((on - off).abs().mean())
    assert gap > 1e-2 and result.convergence_delta < 1e-3 * gap
    probsparse = head_importance(model, two, "test", method="integrated_gradients", n_steps=4)
    assert math.isfinite(probsparse.convergence_delta) and (probsparse.table.importance >= 0).all()


def test_rank_correlation_is_spearman_from_pandas_ranks():
    heads = [("encoder.0.0", h) for h in range(5)]
    imp = pd.DataFrame([{"site": s, "head": h, "importance": v} for (s, h), v in zip(heads, [1, 2, 3, 4, 5])])
    sweep = pd.DataFrame([{"site": "baseline", "head": -1, "delta_mse": 0.0}] +
                         [{"site": s, "head": h, "delta_mse": v} for (s, h), v in zip(heads, [10, 30, 20, 50, 40])])
    # no ties: ρ = 1 − 6 Σd² / (n(n² − 1)), d = rank differences (0, 1, 1, 1, 1)
    assert rank_correlation(imp, sweep) == pytest.approx(1 - 6 * 4 / (5 * 24))
    sweep_reversed = sweep.assign(delta_mse=[0.0, 5, 4, 3, 2, 1])
    assert rank_correlation(imp, sweep_reversed) == pytest.approx(-1.0)
    tied = sweep.assign(delta_mse=[0.0, 1, 1, 2, 3, 3])  # ties share the average rank: 1.5 1.5 3 4.5 4.5
    a, b = np.arange(1, 6.0), np.array([1.5, 1.5, 3, 4.5, 4.5])
    assert rank_correlation(imp, tied) == pytest.approx(np.corrcoef(a, b)[0, 1])
    assert math.isnan(rank_correlation(imp, sweep.assign(delta_mse=0.0)))


def test_the_null_reference_is_the_same_gradient_against_the_errors_of_windows_half_the_split_away(model,
                                                                                                  tiny_prepared):
    """importance_null by hand: window w's loss against targets f_w − e_{w+n/2} (its forecast held fixed, the error of
    the window half the split later), differentiated by autograd one window at a time under its batch's key samples;
    then the excess's one-sided p-values through Benjamini–Hochberg."""
    from scipy.stats import false_discovery_control

    from informer_lab.model import HeadMask

    seed, n_sites, H = 2, model.n_sites, 4
    eight = limit_windows(tiny_prepared, "test", 8)
    result = head_importance(model, eight, "test", seed=seed, batch_size=4)
    generator = torch.Generator().manual_seed(seed)
    forecasts, truths, states = [], [], []
    with torch.no_grad():
        for batch, y in split_batches(eight, "test", 4):
            states.append(generator.get_state())
            forecasts.append(model(batch, head_mask=HeadMask(torch.ones(y.shape[0], n_sites, H)), generator=generator)
                             .cpu())
            truths.append(y)
    f, y = torch.cat(forecasts), torch.cat(truths)
    shifted = torch.roll(f - y, -4, dims=0)  # window w gets the error of window w + 4 (n / 2)
    null = []
    for k, (batch, _) in enumerate(split_batches(eight, "test", 4)):
        for b in range(4):
            generator.set_state(states[k])
            w = 4 * k + b
            gates = torch.ones(1, n_sites, H, requires_grad=True)
            target = (f[w] - shifted[w])[None]
            loss = window_losses(model, batch.slice(b, b + 1), target, gates, generator=generator)[0]
            (grad,) = torch.autograd.grad(loss, gates)
            null.append(grad[0].abs().double().reshape(-1).numpy())
    np.testing.assert_allclose(result.table["importance_null"], np.mean(null, axis=0), rtol=1e-4, atol=1e-7)
    excess = result.table["importance"] - result.table["importance_null"]
    np.testing.assert_allclose(result.table["excess"], excess, rtol=1e-9, atol=1e-12)
    p = result.table["excess_p"].to_numpy()
    if np.isfinite(p).all():
        np.testing.assert_allclose(result.table["excess_p_bh"], false_discovery_control(p), rtol=1e-12)
    assert not result.table["above_null"][~np.isfinite(p)].any()  # no interval: in no list


def test_a_head_whose_output_is_zero_is_at_its_null_reference_and_not_listed(model, tiny_prepared):
    edited = copy.deepcopy(model)
    site = edited.sites[0]
    D = edited.config.d_model // edited.config.n_heads
    with torch.no_grad():
        edited.attention_layer(site).out_projection.weight[:, :D] = 0  # head 0 of the first site writes nothing
    table = head_importance(edited, limit_windows(tiny_prepared, "test", 900), "test").table
    row = table[(table["site"] == site.name) & (table["head"] == 0)].iloc[0]
    assert row["importance"] == 0 and row["importance_null"] == 0 and not row["above_null"]
