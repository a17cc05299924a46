"""Data & model: a refused upload turns training off until it is repaired, another file is chosen or the sample is
taken back; a repair lists every change; a split too short for the sizes is said before training, with sizes that
fit; a model that does not fit the data offers the way out."""
from __future__ import annotations

import numpy as np
import pandas as pd

from tests.ui.helpers import MASK_PAGE, csv_bytes, errors, metric, sidebar_text
from informer_lab.ui import state

# One daylight-saving spring gap (02:00 does not exist) in 300 hours of local time, and two empty cells.
STAMPS = pd.date_range("2021-03-20", periods=301, freq="h").delete(194)  # 2021-03-28 02:00
GAPPY = pd.DataFrame({"date": STAMPS.strftime("%Y-%m-%d %H:%M"), "load": np.sin(np.arange(300) / 7.0).round(4)})
GAPPY.loc[[10, 11], "load"] = np.nan


def _upload(at, name: str, data: bytes):
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.file_uploader(key="csv_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def _train_button(at):
    return [b for b in at.button if b.label == "Train"][0]


def test_a_refused_upload_turns_training_off_and_a_repair_turns_it_back_on(open_app):
    at = _upload(open_app(), "gappy.csv", csv_bytes(GAPPY))
    message = errors(at)[0]
    assert message.startswith("gappy.csv: irregular spacing: '2021-03-28 03:00'") and "--repair" in message
    assert _train_button(at).disabled  # the sample is still active, but training it now would be a mistake
    assert any("Off: the upload of **gappy.csv** was refused" in c.value for c in at.caption)
    assert "active data: sample.csv" in sidebar_text(at)
    at.button(key="repair_interpolate").click().run()
    assert not at.exception and not errors(at)
    assert "active data: gappy.csv" in sidebar_text(at) and metric(at, "Rows") == "301"
    assert not _train_button(at).disabled
    report = [d.value for d in at.dataframe if "change" in d.value.columns][0]
    added = report[report["change"].str.startswith("row added")]
    assert list(added["timestamp"]) == [pd.Timestamp("2021-03-28 02:00")]
    filled = report[report["change"].str.startswith("cell filled")]
    assert len(filled) == 3 and set(filled["column"]) == {"load"}  # the gap's row and the two empty cells
    at_gap = filled[filled["timestamp"] == pd.Timestamp("2021-03-28 02:00")]["value"].iloc[0]
    assert at_gap == (GAPPY["load"][193] + GAPPY["load"][194]) / 2  # time interpolation between 01:00 and 03:00


def test_back_to_the_sample_after_a_refusal(open_app):
    at = _upload(open_app(), "gappy.csv", csv_bytes(GAPPY))
    assert _train_button(at).disabled
    at.button(key="back_to_sample").click().run()
    assert not at.exception and at.radio(key="data_source").value == "Bundled sample"
    assert not errors(at) and not _train_button(at).disabled


def test_a_series_too_short_for_the_sizes_is_said_before_training_with_sizes_that_fit(open_app):
    months = pd.date_range("2000-01-01", periods=236, freq="MS")  # 96 / 48 / 24: 46 train windows, 3 batches of 16
    series = pd.DataFrame({"date": months.strftime("%Y-%m-%d"), "output": np.linspace(0, 1, 236)})
    at = _upload(open_app(), "monthly.csv", csv_bytes(series))
    assert metric(at, "Step") == "monthly (month start)"
    assert at.number_input(key="train_seq").value == 24  # the form's defaults follow the file's season …
    assert any("Sizes set for monthly.csv" in c.value and "two seasons of history" in c.value for c in at.caption)
    assert any("test split gives 36 windows" in c.value and "no interval" in c.value for c in at.caption)
    at.number_input(key="train_seq").set_value(96)  # … and the paper's windows, asked for, do not fit
    at.number_input(key="train_label").set_value(48)
    at.number_input(key="train_pred").set_value(24)
    _train_button(at).click().run()
    assert not at.exception and state.JOB_KEY not in at.session_state  # nothing started
    warning = at.warning[0].value
    assert "Not started: the train split gives 46 windows: 3 steps an epoch at batch size 16" in warning
    assert "seq_len 24, label_len 12, pred_len 12" in warning
    at.button(key="use_proposal").click().run()
    assert (at.number_input(key="train_seq").value, at.number_input(key="train_label").value,
            at.number_input(key="train_pred").value) == (24, 12, 12)


def test_a_model_that_does_not_fit_the_data_offers_the_way_out(open_app, runs_dir):
    days = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=400, freq="D").strftime("%Y-%m-%d"),
                         "temperature": 1.0, "humidity": 2.0, "price": 3.0, "load": np.arange(400.0)})
    at = _upload(open_app(), "daily.csv", csv_bytes(days))
    at.switch_page(MASK_PAGE).run()
    assert not at.exception
    assert any("the model was trained on hourly data ('h'), but daily.csv is daily ('D')" in e for e in errors(at))
    links = [link for link in at.get("page_link")]
    assert any("Train a model on daily.csv" in str(getattr(link, "proto", link)) for link in links), links


def test_a_repair_chosen_for_one_file_does_not_carry_over_to_the_next(open_app):
    at = _upload(open_app(), "gappy.csv", csv_bytes(GAPPY))
    at.button(key="repair_ffill").click().run()
    assert at.selectbox(key="read_repair").value == "ffill" and "active data: gappy.csv" in sidebar_text(at)
    other = GAPPY.assign(load=GAPPY["load"].fillna(0) + 1)  # another file, with the same gap
    at.file_uploader(key="csv_upload").set_value(("other.csv", csv_bytes(other), "text/csv")).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="read_repair").value == "none"  # refused until it asks for a repair itself
    assert errors(at)[0].startswith("other.csv: irregular spacing")
