"""A feature's profile against brute force: density and fires counted, histogram counts the firing positions, top
windows in falling order at their strongest position with the timestamps of the steps it reads, nearest features by
decoder cosine."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features import profile
from informer_lab.analysis.features.metrics import FeatureCodes
from informer_lab.analysis.features.sae import TopKSAE
from informer_lab.analysis.features.sites import SiteActivations


@pytest.fixture
def codes():
    rng = np.random.default_rng(0)
    z = np.maximum(rng.normal(size=(5, 4, 6)), 0).astype(np.float32)  # [S, L, m]
    z[..., 5] = 0  # feature 5 never fires
    indices = np.argsort(-z, axis=-1)[..., :3].astype(np.int32)
    values = np.take_along_axis(z, indices, axis=-1)
    return FeatureCodes(values, indices, 6)


def test_density_histogram_and_table_count_the_firing_positions(codes):
    dense = codes.dense()
    fires = (dense > 0).sum(axis=(0, 1))
    assert np.array_equal(codes.fires(), fires) and fires[5] == 0
    assert np.allclose(profile.densities(codes), fires / 20)
    assert profile.histogram(codes, 2)["count"].sum() == fires[2] and profile.histogram(codes, 5).empty
    sae = TopKSAE(3, 6, 3)
    with torch.no_grad():
        sae.W_dec.copy_(torch.randn(3, 6, generator=torch.Generator().manual_seed(0)))
    table = profile.features_table(sae, codes)
    assert list(table.fires) == list(fires) and table.max_activation[1] == pytest.approx(dense[..., 1].max())
    firing = dense[..., 0][dense[..., 0] > 0]
    assert table.mean_activation[0] == pytest.approx(firing.mean(), rel=1e-6)
    W = sae.W_dec.detach().numpy()
    W = W / np.linalg.norm(W, axis=0)
    near = profile.nearest(sae, 4, n=2)
    cos = W.T @ W[:, 4]
    cos[4] = -np.inf
    assert list(near.feature) == list(np.argsort(-cos)[:2]) and near.cosine[0] == pytest.approx(cos.max())
    assert table.nearest[4] == near.feature[0]
    with pytest.raises(ConfigError, match="0 … 5"):
        profile.histogram(codes, 6)


def test_top_windows_fall_and_carry_the_timestamps_of_the_steps_read(codes, tiny_prepared):
    windows = np.array([0, 3, 6, 9, 12])
    spans = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])
    acts = SiteActivations("encoder.out", "test", windows, 3, 100, torch.zeros(5, 4, 2), spans, 0)
    top = profile.top_activations(codes, acts, tiny_prepared, 1, n=3)
    z = codes.feature(1)
    assert list(top.activation) == sorted(z.max(axis=1), reverse=True)[:3]
    times = tiny_prepared.test.timestamps
    for row in top.itertuples():
        i = list(windows).index(row.window)
        assert row.position == z[i].argmax()
        assert row.first_time == times[row.window + spans[row.position, 0]]
        assert row.last_time == times[row.window + spans[row.position, 1]]
    along = profile.window_profile(codes, acts, tiny_prepared, 1, 2)
    assert np.allclose(along.activation, z[2]) and along.first_time[3] == times[6 + 6]
    assert isinstance(along.first_time[0], pd.Timestamp)
