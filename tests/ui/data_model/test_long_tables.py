"""Data & model: a long table's series picker (each series with its length and span, also when reading every
series was refused), a short file's sizes (the form's defaults follow its length; sizes that do not fit are said
before training, with a button applying sizes that do), and spreadsheets uploaded like CSVs."""
from __future__ import annotations

import numpy as np
import pandas as pd

from tests.corpus.form_cases import xlsx_bytes
from tests.corpus.long_tables import TRICKY, csv_of, long_frame
from tests.ui.helpers import csv_bytes, errors, metric, sidebar_text
from informer_lab.ui import state


def _upload(at, name: str, data: bytes, kind: str = "text/csv"):
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.file_uploader(key="csv_upload").set_value((name, data, kind)).run()
    assert not at.exception, at.exception
    return at


def _train_button(at):
    return [b for b in at.button if b.label == "Train"][0]


def _sizes(at) -> tuple[int, int, int, int]:
    return tuple(at.number_input(key=k).value for k in ("train_seq", "train_label", "train_pred", "train_batch"))


def test_a_long_table_offers_its_series_and_reads_the_ones_picked(open_app):
    at = _upload(open_app(), "stocks.csv", csv_of(long_frame()))
    assert not errors(at)
    assert metric(at, "Rows") == "35" and metric(at, "Numeric columns") == "6"  # 3 series × price, volume
    picker = at.multiselect(key="read_series")
    assert picker.options == ["AAPL · 60 rows · 2021-01-01 → 2021-03-01", "MSFT · 50 rows · 2021-01-11 → 2021-03-01",
                              f"{TRICKY} · 40 rows · 2021-01-06 → 2021-02-14"]
    notes = " ".join(c.value for c in at.caption)
    assert "read as the series id" in notes and "cut to the span they share" in notes
    assert any("**Long table**" in m.value for m in at.markdown)
    picker.set_value([TRICKY]).run()
    assert not at.exception and not errors(at)
    assert metric(at, "Rows") == "40" and metric(at, "Numeric columns") == "2"
    assert "active data: stocks.csv" in sidebar_text(at)
    assert [t for t in at.selectbox if t.key == "train_target"][0].options == ["price", "volume"]
    picker = at.multiselect(key="read_series")
    picker.set_value(["AAPL", TRICKY]).run()
    assert metric(at, "Rows") == "40" and metric(at, "Numeric columns") == "4"
    target = [t for t in at.selectbox if t.key == "train_target"][0]
    assert target.options == ["AAPL.price", "AAPL.volume", f"{TRICKY}.price", f"{TRICKY}.volume"]


def test_a_refused_long_table_still_offers_its_series(open_app):
    gappy = csv_of(long_frame(drop={"MSFT": 20}))
    at = _upload(open_app(), "gappy.csv", gappy)
    message = errors(at)[0]
    assert "series 'MSFT'" in message and "--repair" in message and "--series" in message
    assert _train_button(at).disabled
    picker = at.multiselect(key="read_series")
    assert len(picker.options) == 3 and picker.options[1].startswith("MSFT · 49 rows")
    picker.set_value(["AAPL", TRICKY]).run()
    assert not at.exception and not errors(at)
    assert metric(at, "Numeric columns") == "4" and not _train_button(at).disabled
    assert "active data: gappy.csv" in sidebar_text(at)


def test_a_short_file_gets_sizes_that_fit_and_a_button_applying_them(open_app):
    months = pd.date_range("2000-01-01", periods=120, freq="MS")
    series = pd.DataFrame({"date": months.strftime("%Y-%m-%d"), "output": np.linspace(0, 1, 120)})
    at = open_app()
    assert _sizes(at) == (96, 48, 24, 16)  # the sample: the paper's windows fit, at the lab's batch
    _upload(at, "monthly.csv", csv_bytes(series))
    assert _sizes(at) == (24, 12, 12, 16)  # the form's defaults follow the file's length
    at.number_input(key="train_seq").set_value(96)  # the paper's windows, set in the form and submitted with it
    at.number_input(key="train_label").set_value(48)
    _train_button(at).click().run()
    assert not at.exception and state.JOB_KEY not in at.session_state  # nothing started
    warning = at.warning[0].value
    assert "Not started" in warning and "--seq-len 24 --label-len 12 --pred-len 12" in warning
    at.button(key="use_proposal").click().run()
    assert _sizes(at) == (24, 12, 12, 16)


def test_a_spreadsheet_upload_is_read_like_a_csv(open_app):
    days = pd.date_range("2024-01-01", periods=200, freq="D")
    sheet = pd.DataFrame({"date": days, "load": np.sin(np.arange(200) / 5.0), "note": "ok"})
    at = _upload(open_app(), "load.xlsx", xlsx_bytes(sheet),
                 "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert not errors(at)
    assert metric(at, "Rows") == "200" and metric(at, "Step") == "daily" and metric(at, "Numeric columns") == "1"
    assert any("**Left out of the model** (no numbers): note (text, e\\.g\\. 'ok')" in m.value for m in at.markdown)
