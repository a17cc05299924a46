"""analysis.data.splits: DataSpec, the official ETT borders, 70/10/20 splits."""
from __future__ import annotations


import numpy as np
import pytest

from informer_lab.analysis.data import (
    ETT_COLUMNS,
    DataSpec,
    PreparedData,
    prepare,
    split_borders,
)
from informer_lab.analysis.errors import ConfigError, DataError
from tests.analysis.data.helpers import generic_spec, make_frame


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


def test_a_split_keeps_its_values_as_read_for_the_truth_shown():
    """Scaled to float32 and back, 24529 came out as 24529.0002 in a table's truth; the split keeps the file's values."""
    import numpy as np
    import pandas as pd

    from informer_lab.analysis.data import DataSpec, load_csv, prepare

    n = 400
    values = 24529 + np.arange(n) % 97 * 13.0
    text = "date,load\n" + "\n".join(f"{t},{v:.0f}" for t, v in zip(pd.date_range("2021", periods=n, freq="h"),
                                                                     values)) + "\n"
    prepared = prepare(load_csv(text.encode()), DataSpec("load", "S", 24, 12, 6))
    test = prepared.test
    assert (test.original[:, 0] == values[test.start:test.stop]).all()  # exactly the file's
    back = prepared.scaler.inverse_transform(test.values.astype(np.float64), ["load"])[:, 0]
    assert np.abs(back - values[test.start:test.stop]).max() > 0  # what a float32 round trip gives instead
