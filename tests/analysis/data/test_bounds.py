"""Inputs under the caps finish with progress; inputs over them are refused before the work, naming the bound and the
way out (a compressed stream as soon as it passes the cap, a sheet from its declared size)."""
from __future__ import annotations

import gzip
import io

import pytest

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.data.spreadsheets import MAX_SHEET_CELLS
from informer_lab.analysis.data.table import MAX_BYTES
from informer_lab.analysis.errors import DataError


def test_a_compressed_csv_over_the_cap_is_refused_as_it_passes_it_and_reports_its_progress():
    line = b"2021-01-01 00:00:00,1.0,2.0\n"
    big = gzip.compress(b"date,a,b\n" + line * ((MAX_BYTES // len(line)) + 10), compresslevel=1)
    heard = []
    with pytest.raises(DataError, match=r"unpacks to more than 256 MiB.*Parquet"):
        load_csv(big, progress=lambda fraction, what: heard.append((fraction, what)))
    assert heard and all(0 <= f < 1 for f, _ in heard) and heard[-1][1].startswith("unpacking")
    assert heard[-1][0] > 0.9  # gzip's declared size gives the fraction


def _workbook(rows: int, write_only: bool) -> bytes:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook(write_only=write_only)
    sheet = book.create_sheet("data") if write_only else book.active
    sheet.append(["date", "x"])
    for i in range(rows):
        sheet.append([f"2021-01-{1 + i // 24 % 28:02d} {i % 24:02d}:00", i])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_a_sheet_larger_than_the_bound_is_refused_from_its_declared_size(monkeypatch):
    """A sheet saved with its dimension (as Excel saves one) is refused before a row is read; one without it once the
    rows read pass the bound. (The bound lowered to 10,000 cells here: the real one, 1,000,000, is ~40 s of rows.)"""
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    import informer_lab.analysis.data.spreadsheets as sheets
    monkeypatch.setattr(sheets, "MAX_SHEET_CELLS", 10_000)
    declared = _workbook(6_000, write_only=False)
    original = ReadOnlyWorksheet.iter_rows
    monkeypatch.setattr(ReadOnlyWorksheet, "iter_rows", lambda *a, **k: pytest.fail("a row was read"))
    with pytest.raises(DataError, match=r"holds 12,002 cells or more; sheets are read up to 10,000.*CSV or Parquet"):
        load_csv(declared)
    monkeypatch.setattr(ReadOnlyWorksheet, "iter_rows", original)
    with pytest.raises(DataError, match=r"sheets are read up to 10,000"):
        load_csv(_workbook(6_000, write_only=True))
    assert load_csv(_workbook(400, write_only=False)).n_rows == 400  # under the bound: read
    assert MAX_SHEET_CELLS == 1_000_000
