"""analysis.data.scaling: the scaler is fitted on train rows only and round-trips."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from informer_lab.analysis.data import (
    SeriesFrame,
    fit_scaler,
    prepare,
)
from informer_lab.analysis.errors import ConfigError
from tests.analysis.data.helpers import generic_spec, make_frame


def test_scaler_is_fitted_on_train_rows_only():
    frame = make_frame(1000, ("a", "b", "c"))
    prepared = prepare(frame, generic_spec())
    assert prepared.columns == ("a", "c", "b")
    train = frame.values[list(prepared.columns)].iloc[:700].to_numpy()
    np.testing.assert_allclose(prepared.scaler.mean, train.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(prepared.scaler.std, train.std(axis=0), rtol=1e-12)
    whole = frame.values[list(prepared.columns)].to_numpy()
    assert not np.allclose(prepared.scaler.mean, whole.mean(axis=0))

    # A change in a test row must not move the scaler; a change in a train row must.
    test_changed = frame.values.copy()
    test_changed.iloc[-1, 0] += 1e6
    moved_test = prepare(SeriesFrame(frame.timestamps, test_changed, "date", "h", "x"), generic_spec())
    np.testing.assert_array_equal(moved_test.scaler.mean, prepared.scaler.mean)
    np.testing.assert_array_equal(moved_test.scaler.std, prepared.scaler.std)
    train_changed = frame.values.copy()
    train_changed.iloc[10, 0] += 1e6
    moved_train = prepare(SeriesFrame(frame.timestamps, train_changed, "date", "h", "x"), generic_spec())
    assert moved_train.scaler.mean[0] != prepared.scaler.mean[0]


def test_scaled_train_split_has_zero_mean_and_unit_std():
    prepared = prepare(make_frame(1000, ("a", "b", "c")), generic_spec())
    np.testing.assert_allclose(prepared.train.values.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(prepared.train.values.std(axis=0), 1.0, atol=1e-5)


def test_inverse_transform_undoes_transform_for_all_or_some_columns():
    rng = np.random.default_rng(1)
    values = rng.normal(5.0, 3.0, size=(50, 3))
    scaler = fit_scaler(values, ["a", "b", "c"])
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(values)), values, rtol=1e-12)
    target = values[:, 2:]
    scaled_target = scaler.transform(target, columns=["c"])
    np.testing.assert_allclose(scaled_target, scaler.transform(values)[:, 2:])
    np.testing.assert_allclose(scaler.inverse_transform(scaled_target, columns=["c"]), target, rtol=1e-12)
    tensor = torch.tensor(scaler.transform(values), dtype=torch.float32)
    restored = scaler.inverse_transform(tensor)
    assert torch.is_tensor(restored) and restored.dtype == torch.float32
    np.testing.assert_allclose(restored.numpy(), values, rtol=1e-5)
    with pytest.raises(ConfigError):
        scaler.transform(target, columns=["zzz"])


def test_constant_column_gets_unit_std_and_scaler_round_trips_through_a_dict():
    values = np.column_stack([np.full(10, 3.0), np.arange(10.0)])
    scaler = fit_scaler(values, ["const", "ramp"])
    assert scaler.std[0] == 1.0
    np.testing.assert_array_equal(scaler.transform(values)[:, 0], 0.0)
    again = type(scaler).from_dict(scaler.to_dict())
    np.testing.assert_array_equal(again.mean, scaler.mean)
    np.testing.assert_array_equal(again.std, scaler.std)
    assert again.columns == scaler.columns
