"""The query/key map: AttentionViz normalisation (softmax-invariant), joint PCA, recording in batches."""
import copy
import math

import numpy as np
import pytest
import torch

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.instruments.qk_map import Normalisation, attentionviz_normalisation, collect_qk, joint_pca, qk_map, qk_map_table


def tied_model(model, site_name):
    """A copy of `model` whose site has W_K = W_Q and b_K = b_Q, so that every key equals its query."""
    tied = copy.deepcopy(model).eval()
    layer = tied.attention_layer(next(s for s in tied.sites if s.name == site_name))
    with torch.no_grad():
        layer.key_projection.weight.copy_(layer.query_projection.weight)
        layer.key_projection.bias.copy_(layer.query_projection.bias)
    return tied


@pytest.mark.parametrize("site", ["encoder.0.1", "decoder_self.0"])
def test_equal_query_and_key_projections_put_each_query_exactly_on_its_key(tiny_trained, tiny_prepared, site):
    model = tied_model(tiny_trained[0].model, site)
    m = qk_map(model, tiny_prepared, "test", site, 2, windows=256)
    assert len(m.windows) == 256
    n = int(m.is_query.sum())
    assert n == m.n_points // 2 and n == 256 * len(np.unique(m.position[m.is_query]))
    assert m.normalisation.scale == 1.0 and not m.normalisation.translation.any()
    distance = np.linalg.norm(m.xy[:n] - m.xy[n:], axis=1)  # query i of window w against key i of window w
    assert (distance == 0).all()
    assert (m.window[:n] == m.window[n:]).all() and (m.position[:n] == m.position[n:]).all()
    # the untied model's queries do not sit on their keys
    plain = qk_map(tiny_trained[0].model, tiny_prepared, "test", site, 2, windows=16)
    k = int(plain.is_query.sum())
    assert np.linalg.norm(plain.xy[:k] - plain.xy[k:], axis=1).min() > 0


def test_scaling_keeps_every_dot_product():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(50, 8, generator=g, dtype=torch.float64), torch.randn(70, 8, generator=g, dtype=torch.float64)
    q2, k2 = Normalisation(3.7, np.zeros(8)).apply(q, k)
    torch.testing.assert_close(q2 @ k2.T, q @ k.T, rtol=1e-13, atol=1e-13)
    assert not torch.allclose(q2, q)


def softmax_rows(q, k):
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)


def test_key_translation_keeps_every_softmax_row_and_a_query_translation_does_not(tiny_trained, tiny_prepared):
    points = collect_qk(tiny_trained[0].model, tiny_prepared, "test", "encoder.0.0", 1, windows=32)
    q_all, k_all = points.queries.reshape(-1, points.queries.shape[-1]), points.keys.reshape(-1, points.keys.shape[-1])
    norm = attentionviz_normalisation(q_all, k_all)
    assert norm.scale != 1.0 and np.abs(norm.translation).max() > 1e-3
    t = torch.as_tensor(norm.translation)
    for w in range(len(points.windows)):  # softmax rows are over one window's keys
        q, k = points.queries[w].double(), points.keys[w].double()
        before = softmax_rows(q, k)
        torch.testing.assert_close(softmax_rows(q, k + t), before, rtol=0, atol=1e-12)
        q2, k2 = norm.apply(q, k)  # scale and translate: still every row
        torch.testing.assert_close(softmax_rows(q2, k2), before, rtol=0, atol=1e-12)
        logits, logits2 = q @ k.T, q2 @ k2.T  # ProbSparse's max − mean is unchanged too
        torch.testing.assert_close(logits2.amax(1) - logits2.mean(1), logits.amax(1) - logits.mean(1), atol=1e-9,
                                   rtol=0)
        assert (softmax_rows(q + t, k) - before).abs().max() > 1e-3  # translating the queries changes the rows
    # after normalising, the centroids coincide and the mean distances from it are equal
    q2, k2 = norm.apply(q_all.double(), k_all.double())
    torch.testing.assert_close(q2.mean(0), k2.mean(0), atol=1e-9, rtol=0)
    centre = q2.mean(0)
    assert math.isclose(float((q2 - centre).norm(dim=1).mean()), float((k2 - centre).norm(dim=1).mean()),
                        rel_tol=1e-9)


def test_batched_recording_equals_one_window_at_a_time(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    windows = [0, 7, 100, 333, 901]
    batched = collect_qk(model, tiny_prepared, "test", "encoder.0.0", 3, windows=windows, batch_size=64)
    single = collect_qk(model, tiny_prepared, "test", "encoder.0.0", 3, windows=windows, batch_size=1)
    torch.testing.assert_close(batched.queries, single.queries, atol=1e-6, rtol=0)
    torch.testing.assert_close(batched.keys, single.keys, atol=1e-6, rtol=0)
    np.testing.assert_allclose(batched.mbar, single.mbar, atol=1e-5)
    assert (batched.selected == single.selected).all()
    a = qk_map(model, tiny_prepared, "test", "encoder.0.0", 3, windows=windows, batch_size=64)
    b = qk_map(model, tiny_prepared, "test", "encoder.0.0", 3, windows=windows, batch_size=2)
    np.testing.assert_allclose(a.xy, b.xy, atol=1e-5)


def test_table_has_every_point_with_its_window_step_timestamp_selection_and_mbar(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    m = qk_map(model, tiny_prepared, "test", "encoder.0.1", 0, windows=20)
    table = qk_map_table(m)
    assert list(table.columns) == ["kind", "x", "y", "window", "position", "step", "timestamp", "selected", "mbar"]
    assert len(table) == 20 * (24 + 24)
    queries, keys = table[table.kind == "query"], table[table.kind == "key"]
    assert (queries.step == 2 * queries.position).all()  # one distilling step: position i starts at input step 2i
    stamps = tiny_prepared.test.timestamps
    assert (table.timestamp.to_numpy() == np.asarray(stamps[table.window + table.step])).all()
    u = 5 * math.ceil(math.log(24))  # factor 5: u = min(24, 20)
    assert (queries.groupby("window").selected.sum() == min(24, u)).all()
    assert not keys.selected.any() and keys.mbar.isna().all() and queries.mbar.notna().all()
    assert 0 < m.explained[1] <= m.explained[0] <= 1
    cross = qk_map_table(qk_map(model, tiny_prepared, "test", "cross.0", 0, windows=4))
    cq = cross[cross.kind == "query"]
    assert cq.selected.all() and cq.mbar.isna().all()  # full attention: every query has a row, nothing sampled
    assert (cq.step.min(), cq.step.max()) == (48 - 24, 48 + 12 - 1)  # the decoder's label and future steps


def test_joint_pca_finds_a_line_and_signs_its_axis():
    t = torch.linspace(-1, 1, 101, dtype=torch.float64)[:, None]
    points = torch.cat([t * 3, -t * 4, torch.zeros_like(t)], dim=1)  # a line along (3, −4, 0)
    xy, components, explained = joint_pca(points)
    np.testing.assert_allclose(explained, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(components[0], [-0.6, 0.8, 0.0], atol=1e-12)  # largest loading positive
    np.testing.assert_allclose(np.abs(xy[:, 0]), 5 * np.abs(t[:, 0].numpy()), atol=1e-12)


def test_bad_site_head_and_windows_are_named(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    with pytest.raises(ConfigError, match="no attention site 'encoder.9'.*encoder.0.0"):
        qk_map(model, tiny_prepared, "test", "encoder.9", 0)
    with pytest.raises(ConfigError, match="head must be in 0 … 3, got 4"):
        qk_map(model, tiny_prepared, "test", "encoder.0.0", 4)
    with pytest.raises(ConfigError, match="window 99999 is outside"):
        qk_map(model, tiny_prepared, "test", "encoder.0.0", 0, windows=[0, 99999])
