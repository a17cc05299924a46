"""Head masks built from (site, head) pairs: zero silences, mean ablation with its own window is a no-op."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.heads.masking import gates_with_heads_off, head_mask, masked_window_forecast, mean_contexts, site_labels


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


def test_the_window_forecast_tables_hold_each_step_and_column_where_the_model_and_the_data_put_them(
        tiny_trained, tiny_prepared, sample_frame):
    """Row (step, column) holds that step's forecast of that column in original units, beside its truth from the CSV;
    the history holds the CSV's own values at the window's timestamps."""
    from informer_lab.analysis.learning.windows import WindowDataset, collate
    model, prepared, window = tiny_trained[0].model, tiny_prepared, 7
    mask = head_mask(model, [(0, 1)], "zero")
    result = masked_window_forecast(model, prepared, "test", window, mask, seed=3)
    batch, _ = collate([WindowDataset(prepared, "test")[window]])
    targets = list(prepared.target_columns)
    with torch.no_grad():
        masked = model(batch, head_mask=mask, generator=torch.Generator().manual_seed(3))[0].cpu().numpy()
    masked = prepared.scaler.inverse_transform(masked, targets)
    table = result.table.set_index(["step", "column"])
    for step in (1, prepared.spec.pred_len):
        for c, column in enumerate(targets):
            row = table.loc[(step, column)]
            assert row["masked"] == pytest.approx(masked[step - 1, c], rel=1e-5, abs=1e-6)
            assert row["baseline_error"] == pytest.approx(abs(row["baseline"] - row["truth"]))
            assert row["error_change"] == pytest.approx(row["masked_error"] - row["baseline_error"])
    assert len(result.table) == prepared.spec.pred_len * len(targets)
    history = result.history
    assert len(history) == prepared.spec.seq_len * len(targets)
    stamps = prepared.split("test").timestamps[window:window + prepared.spec.seq_len]
    for i in (0, prepared.spec.seq_len - 1):  # the CSV's own values, as read
        for column in targets:
            value = history[(history.timestamp == stamps[i]) & (history.column == column)].value
            assert len(value) == 1 and value.iloc[0] == pytest.approx(sample_frame.values.loc[stamps[i], column])


def test_a_zero_gate_silences_the_head_on_every_row_as_zeroing_its_output_weights_does(tiny_trained, tiny_prepared):
    """A head gated to 0 contributes exactly nothing: the forecast equals that of a copy of the model whose output
    projection has the head's input columns zeroed (head h owns columns h·D … (h+1)·D − 1). A gate that only scaled
    the selected (top-u) rows and left the lazy rows' mean(V) alive would differ at every ProbSparse site."""
    import copy

    from informer_lab.analysis.attention.recording import window_batch
    from informer_lab.model import HeadMask, key_generator

    model = tiny_trained[0].model
    batch = window_batch(tiny_prepared, "test", np.arange(6))
    D = model.config.d_model // model.config.n_heads
    for site in model.sites:
        for head in (0, model.config.n_heads - 1):
            gates = gates_with_heads_off(model, [(site.index, head)])
            masked = model(batch, head_mask=HeadMask(gates), generator=key_generator(3))
            edited = copy.deepcopy(model)
            with torch.no_grad():
                edited.attention_layer(site).out_projection.weight[:, head * D:(head + 1) * D] = 0
            expected = edited(batch, generator=key_generator(3))
            torch.testing.assert_close(masked, expected, rtol=1e-5, atol=1e-6,
                                       msg=f"{site.name} head {head}: the gate left part of the head alive")
            untouched = model(batch, generator=key_generator(3))
            assert (masked - untouched).abs().max() > 1e-6  # the head did contribute before
