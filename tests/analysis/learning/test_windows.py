"""analysis.learning.windows: feature modes, windows, batches and the forecasting input."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.data import (
    prepare,
    time_features,
)
from informer_lab.analysis.errors import DataError
from informer_lab.analysis.learning.windows import WindowDataset, collate, forecast_batch, split_batches
from informer_lab.model.batch import Batch
from tests.analysis.data.helpers import generic_spec, make_frame


@pytest.mark.parametrize("features, columns, targets", [
    ("M", ("a", "c", "b"), ("a", "c", "b")),
    ("MS", ("a", "c", "b"), ("b",)),
    ("S", ("b",), ("b",)),
])
def test_feature_modes_set_column_counts(features, columns, targets):
    prepared = prepare(make_frame(1000, ("a", "b", "c")), generic_spec(features=features))
    assert prepared.columns == columns and prepared.target_columns == targets
    assert (prepared.enc_in, prepared.dec_in, prepared.c_out) == (len(columns), len(columns), len(targets))
    x_enc, mark_enc, x_dec, mark_dec, y = WindowDataset(prepared, "train")[0]
    assert x_enc.shape == (24, len(columns)) and x_dec.shape == (18, len(columns))
    assert mark_enc.shape == (24, 4) and mark_dec.shape == (18, 4)
    assert y.shape == (6, len(targets))


@pytest.mark.parametrize("features", ["M", "MS", "S"])
def test_windows_hold_history_placeholders_and_the_true_future(features):
    frame = make_frame(1000, ("a", "b", "c"))
    spec = generic_spec(features=features)
    prepared = prepare(frame, spec)
    dataset = WindowDataset(prepared, "val")
    split = prepared.val
    assert len(dataset) == len(split) - spec.seq_len - spec.pred_len + 1
    scaled = prepared.scaler.transform(frame.values[list(prepared.columns)].to_numpy())  # independent of the split
    for i in (0, 7, len(dataset) - 1):
        x_enc, mark_enc, x_dec, mark_dec, y = dataset[i]
        assert all(t.dtype == torch.float32 for t in (x_enc, mark_enc, x_dec, mark_dec, y))
        enc_start = split.start + i
        enc_end = enc_start + spec.seq_len
        np.testing.assert_allclose(x_enc.numpy(), scaled[enc_start:enc_end], atol=1e-6)
        assert torch.equal(x_dec[:spec.label_len], x_enc[-spec.label_len:])
        assert torch.count_nonzero(x_dec[spec.label_len:]) == 0
        future = scaled[enc_end:enc_end + spec.pred_len, -prepared.c_out:]
        np.testing.assert_allclose(y.numpy(), future, atol=1e-6)
        true_dec_times = frame.timestamps[enc_end - spec.label_len:enc_end + spec.pred_len]
        np.testing.assert_array_equal(mark_dec.numpy(), time_features(true_dec_times, "h"))
        np.testing.assert_array_equal(mark_enc.numpy(), time_features(frame.timestamps[enc_start:enc_end], "h"))
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_ms_target_is_the_last_input_column():
    frame = make_frame(1000, ("b", "a", "c"))
    prepared = prepare(frame, generic_spec(features="MS"))
    x_enc, _, _, _, y = WindowDataset(prepared, "train")[0]
    expected = prepared.scaler.transform(frame.values[["b"]].to_numpy()[24:30], columns=["b"])
    np.testing.assert_allclose(y.numpy(), expected, atol=1e-6)
    np.testing.assert_allclose(x_enc[:, -1].numpy(), prepared.scaler.transform(frame.values[["b"]].to_numpy()[:24], columns=["b"])[:, 0], atol=1e-6)


def test_collate_and_split_batches_build_model_batches():
    prepared = prepare(make_frame(1000, ("a", "b", "c")), generic_spec(features="MS"))
    dataset = WindowDataset(prepared, "test")
    batch, y = collate([dataset[0], dataset[1], dataset[2]])
    assert isinstance(batch, Batch) and batch.size == 3
    assert batch.x_enc.shape == (3, 24, 3) and batch.mark_enc.shape == (3, 24, 4)
    assert batch.x_dec.shape == (3, 18, 3) and batch.mark_dec.shape == (3, 18, 4) and y.shape == (3, 6, 1)
    assert torch.equal(batch.x_enc[1], dataset[1][0])

    loader = split_batches(prepared, "test", 8)
    batches = list(loader)
    assert sum(b.size for b, _ in batches) == len(dataset)
    assert torch.equal(batches[0][0].x_enc[0], dataset[0][0])

    def first_shuffled(seed: int) -> torch.Tensor:
        gen = torch.Generator().manual_seed(seed)
        return next(iter(split_batches(prepared, "train", 8, shuffle=True, generator=gen)))[1]

    assert torch.equal(first_shuffled(3), first_shuffled(3))


# ---------------------------------------------------------------------------------------------
# forecasting input
# ---------------------------------------------------------------------------------------------

def test_forecast_batch_reads_the_last_rows_and_marks_the_future():
    frame = make_frame(1000, ("a", "b", "c"))
    spec = generic_spec(features="MS")
    prepared = prepare(frame, spec)
    batch, future = forecast_batch(frame, spec, prepared.scaler)
    assert list(future) == list(pd.date_range(frame.timestamps[-1], periods=7, freq="h")[1:])
    assert batch.size == 1 and batch.x_enc.shape == (1, 24, 3) and batch.x_dec.shape == (1, 18, 3)
    expected = prepared.scaler.transform(frame.values[list(prepared.columns)].to_numpy()[-24:])
    np.testing.assert_allclose(batch.x_enc[0].numpy(), expected, atol=1e-6)
    assert torch.equal(batch.x_dec[0, :12], batch.x_enc[0, -12:])
    assert torch.count_nonzero(batch.x_dec[0, 12:]) == 0
    np.testing.assert_array_equal(batch.mark_dec[0, 12:].numpy(), time_features(future, "h"))
    np.testing.assert_array_equal(batch.mark_dec[0, :12].numpy(), time_features(frame.timestamps[-12:], "h"))


def test_forecast_batch_needs_the_training_columns():
    frame = make_frame(1000, ("a", "b", "c"))
    prepared = prepare(frame, generic_spec())
    other = make_frame(100, ("a", "b"))
    with pytest.raises(DataError) as info:
        forecast_batch(other, generic_spec(), prepared.scaler)
    assert info.value.column == "c"
