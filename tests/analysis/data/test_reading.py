"""analysis.data.reading: load_csv reads good files and names the problem, column, row and value of bad ones."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.data import (
    load_csv,
)
from informer_lab.analysis.errors import DataError
from tests.analysis.data.helpers import csv_text, hourly_rows, load_error, write


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
    assert "'a', 'b'" in str(err)


def test_named_datetime_column_that_does_not_exist(tmp_path):
    err = load_error(tmp_path, csv_text(hourly_rows(3)), datetime_column="when")
    assert err.column == "when"
    assert "'when'" in str(err) and "'date', 'x', 'y'" in str(err)


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
    assert "column 'y': 1 cell not a number ('abc' at row 4 (line 5 of the file))" in str(err)


@pytest.mark.parametrize("cell", ["", "NaN", "NA"])
def test_missing_value(tmp_path, cell):
    rows = hourly_rows(6)
    ts, _, y = rows[4].split(",")
    rows[4] = f"{ts},{cell},{y}"
    err = load_error(tmp_path, csv_text(rows))
    assert (err.column, err.row) == ("x", 4)
    assert "missing values: 1 in 'x'" in str(err) and "row 5 (line 6 of the file)" in str(err)


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
    assert err.repairable and "--repair" in str(err)


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
    assert "irregular spacing: '2024-01-01 06:00:00' at row 6 (line 7 of the file) comes after a gap" in str(err)
    assert "1 missing step" in str(err) and "steps hourly" in str(err)


def test_missing_file():
    with pytest.raises(DataError, match="file not found"):
        load_csv("/nonexistent/nothing.csv")


def test_day_and_month_are_decided_by_the_reading_that_finds_a_step():
    """'06.01.2020 22:00' … '07.01.2020 00:00': month first gives 1 June and 1 July (no step can be found), day first
    gives three hours in a row; the irregular reading must lose, not end the read (a hypothesis example)."""
    import io

    data = io.BytesIO(b"date;v0\n06.01.2020 22:00:00;0,0\n06.01.2020 23:00:00;0,0\n07.01.2020 00:00:00;0,0\n")
    data.name = "three.csv"
    frame = load_csv(data)
    assert frame.freq == "h" and "dates read day first" in frame.notes
