"""Head roles: lag profiles are the attention mass by lag of the recorded rows; matching recovers a permutation of
the heads exactly; the seasonal lags come from the data's own autocorrelation; stability is a rank correlation."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.attention.stats import lag_profile
from informer_lab.analysis.heads.roles import acf_lags, head_profiles, importance_stability, match_heads, role_matrix
from informer_lab.analysis.attention.positions import site_positions
from informer_lab.analysis.attention.recording import record_forward, window_batch


@pytest.fixture(scope="module")
def model(tiny_trained):
    return tiny_trained[0].model


def permuted_heads(model, permutation: list[int]):
    """The same model with the heads of every site renumbered: head h of the copy is head permutation[h]."""
    other = copy.deepcopy(model)
    D = model.config.head_dim
    index = torch.cat([torch.arange(p * D, (p + 1) * D) for p in permutation])
    with torch.no_grad():
        for site in other.sites:
            layer = other.attention_layer(site)
            for proj in (layer.query_projection, layer.key_projection, layer.value_projection):
                proj.weight.copy_(proj.weight[index])
                proj.bias.copy_(proj.bias[index])
            layer.out_projection.weight.copy_(layer.out_projection.weight[:, index])
    return other


def test_profiles_are_the_mass_by_lag_of_the_recorded_rows(model, tiny_prepared):
    profiles = head_profiles(model, tiny_prepared, "val", max_windows=1)
    records = record_forward(model, window_batch(tiny_prepared, "val", [0]), 0, "*.rows", "*.selected")
    for site in model.sites:
        pos = site_positions(model.config, site)
        rows, selected = records[f"{site.name}.rows"][0], records[f"{site.name}.selected"][0]
        for h in range(model.config.n_heads):
            expected = lag_profile(rows[h], pos.query_start[selected[h].numpy()], pos.key_start).mass
            ours = pd.Series(profiles.mass[site.index, h], index=profiles.lags)
            np.testing.assert_allclose(ours.reindex(expected.index).to_numpy(), expected.to_numpy(), atol=1e-12)
            assert ours.drop(expected.index).abs().max() == 0.0
    assert np.allclose(profiles.mass.sum(-1), 1.0)
    assert set(profiles.table["role"]) <= {"near uniform", "previous step", "local", "long range", "other"} | {
        f"seasonal {k}" for k in profiles.seasonal_lags}


def test_matching_recovers_a_permutation_of_the_heads(model, tiny_prepared):
    permutation = [2, 0, 3, 1]
    other = permuted_heads(model, permutation)
    batch = window_batch(tiny_prepared, "val", [0, 5]).to(next(model.parameters()).device)  # (CUDA where present)
    g = lambda: torch.Generator().manual_seed(0)  # noqa: E731
    torch.testing.assert_close(model(batch, generator=g()), other(batch, generator=g()))  # the same function
    a = head_profiles(model, tiny_prepared, "val", max_windows=8)
    b = head_profiles(other, tiny_prepared, "val", max_windows=8)
    matched = match_heads(a, b)
    for row in matched.itertuples():
        assert permutation[row.head] == row.ref_head and row.distance < 1e-6
    matrix = role_matrix({"a": a, "b": b}, {"a": 0, "b": 1})
    assert matrix["in_every_seed"].all()
    assert list(matrix["heads"][:4]) == ["0;1", "1;3", "2;0", "3;2"]


def test_seasonal_lags_are_the_peaks_of_the_autocorrelation():
    t = np.arange(2000)
    rng = np.random.default_rng(0)
    series = np.sin(2 * np.pi * t / 24) + 0.5 * np.sin(2 * np.pi * t / 168) + 0.3 * rng.normal(size=len(t))
    lags = acf_lags(series, max_lag=200)
    assert lags[0] == 24 and 168 in lags
    assert acf_lags(rng.normal(size=2000), max_lag=200) == ()  # white noise: no season


def test_importance_stability_is_a_rank_correlation_with_an_interval():
    rng = np.random.default_rng(1)
    base = rng.normal(size=30)
    same = pd.DataFrame({"seed 0": base, "seed 1": base * 2 + 1, "seed 2": base ** 3})
    result = importance_stability(same, resamples=200)
    assert result["rho"] == pytest.approx(1.0) and result["rho_lo"] == pytest.approx(1.0) and result["pairs"] == 3
    noise = pd.DataFrame({f"seed {i}": rng.normal(size=30) for i in range(3)})
    result = importance_stability(noise, resamples=200)
    assert result["rho_lo"] < 0 < result["rho_hi"] and abs(result["rho"]) < 0.4


def test_importance_stability_equals_the_mean_of_scipy_spearman_over_pairs_with_ties_and_a_constant_seed():
    """The vectorised ρ is scipy.stats.spearmanr per pair of seeds, averaged (a constant seed has no ρ); a study of 50
    seeds has 1,225 pairs and its jackknife interval over the seeds holds the estimate."""
    import itertools

    from scipy.stats import spearmanr

    rng = np.random.default_rng(3)
    values = pd.DataFrame({f"seed {i}": rng.integers(0, 5, size=16).astype(float) for i in range(6)})  # ties
    values["seed 6"] = 1.0  # every value tied
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that the constant seed has no correlation
        expected = [spearmanr(values.iloc[:, i], values.iloc[:, j]).statistic
                    for i, j in itertools.combinations(range(values.shape[1]), 2)]
    assert importance_stability(values, resamples=10)["rho"] == pytest.approx(np.nanmean(expected), abs=1e-12)
    big = pd.DataFrame(rng.normal(size=(16, 50)), columns=[f"seed {i}" for i in range(50)])
    result = importance_stability(big, resamples=1000)
    assert result["pairs"] == 1225
    assert result["rho_lo"] <= result["rho"] <= result["rho_hi"]
