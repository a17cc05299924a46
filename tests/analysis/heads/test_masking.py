"""Head masks built from (site, head) pairs: zero silences, mean ablation with its own window is a no-op."""
import numpy as np
import pytest
import torch

from analysis.heads.masking import gates_with_heads_off, head_mask, masked_window_forecast, mean_contexts, site_labels


def test_gates_switch_off_exactly_the_named_heads(tiny_trained):
    model = tiny_trained[0].model
    gates = gates_with_heads_off(model, [(0, 1), (2, 3)], batch_size=2)
    assert gates.shape == (2, model.n_sites, 4)
    assert gates.sum() == 2 * (model.n_sites * 4 - 2)
    assert gates[:, 0, 1].eq(0).all() and gates[:, 2, 3].eq(0).all()
    assert site_labels(model) == ["encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"]
    with pytest.raises(ValueError, match="no head 9"):
        gates_with_heads_off(model, [(0, 9)])
    assert head_mask(model, []) is None


def test_mean_ablation_with_the_window_itself_as_reference_changes_nothing(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    means = mean_contexts(model, tiny_prepared, "test", max_windows=1)  # window 0 alone
    every_head = [(s, h) for s in range(model.n_sites) for h in range(4)]
    mask = head_mask(model, every_head, "mean", means)
    result = masked_window_forecast(model, tiny_prepared, "test", 0, mask).table
    np.testing.assert_allclose(result["masked"], result["baseline"], rtol=0, atol=1e-4)
    zero = masked_window_forecast(model, tiny_prepared, "test", 0, head_mask(model, every_head, "zero")).table
    assert np.abs(zero["masked"] - zero["baseline"]).max() > 1e-2


def test_mean_contexts_are_averages_of_recorded_contexts(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    means = mean_contexts(model, tiny_prepared, "test", max_windows=4)
    assert [tuple(m.shape) for m in means][:2] == [(48, 4, 4), (24, 4, 4)]
    one = mean_contexts(model, tiny_prepared, "test", max_windows=1)
    assert not torch.allclose(means[0], one[0])


def test_window_forecast_table_is_in_original_units_and_errors_add_up(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    mask = head_mask(model, [(0, 0)], "zero")
    wf = masked_window_forecast(model, tiny_prepared, "test", 3, mask)
    t = wf.table
    assert len(t) == 12 * 4 and set(t["column"]) == {"temperature", "humidity", "price", "load"}
    np.testing.assert_allclose(t["error_change"], (t["masked"] - t["truth"]).abs() - (t["baseline"] - t["truth"]).abs())
    load_truth = t[t.column == "load"]["truth"].to_numpy()
    expected = tiny_prepared.scaler.inverse_transform(tiny_prepared.test.values[3 + 48:3 + 60, -1:], ["load"])[:, 0]
    np.testing.assert_allclose(load_truth, expected, rtol=1e-5)
    assert len(wf.history) == 48 * 4
    with pytest.raises(ValueError, match="outside the test split"):
        masked_window_forecast(model, tiny_prepared, "test", 10**6, mask)
