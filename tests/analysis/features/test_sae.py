"""The TopK SAE against its definitions: an identity-like dictionary with k = m reconstructs exactly, the FVU is the
numpy formula, decoder columns stay unit norm, the same seed gives the same dictionary, a planted sparse dictionary is
learnt (FVU near 0), and settings that cannot work are refused naming the setting."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features.sae import SAESettings, TopKSAE, fvu, train_sae


def identity_like(d: int, mean: torch.Tensor, scale: float) -> TopKSAE:
    """m = 2d latents [I; −I] with k = m: z = (ReLU(x_n), ReLU(−x_n)), x̂_n = z₊ − z₋ = x_n."""
    sae = TopKSAE(d, 2 * d, 2 * d)
    eye = torch.eye(d)
    with torch.no_grad():
        sae.W_enc.copy_(torch.cat([eye, -eye]))
        sae.W_dec.copy_(torch.cat([eye, -eye], dim=1))
        sae.mean.copy_(mean)
        sae.scale.fill_(scale)
    return sae


def test_identity_like_dictionary_with_k_equal_m_reconstructs_exactly():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 7, 6, generator=g) * 3 + 1
    sae = identity_like(6, x.reshape(-1, 6).mean(0), 2.5).requires_grad_(False)
    x_hat, z = sae(x)
    assert torch.allclose(x_hat, x, atol=1e-5)
    assert z.shape == (50, 7, 12) and (z >= 0).all()
    assert fvu(x.numpy(), x_hat.numpy()) < 1e-10


def test_topk_keeps_k_latents_and_directions_are_scaled_columns():
    sae = identity_like(4, torch.zeros(4), 2.0).requires_grad_(False)
    sae.k = 2
    x = torch.tensor([[1.0, -3.0, 0.5, 2.0]])
    values, indices = sae.encode(x)
    assert sorted(indices[0].tolist()) == [3, 5] and torch.allclose(values[0].sort().values, torch.tensor([1.0, 1.5]))
    assert torch.allclose(sae.directions, sae.W_dec * 2.0)


def test_fvu_is_the_formula():
    rng = np.random.default_rng(0)
    x, x_hat = rng.normal(size=(30, 5)), rng.normal(size=(30, 5))
    expected = ((x - x_hat) ** 2).sum() / ((x - x.mean(0)) ** 2).sum()
    assert fvu(x, x_hat) == pytest.approx(expected, rel=1e-12)
    assert fvu(x.reshape(3, 10, 5), x_hat.reshape(3, 10, 5)) == pytest.approx(expected, rel=1e-12)


def planted(n: int = 2000, d: int = 8, m: int = 16, k: int = 2, seed: int = 0):
    """x = Σ of k of m unit directions with positive sizes (a planted sparse dictionary)."""
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(d, m))
    D /= np.linalg.norm(D, axis=0)
    z = np.zeros((n, m))
    for i in range(n):
        z[i, rng.choice(m, k, replace=False)] = rng.uniform(0.5, 2.0, k)
    return (z @ D.T).astype(np.float32), D


def test_training_learns_a_planted_dictionary_and_is_reproducible():
    x, D = planted()
    settings = SAESettings(k=2, expansion=2, steps=500, batch_size=128, learning_rate=1e-2, seed=3)
    a = train_sae(x, settings)
    b = train_sae(x, settings)
    assert torch.equal(a.sae.W_dec, b.sae.W_dec) and torch.equal(a.sae.c, b.sae.c)
    norms = a.sae.W_dec.norm(dim=0)
    assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5)
    x_hat, z = a.sae(torch.from_numpy(x))
    assert fvu(x, x_hat.numpy()) < 0.1
    assert ((z > 0).sum(-1) <= 2).all()
    cosine = np.abs(D.T @ a.sae.W_dec.numpy()).max(axis=1)  # each planted direction's best match
    assert np.median(cosine) > 0.9
    c = train_sae(x, SAESettings(**{**settings.__dict__, "seed": 4}))
    assert not torch.equal(a.sae.W_dec, c.sae.W_dec)


@pytest.mark.parametrize("changes, word", [({"k": 0}, "--k"), ({"k": 100}, "--k"), ({"expansion": 0}, "--expansion"),
                                           ({"steps": 0}, "--steps"), ({"learning_rate": float("nan")}, "learning")])
def test_settings_that_cannot_work_are_refused(changes, word):
    with pytest.raises(ConfigError, match=word):
        train_sae(np.ones((10, 4), dtype=np.float32) + np.arange(4), SAESettings(**{"expansion": 2, "k": 2, **changes}))


def test_constant_or_non_finite_activations_are_refused():
    with pytest.raises(ConfigError, match="same at every position"):
        train_sae(np.ones((10, 4), dtype=np.float32), SAESettings(expansion=2, k=2, steps=2))
    bad = np.random.default_rng(0).normal(size=(10, 4)).astype(np.float32)
    bad[3, 1] = np.nan
    with pytest.raises(ConfigError, match="NaN"):
        train_sae(bad, SAESettings(expansion=2, k=2, steps=2))
