"""Tests of analysis/data.py: CSV validation, frequency, time features, scaling, splits, windows."""
from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from analysis.data import (
    ETT_COLUMNS,
    DataSpec,
    PreparedData,
    SeriesFrame,
    fit_scaler,
    future_timestamps,
    infer_frequency,
    load_csv,
    n_time_features,
    prepare,
    split_borders,
    time_features,
)
from analysis.windows import WindowDataset, collate, forecast_batch, split_batches
from analysis.errors import ConfigError, DataError
from model.batch import Batch

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data" / "sample.csv"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def write(tmp_path: Path, text: str | bytes, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def hourly_rows(n: int, start: str = "2024-01-01 00:00:00") -> list[str]:
    """n CSV lines 'timestamp,x,y' with x = i, y = 10 * i."""
    stamps = pd.date_range(start, periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    return [f"{ts},{i},{10 * i}" for i, ts in enumerate(stamps)]


def csv_text(rows: list[str], header: str = "date,x,y") -> str:
    return "\n".join([header, *rows]) + "\n"


def make_frame(n: int, columns: tuple[str, ...], freq: str = "h", seed: int = 0,
               start: str = "2016-07-01 00:00:00") -> SeriesFrame:
    """A SeriesFrame of random values, built directly (no CSV)."""
    rng = np.random.default_rng(seed)
    timestamps = pd.date_range(start, periods=n, freq=freq, name="date")
    values = pd.DataFrame(rng.normal(size=(n, len(columns))) * 3.0 + np.arange(len(columns)), columns=list(columns),
                          index=timestamps)
    return SeriesFrame(timestamps, values, "date", freq, "synthetic")


def load_error(tmp_path: Path, text: str | bytes, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        load_csv(write(tmp_path, text), **kwargs)
    return info.value


# ---------------------------------------------------------------------------------------------
# load_csv: good files and sources
# ---------------------------------------------------------------------------------------------

def test_load_csv_reads_values_timestamps_and_frequency(tmp_path):
    frame = load_csv(write(tmp_path, csv_text(hourly_rows(5))))
    assert frame.name == "data.csv"
    assert frame.datetime_column == "date"
    assert frame.freq == "h"
    assert frame.columns == ("x", "y")
    assert list(frame.timestamps) == list(pd.date_range("2024-01-01", periods=5, freq="h"))
    assert frame.values.dtypes.tolist() == [np.float64, np.float64]
    np.testing.assert_array_equal(frame.values["y"].to_numpy(), [0.0, 10.0, 20.0, 30.0, 40.0])


def test_load_csv_accepts_bytes_file_like_and_str_path(tmp_path):
    text = csv_text(hourly_rows(4))
    path = write(tmp_path, text)
    from_bytes = load_csv(text.encode())
    assert from_bytes.name == "upload"
    buffer = io.BytesIO(text.encode())
    buffer.read()  # cursor at the end, as after a previous read of an UploadedFile
    buffer.name = "uploaded.csv"
    from_buffer = load_csv(buffer)
    assert from_buffer.name == "uploaded.csv"
    from_str = load_csv(str(path))
    for frame in (from_bytes, from_buffer, from_str):
        assert frame.n_rows == 4 and frame.columns == ("x", "y")


def test_load_csv_handles_utf8_bom_semicolons_and_text_columns(tmp_path):
    text = "\ufeff" + csv_text([r.replace(",", ";") + ";north" for r in hourly_rows(4)], header="Timestamp;x;y;site")
    frame = load_csv(write(tmp_path, text))
    assert frame.datetime_column == "Timestamp"
    assert frame.columns == ("x", "y")
    assert frame.dropped_columns == ("site",)


def test_load_csv_finds_an_unnamed_datetime_column_and_honours_an_explicit_one(tmp_path):
    rows = [f"{i},{ts}" for i, ts in enumerate(pd.date_range("2024-01-01", periods=4, freq="D").strftime("%Y-%m-%d"))]
    frame = load_csv(write(tmp_path, csv_text(rows, header="value,when")))
    assert frame.datetime_column == "when" and frame.freq == "D" and frame.columns == ("value",)
    explicit = load_csv(write(tmp_path, csv_text(rows, header="value,when")), datetime_column="when")
    assert explicit.datetime_column == "when"


def test_load_csv_univariate_is_allowed(tmp_path):
    frame = load_csv(write(tmp_path, csv_text([r.rsplit(",", 1)[0] for r in hourly_rows(3)], header="date,x")))
    assert frame.columns == ("x",)


# ---------------------------------------------------------------------------------------------
# load_csv: every bad file names the problem, column, row and value
# ---------------------------------------------------------------------------------------------

def test_empty_file(tmp_path):
    assert "empty" in str(load_error(tmp_path, b""))
    assert "empty" in str(load_error(tmp_path, b"\n  \n"))


def test_header_without_data_rows(tmp_path):
    err = load_error(tmp_path, "date,x,y\n")
    assert "no data rows" in str(err)


def test_bytes_that_are_not_utf8(tmp_path):
    good = csv_text(hourly_rows(3)).encode()
    data = good + b"2024-01-01 03:00:00,caf\xe9,1\n"
    err = load_error(tmp_path, data)
    offset = len(good) + len("2024-01-01 03:00:00,caf")
    assert "not UTF-8" in str(err)
    assert f"byte offset {offset}" in str(err)
    assert "(line 5)" in str(err)
    assert err.value == "0xe9"
    assert err.row == 3  # data row 4, 0-based


def test_non_utf8_offset_counts_the_byte_order_mark(tmp_path):
    data = b"\xef\xbb\xbfdate,x\n\xff\n"
    err = load_error(tmp_path, data)
    assert "byte offset 10" in str(err)


def test_no_datetime_column(tmp_path):
    err = load_error(tmp_path, "a,b\n1,2\n3,4\n")
    assert "no datetime column" in str(err)
    assert "a, b" in str(err)


def test_named_datetime_column_that_does_not_exist(tmp_path):
    err = load_error(tmp_path, csv_text(hourly_rows(3)), datetime_column="when")
    assert err.column == "when"
    assert "'when'" in str(err) and "date, x, y" in str(err)


def test_unparseable_timestamp(tmp_path):
    rows = hourly_rows(5)
    rows[2] = "not-a-date,2,20"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("date", 2, "not-a-date")
    assert "'not-a-date'" in str(err)
    assert "row 3 (line 4 of the file)" in str(err)
    assert "'date'" in str(err)


def test_missing_timestamp(tmp_path):
    rows = hourly_rows(5)
    rows[1] = ",1,10"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row) == ("date", 1)
    assert "missing timestamp" in str(err) and "row 2 (line 3 of the file)" in str(err)


def test_non_numeric_value(tmp_path):
    rows = hourly_rows(6)
    rows[3] = rows[3].rsplit(",", 1)[0] + ",abc"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("y", 3, "abc")
    assert "non-numeric value 'abc' in column 'y' at row 4 (line 5 of the file)" in str(err)


@pytest.mark.parametrize("cell", ["", "NaN", "NA"])
def test_missing_value(tmp_path, cell):
    rows = hourly_rows(6)
    ts, _, y = rows[4].split(",")
    rows[4] = f"{ts},{cell},{y}"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row) == ("x", 4)
    assert "missing value" in str(err) and "column 'x'" in str(err) and "row 5 (line 6 of the file)" in str(err)


def test_infinite_value(tmp_path):
    rows = hourly_rows(4)
    rows[2] = rows[2].rsplit(",", 1)[0] + ",inf"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("y", 2, "inf")


def test_blank_lines_are_skipped_and_line_numbers_still_match_the_file(tmp_path):
    rows = hourly_rows(4)
    rows[3] = rows[3].rsplit(",", 1)[0] + ",oops"
    text = "\n".join(["date,x,y", rows[0], "", rows[1], rows[2], rows[3]]) + "\n"
    err = load_error(tmp_path, text)
    assert err.row == 3  # the 4th data row ...
    assert "row 4 (line 6 of the file)" in str(err)  # ... on line 6, after the blank line 3


def test_zero_numeric_columns(tmp_path):
    rows = [f"{ts},north" for ts in pd.date_range("2024-01-01", periods=3, freq="h").strftime("%Y-%m-%d %H:%M")]
    err = load_error(tmp_path, csv_text(rows, header="date,site"))
    assert "no numeric column" in str(err) and "site" in str(err)


def test_duplicated_timestamp(tmp_path):
    rows = hourly_rows(6)
    rows[4] = rows[3].split(",")[0] + ",4,40"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("date", 4, "2024-01-01 03:00:00")
    assert "duplicated timestamp '2024-01-01 03:00:00' at row 5 (line 6 of the file)" in str(err)
    assert "already at row 4" in str(err)


def test_unsorted_timestamps(tmp_path):
    rows = hourly_rows(6)
    rows[2], rows[3] = rows[3], rows[2]
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("date", 3, "2024-01-01 02:00:00")
    assert "not in increasing order" in str(err) and "row 4 (line 5 of the file)" in str(err)


def test_irregular_spacing(tmp_path):
    rows = hourly_rows(8)
    del rows[5]  # 04:00 → 06:00
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row, err.value) == ("date", 5, "2024-01-01 06:00:00")
    assert "irregular spacing at row 6 (line 7 of the file)" in str(err)
    assert "comes 2 h after" in str(err) and "steps by 1 h" in str(err)


def test_missing_file():
    with pytest.raises(DataError, match="file not found"):
        load_csv("/nonexistent/nothing.csv")


# ---------------------------------------------------------------------------------------------
# frequency and future timestamps
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("freq, expected", [
    ("h", "h"), ("15min", "15min"), ("min", "min"), ("s", "s"), ("D", "D"), ("2h", "2h"),
    ("W-SUN", "W-SUN"), ("MS", "MS"), ("ME", "ME"), ("B", "B"),
])
def test_infer_frequency(freq, expected):
    stamps = pd.date_range("2024-01-07", periods=40, freq=freq)
    assert infer_frequency(stamps) == expected


def test_infer_frequency_from_a_15_minute_csv(tmp_path):
    stamps = pd.date_range("2024-01-01", periods=10, freq="15min").strftime("%Y-%m-%d %H:%M")
    frame = load_csv(write(tmp_path, csv_text([f"{ts},{i}" for i, ts in enumerate(stamps)], header="date,x")))
    assert frame.freq == "15min"


def test_infer_frequency_uses_the_most_common_step():
    stamps = pd.DatetimeIndex(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-05", "2024-01-06"])
    with pytest.raises(DataError) as info:
        infer_frequency(stamps)
    assert info.value.row == 3
    assert "comes 2 days after" in str(info.value) and "steps by 1 day" in str(info.value)


@pytest.mark.parametrize("freq", ["h", "15min", "D", "MS", "W-SUN"])
def test_future_timestamps_continue_the_step(freq):
    history = pd.date_range("2024-01-07", periods=30, freq=freq)
    future = future_timestamps(history[-1], freq, 5)
    expected = pd.date_range(history[0], periods=35, freq=freq)[30:]
    assert list(future) == list(expected)


# ---------------------------------------------------------------------------------------------
# time features
# ---------------------------------------------------------------------------------------------

def test_hourly_time_features_at_a_known_timestamp():
    # 2024-03-05 13:00 is a Tuesday (dayofweek 1), day 5, day of year 31 + 29 + 5 = 65.
    marks = time_features(pd.DatetimeIndex(["2024-03-05 13:00"]), "h")
    expected = [13 / 23 - 0.5, 1 / 6 - 0.5, 4 / 30 - 0.5, 64 / 365 - 0.5]
    assert marks.dtype == np.float32 and marks.shape == (1, 4)
    np.testing.assert_allclose(marks[0], expected, rtol=0, atol=1e-7)


def test_minutely_and_secondly_time_features_prepend_minute_then_second():
    stamp = pd.DatetimeIndex(["2024-03-05 13:45:30"])
    hourly = time_features(stamp, "h")[0]
    minutely = time_features(stamp, "15min")[0]
    secondly = time_features(stamp, "s")[0]
    np.testing.assert_allclose(minutely, [45 / 59 - 0.5, *hourly], atol=1e-7)
    np.testing.assert_allclose(secondly, [30 / 59 - 0.5, 45 / 59 - 0.5, *hourly], atol=1e-7)


def test_daily_weekly_monthly_time_features():
    stamp = pd.DatetimeIndex(["2024-03-05"])  # ISO week 10
    np.testing.assert_allclose(time_features(stamp, "D")[0], [1 / 6 - 0.5, 4 / 30 - 0.5, 64 / 365 - 0.5], atol=1e-7)
    np.testing.assert_allclose(time_features(stamp, "B")[0], time_features(stamp, "D")[0])
    np.testing.assert_allclose(time_features(stamp, "W-SUN")[0], [4 / 30 - 0.5, 9 / 52 - 0.5], atol=1e-7)
    np.testing.assert_allclose(time_features(stamp, "MS")[0], [2 / 11 - 0.5], atol=1e-7)


def test_time_features_stay_in_half_unit_range_over_a_year():
    marks = time_features(pd.date_range("2024-01-01", periods=366 * 24, freq="h"), "h")
    assert marks.min() == pytest.approx(-0.5) and marks.max() == pytest.approx(0.5)


@pytest.mark.parametrize("freq, count", [("s", 6), ("min", 5), ("15min", 5), ("h", 4), ("D", 3), ("B", 3),
                                         ("W-SUN", 2), ("MS", 1), ("ME", 1)])
def test_n_time_features(freq, count):
    assert n_time_features(freq) == count
    assert time_features(pd.date_range("2024-01-01", periods=3, freq=freq), freq).shape == (3, count)


def test_unknown_frequency_is_a_config_error():
    with pytest.raises(ConfigError):
        n_time_features("fortnightly")


# ---------------------------------------------------------------------------------------------
# DataSpec
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, text", [
    ({"seq_len": 24, "label_len": 48}, "label_len (48) cannot exceed seq_len (24)"),
    ({"pred_len": 0}, "pred_len"),
    ({"seq_len": -1}, "seq_len"),
    ({"features": "X"}, "features"),
])
def test_data_spec_rejects_impossible_settings(kwargs, text):
    with pytest.raises(ConfigError, match=text.replace("(", r"\(").replace(")", r"\)")):
        DataSpec("y", **kwargs)


def test_prepare_rejects_an_unknown_target():
    with pytest.raises(ConfigError, match="'nope'"):
        prepare(make_frame(500, ("a", "b")), DataSpec("nope", seq_len=8, label_len=4, pred_len=4))


# ---------------------------------------------------------------------------------------------
# scaler
# ---------------------------------------------------------------------------------------------

def generic_spec(**kwargs) -> DataSpec:
    return DataSpec("b", **{"features": "M", "seq_len": 24, "label_len": 12, "pred_len": 6, **kwargs})


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


# ---------------------------------------------------------------------------------------------
# splits
# ---------------------------------------------------------------------------------------------

def borders_of(prepared: PreparedData) -> dict[str, tuple[int, int]]:
    return {name: (prepared.split(name).start, prepared.split(name).stop) for name in ("train", "val", "test")}


def test_ett_hourly_borders():
    frame = make_frame(17420, ETT_COLUMNS, freq="h")
    prepared = prepare(frame, DataSpec("OT", seq_len=96, label_len=48, pred_len=24))
    assert prepared.is_ett
    assert borders_of(prepared) == {"train": (0, 8640), "val": (8544, 11520), "test": (11424, 14400)}
    assert prepared.test.timestamps[0] == frame.timestamps[11424]
    assert len(prepared.test.values) == 14400 - 11424
    train = frame.values[list(prepared.columns)].iloc[:8640].to_numpy()
    np.testing.assert_allclose(prepared.scaler.mean, train.mean(axis=0), rtol=1e-12)


def test_ett_15_minute_borders_are_four_times_the_hourly_ones():
    frame = make_frame(69680, ETT_COLUMNS, freq="15min")
    prepared = prepare(frame, DataSpec("OT", seq_len=96, label_len=48, pred_len=24))
    assert prepared.is_ett and prepared.freq == "15min" and prepared.n_marks == 5
    assert borders_of(prepared) == {"train": (0, 34560), "val": (34464, 46080), "test": (45984, 57600)}


def test_generic_borders_are_70_10_20_with_history():
    prepared = prepare(make_frame(1000, ("a", "b")), generic_spec(seq_len=96, label_len=48, pred_len=24))
    assert not prepared.is_ett
    assert borders_of(prepared) == {"train": (0, 700), "val": (604, 800), "test": (704, 1000)}
    assert split_borders(1001, 10) == {"train": (0, 700), "val": (690, 801), "test": (791, 1001)}


def test_ett_columns_with_too_few_rows_fall_back_to_70_10_20():
    prepared = prepare(make_frame(2000, ETT_COLUMNS), DataSpec("OT", seq_len=96, label_len=48, pred_len=24))
    assert not prepared.is_ett
    assert borders_of(prepared)["train"] == (0, 1400)


def test_a_split_too_short_for_one_window_is_a_data_error():
    with pytest.raises(DataError) as info:
        prepare(make_frame(200, ("a", "b")), generic_spec(seq_len=96, label_len=48, pred_len=24))
    message = str(info.value)
    assert "val split" in message and "has 116 rows" in message and "96 + 24 = 120" in message


# ---------------------------------------------------------------------------------------------
# column layouts and windows
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# sample data
# ---------------------------------------------------------------------------------------------

def test_sample_csv_loads_cleanly():
    frame = load_csv(SAMPLE)
    assert frame.freq == "h" and frame.datetime_column == "date"
    assert 2000 <= frame.n_rows <= 20000
    assert frame.columns == ("temperature", "humidity", "price", "load")
    assert frame.dropped_columns == ()
    assert SAMPLE.stat().st_size < 1_000_000
    prepared = prepare(frame, DataSpec("load"))
    assert prepared.enc_in == 4 and prepared.columns[-1] == "load"


def test_sample_csv_is_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("sample_generate", REPO / "sample_data" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generated = module.generate()
    on_disk = pd.read_csv(SAMPLE, dtype={"date": str})
    assert list(generated.columns) == list(on_disk.columns)
    assert (generated["date"] == on_disk["date"]).all()
    np.testing.assert_allclose(generated.drop(columns="date").to_numpy(), on_disk.drop(columns="date").to_numpy(),
                               rtol=0, atol=1e-9)
    assert module.generate(50, 1).equals(module.generate(50, 1))
