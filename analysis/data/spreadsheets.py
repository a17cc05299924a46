"""Typed files: a spreadsheet's sheet (.xlsx / .xlsm, through openpyxl) and a Parquet file (through pyarrow), as a
`RawTable` whose number cells are numbers and date cells dates (sources.py tells the kinds apart).

A sheet is read in read-only mode with `data_only=True`: a formula cell gives the value the spreadsheet saved
with it, and no formula is ever evaluated (one that was never computed reads as an empty cell). Sizes are checked
first: the workbook's members by their declared sizes, the sheet's rows × columns as they are read, a Parquet file
by its metadata.
"""
from __future__ import annotations

import datetime as dt
import io
import zipfile

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .messages import cell, names_phrase, short_name
from .table import MAX_BYTES, RawTable, unique_names

MAX_CELLS = 50_000_000  # a Parquet file larger than this (rows × columns) is refused before reading
MAX_SHEET_CELLS = 1_000_000  # a sheet: openpyxl reads ~25,000 cells a second, so this is about 40 s (CSV: seconds)
MAX_SHEET_RATIO = 500  # a workbook member unpacking to more than this many times its packed size is refused


def frame_to_table(frame: pd.DataFrame, name: str, lines: np.ndarray, repair: bool, kind: str) -> RawTable:
    """A DataFrame of typed cells (a sheet's, a Parquet file's) as a RawTable: whole-number and float columns as
    float64, date columns as datetime64, other columns as objects (numbers stay numbers; dates become text)."""
    names, renamed = unique_names([str(c) for c in frame.columns], repair)
    columns = {}
    for position, c in enumerate(frame.columns):
        columns[names[position]] = _typed_column(frame.iloc[:, position])
    cells = pd.DataFrame(columns)
    blank = cells.isna().all(axis=1).to_numpy()
    cells, lines = cells.loc[~blank].reset_index(drop=True), lines[~blank]
    if len(cells) == 0:
        raise DataError(f"the {kind} has a header but no data rows ({cell(short_name(name), 60)}: "
                        f"{names_phrase(names, 100)})")
    return RawTable(name, "", cells, lines, renamed, None, True)


def _typed_column(column: pd.Series) -> pd.Series:
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    if pd.api.types.is_datetime64_any_dtype(column) or pd.api.types.is_bool_dtype(column):
        return column
    if pd.api.types.is_numeric_dtype(column):
        return column.astype("float64")
    values = column.astype(object).where(column.notna(), None)
    present = values.dropna()
    if present.empty:
        return pd.Series(np.nan, index=column.index)
    if present.map(lambda v: isinstance(v, (dt.datetime, dt.date, pd.Timestamp))).all():
        return pd.to_datetime(values, errors="coerce")
    if present.map(lambda v: isinstance(v, bool)).all():
        return values.astype(object)
    numeric = present.map(lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool))
    if numeric.all():
        return pd.to_numeric(values, errors="coerce").astype("float64")
    return values.map(lambda v: v.isoformat(sep=" ") if isinstance(v, dt.datetime) else
                      v.isoformat() if isinstance(v, (dt.date, dt.time)) else
                      v if v is None or isinstance(v, (str, int, float, np.integer, np.floating)) else str(v))


def read_parquet(data: bytes, name: str, repair: bool) -> RawTable:
    """A Parquet file's columns (its index too, when it stored one), sizes checked from its metadata first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shown = cell(short_name(name))
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        meta = handle.metadata
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if meta.num_rows * max(1, meta.num_columns) > MAX_CELLS or size > 4 * MAX_BYTES:
            raise DataError(f"{shown} holds {meta.num_rows:,} rows × {meta.num_columns:,} columns "
                            f"({size / 1e9:.1f} GB unpacked); the largest read is {MAX_CELLS:,} cells")
        frame = handle.read().to_pandas(date_as_object=False)
    except DataError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as err:
        raise DataError(f"{shown} is not a readable Parquet file: {cell(err, 100)}") from None
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    return frame_to_table(frame, name, np.arange(len(frame)) + 2, repair, "Parquet file")


def _check_workbook(data: bytes, shown: str) -> None:
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise DataError(f"{shown} is not a readable .xlsx file: {cell(err, 80)}") from None
    total = sum(i.file_size for i in infos)
    packed = sum(i.compress_size for i in infos)
    if total > MAX_BYTES or total > MAX_SHEET_RATIO * max(packed, 1) + (8 << 20):
        raise DataError(f"{shown} unpacks to {total / 1e6:,.0f} MB ({total / max(packed, 1):,.0f} times its size); "
                        "it is not read (save the sheet as CSV)")


def read_sheet(data: bytes, name: str, sheet: str | None, repair: bool, progress=None) -> RawTable:
    """The first sheet (or `sheet`) of a workbook: the first non-empty row is the header; empty rows are skipped;
    `lines` are the sheet's row numbers. A sheet over MAX_SHEET_CELLS is refused (from its declared size before any
    row is read, else once the rows read pass it); `progress(fraction, what)` hears every 20,000 rows."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    shown = cell(short_name(name))
    _check_workbook(data, shown)
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError, TypeError) as err:
        raise DataError(f"{shown} is not a readable .xlsx file: {cell(err, 80)}") from None
    try:
        names = book.sheetnames
        if sheet is not None and sheet not in names:
            raise DataError(f"{shown} has no sheet named {cell(sheet, 40)}; its sheets are {names_phrase(names)}")
        ws = book[sheet] if sheet is not None else book.worksheets[0]
        declared = (ws.max_row or 0) * (ws.max_column or 0)
        if declared > MAX_SHEET_CELLS:
            raise _too_big(ws.title, shown, declared)
        header, rows, numbers = None, [], []
        for number, row in enumerate(ws.iter_rows(values_only=True), start=1):
            if progress is not None and number % 20_000 == 0:
                progress(min(0.99, number / max(ws.max_row or number, number)), f"reading the sheet: row {number:,}")
            if header is None:
                if any(v is not None and str(v).strip() for v in row):
                    header = list(row)
                continue
            rows.append(row)
            numbers.append(number)
            if len(rows) * max(1, len(header)) > MAX_SHEET_CELLS:
                raise _too_big(ws.title, shown, len(rows) * len(header))
    finally:
        book.close()
    if header is None:
        raise DataError(f"sheet {cell(ws.title, 40)} of {shown} is empty")
    while header and (header[-1] is None or not str(header[-1]).strip()) and all(
            len(r) < len(header) or r[len(header) - 1] is None for r in rows):
        header.pop()
    width = len(header)
    cells = pd.DataFrame([list(r[:width]) + [None] * (width - len(r)) for r in rows], columns=range(width),
                         dtype=object) if rows else pd.DataFrame(columns=range(width), dtype=object)
    cells.columns = ["" if h is None else str(h) for h in header]
    return frame_to_table(cells, name, np.asarray(numbers, dtype=int), repair, f"sheet {ws.title!r}")


def _too_big(title: str, shown: str, cells: int) -> DataError:
    return DataError(f"sheet {cell(title, 40)} of {shown} holds {cells:,} cells or more; sheets are read up to "
                     f"{MAX_SHEET_CELLS:,} (about 40 s): save it as CSV or Parquet (read in seconds), or keep the rows "
                     "and columns you need")


__all__ = ["MAX_CELLS", "MAX_SHEET_CELLS", "frame_to_table", "read_parquet", "read_sheet"]
