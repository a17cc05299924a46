"""Activation patching against the maths: nothing → B, everything → A, an invisible difference → nothing restored."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.instruments.patching import activation_patching, patched_heads, restored_share
from informer_lab.analysis.instruments.window_edits import Edit, edited_batches, parse_edit
from informer_lab.model import HeadMask, recording

CLEAN, CORRUPT = 30, 400


def forecast(model, batch, seed=0, head_mask=None):
    with torch.no_grad():
        return model(batch, head_mask=head_mask, generator=torch.Generator().manual_seed(seed))


def contexts_of(model, batch, seed=0):
    with recording("*.context") as rec:
        forecast(model, batch, seed)
    return tuple(rec.records[f"{site.name}.context"] for site in model.sites)


def batches(prepared, clean=CLEAN, corrupt=CORRUPT, edit="none"):
    return edited_batches(prepared, "test", clean, Edit())[0], edited_batches(prepared, "test", corrupt,
                                                                              parse_edit(edit))[1]


def test_restored_share_is_the_projection_on_the_clean_minus_corrupt_direction():
    clean = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, -1.0]])
    corrupt = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    assert np.allclose(restored_share(clean, corrupt, corrupt)[[0, 2]], 0)
    assert np.allclose(restored_share(clean, corrupt, clean)[[0, 2]], 1)
    assert np.isnan(restored_share(clean, corrupt, clean)[1])  # A = B at step 2: nothing to restore
    half = corrupt + 0.5 * (clean - corrupt) + np.array([[2.0, -1.0], [0, 0], [0, 0]])  # off-direction part ignored
    assert np.allclose(restored_share(clean, corrupt, half)[[0, 2]], 0.5)
    one = restored_share(clean[:, :1], corrupt[:, :1], np.array([[0.25], [5.0], [2.0]]))
    assert np.allclose(one[[0, 2]], [0.25, 0.5]) and np.isnan(one[1])  # one column: the plain ratio
    pooled = restored_share(clean, corrupt, np.stack([clean, corrupt]), pooled=True)
    assert np.allclose(pooled, [1, 0])


def test_patching_nothing_gives_the_corrupted_forecast_exactly(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    clean, corrupt = batches(tiny_prepared)
    contexts = contexts_of(model, clean)
    f_B = forecast(model, corrupt)
    ones = model.full_gates(1)
    assert torch.equal(forecast(model, corrupt, head_mask=HeadMask(ones, contexts)), f_B)
    assert torch.equal(patched_heads(model, corrupt, contexts, model.full_gates(3)), f_B.repeat(3, 1, 1))


@pytest.mark.parametrize("point", ["embeddings", "memory"])
def test_patching_everything_gives_the_clean_forecast_exactly(tiny_trained, tiny_prepared, point):
    r = activation_patching(tiny_trained[0].model, tiny_prepared, "test", CLEAN, CORRUPT, seed=4, patch=point)
    assert r.labels == ((point, -1),)
    assert np.array_equal(r.patched[0], r.clean)
    valid = r.table.restored.notna()
    assert valid.sum() > 0 and np.allclose(r.table.restored[valid], 1.0, rtol=0, atol=1e-12)


def test_a_head_that_cannot_see_the_edit_restores_nothing(tiny_trained, tiny_prepared):
    """B = A with an edit before the decoder's label part: the first decoder self-attention reads only x_dec and
    the marks, so its context is the same in A and B, and patching any of its heads changes nothing."""
    model = tiny_trained[0].model
    edit = "spike:t=5,size=4"
    clean, corrupt = batches(tiny_prepared, CORRUPT, CORRUPT, edit)
    A, B = contexts_of(model, clean), contexts_of(model, corrupt)
    site = next(s for s in model.sites if s.name == "decoder_self.0")
    assert torch.equal(A[site.index], B[site.index]) and not torch.equal(A[0], B[0])
    f_B = forecast(model, corrupt)
    for h in range(model.config.n_heads):  # one at a time: exactly B
        gates = model.full_gates(1)
        gates[0, site.index, h] = 0.0
        assert torch.equal(forecast(model, corrupt, head_mask=HeadMask(gates, A)), f_B)
    r = activation_patching(model, tiny_prepared, "test", CORRUPT, corrupt_edit=edit)
    rows = r.table[r.table.site == "decoder_self.0"]
    assert len(rows) == 4 * 12 and rows.restored.notna().any()
    assert np.abs(rows.restored.dropna()).max() < 1e-4  # batched: exact up to float rounding between groups
    assert r.summary[r.summary.site == "decoder_self.0"].max_abs_effect.max() < 1e-5
    assert r.summary[r.summary.site == "encoder.0.0"].max_abs_effect.max() > 1e-3


def test_batched_patches_equal_one_patch_at_a_time(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    r = activation_patching(model, tiny_prepared, "test", CLEAN, CORRUPT, seed=7)
    assert len(r.labels) == model.n_sites * model.config.n_heads + 1 and r.labels[-1] == ("all", -1)
    clean, corrupt = batches(tiny_prepared)
    contexts = contexts_of(model, clean, seed=7)
    H = model.config.n_heads
    for k, (site, head) in enumerate(r.labels):
        gates = model.full_gates(1)
        if head >= 0:
            gates[0, k // H, head] = 0.0
        else:
            gates[:] = 0.0
        alone = forecast(model, corrupt, seed=7, head_mask=HeadMask(gates, contexts))[0].double().cpu().numpy()
        np.testing.assert_allclose(r.patched[k], alone, atol=1e-5, rtol=0)
    one_per_call = activation_patching(model, tiny_prepared, "test", CLEAN, CORRUPT, seed=7, max_rows=1)
    np.testing.assert_allclose(one_per_call.patched, r.patched, atol=1e-5, rtol=0)
    assert list(r.table.columns) == ["site", "head", "step", "restored", "gap", "clean_minus_corrupt",
                                     "patched_minus_corrupt"]
    assert len(r.table) == len(r.labels) * 12


def test_patching_every_head_at_once_does_not_give_the_clean_forecast(tiny_trained, tiny_prepared):
    r = activation_patching(tiny_trained[0].model, tiny_prepared, "test", CLEAN, CORRUPT)
    assert not r.all_heads_reach_clean and r.all_heads_distance > 0.05
    assert np.abs(r.patched[-1] - r.clean).max() > 1e-3


def test_bad_arguments_are_named(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    with pytest.raises(ConfigError, match="same window \\(3\\) with no edit"):
        activation_patching(model, tiny_prepared, "test", 3, 3)
    with pytest.raises(ConfigError, match="patch must be one of heads, embeddings, memory"):
        activation_patching(model, tiny_prepared, "test", 3, 4, patch="layers")
    with pytest.raises(ConfigError, match="window 99999 is outside"):
        activation_patching(model, tiny_prepared, "test", 3, 99999)
