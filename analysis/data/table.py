"""Bytes → a table of cells: decoding, the separator, the header (blank or repeated names), blank lines.

The cells are read by pandas' C parser with its own type inference, so a file of plain numbers comes back as
float columns without a per-column loop (10,000 columns × 1,000 rows in about a second); only columns that are
not plain numbers stay as text for `analysis.data.numbers` and `analysis.data.timestamps` to read.
"""
from __future__ import annotations

import csv
import io
import logging
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Union

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .messages import REPAIR_HINT, cell, names_phrase, short_name

logger = logging.getLogger(__name__)

Source = Union[str, os.PathLike, bytes, IO[bytes]]
Progress = Callable[[float, str], None]  # (fraction done, what is being done)
CHUNK_ROWS = 20_000  # rows per chunk when a big file is read with progress
CHUNKED_BYTES = 8 << 20  # files larger than this are read in chunks, reporting progress
MAX_BYTES = 1 << 28  # the largest file, or decompressed content, that is read (checked before reading): 256 MiB of CSV
# text is about a minute and 2 GB of memory on two cores; larger data belongs in Parquet (read by its metadata)


@dataclass(frozen=True, eq=False)
class RawTable:
    """A CSV's cells before interpretation.

    cells:    one column per header name (made unique), pandas-inferred dtypes (float/int where every cell is a
              plain number or missing, else object holding strings); blank lines removed
    lines:    [N] the 1-based line of the file each row sits on (the header is line 1; a sheet's row numbers)
    renamed:  (position, old name, new name) for header names that were blank or repeated
    reread:   (columns) → those columns' cells as the file's text (None: missing), for a CSV
    typed:    a spreadsheet or Parquet file: its number cells are numbers, its date cells dates
    """

    name: str
    separator: str
    cells: pd.DataFrame
    lines: np.ndarray
    renamed: tuple[tuple[int, str, str], ...] = ()
    reread: Callable[[list[str]], pd.DataFrame] | None = None
    typed: bool = False


def _file_bytes(path: Path) -> bytes:
    """A regular file's bytes; DataError naming a folder, a named pipe, a device or a socket as such (reading one
    could block or never end), a missing or unreadable file, or one over MAX_BYTES (checked before reading)."""
    shown = cell(str(path), 120)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise DataError(f"file not found: {shown}") from None
    except OSError as err:
        raise DataError(f"cannot read {shown}: {err.strerror or err}") from None
    kinds = ((stat.S_ISDIR, "a folder, not a file; give the data file inside it"),
             (stat.S_ISFIFO, "a named pipe (FIFO), not a file; save the data to a file and give that"),
             (stat.S_ISCHR, "a device, not a file"), (stat.S_ISBLK, "a block device, not a file"),
             (stat.S_ISSOCK, "a socket, not a file"))
    for test, what in kinds:
        if test(info.st_mode):
            raise DataError(f"{shown} is {what}")
    if info.st_size > MAX_BYTES:
        raise DataError(f"{shown} is {info.st_size >> 20:,} MiB; the largest file read is {MAX_BYTES >> 20} MiB (about a "
                        "minute on two cores): save the data as Parquet, or keep the columns and rows you need")
    try:
        return path.read_bytes()
    except OSError as err:
        raise DataError(f"cannot read {shown}: {err.strerror or err}") from None


def read_source(source: Source) -> tuple[bytes, str]:
    """The raw bytes of a path, bytes object or binary file-like, and a display name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "upload"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _file_bytes(path), path.name
    elif hasattr(source, "getvalue"):  # UploadedFile, BytesIO: the whole buffer, wherever the cursor is
        data = source.getvalue()
    elif hasattr(source, "read"):
        if getattr(source, "seekable", lambda: False)():
            source.seek(0)
        data = source.read(MAX_BYTES + 1)
    else:
        raise DataError(f"cannot read a CSV from a {type(source).__name__}; pass a path, bytes or a file")
    if isinstance(data, str):
        data = data.encode("utf-8")
    raw_name = getattr(source, "name", None)
    name = Path(raw_name).name if isinstance(raw_name, str) and raw_name else "upload"
    if len(data) > MAX_BYTES:
        raise DataError(f"{short_name(name)} is over {MAX_BYTES >> 20} MiB, the largest file read (about a minute of "
                        "reading on two cores); save the data as Parquet, or keep the rows and columns you need")
    return bytes(data), name


def decode(data: bytes) -> str:
    """UTF-8 text (a leading byte-order mark is dropped), or UTF-16 with its byte-order mark (Excel's "Unicode
    text"); DataError with the byte offset otherwise."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise DataError("the file starts like UTF-16 text but is not valid UTF-16; save it as UTF-8") from None
    if not data.strip():
        raise DataError("the file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        offset = err.start + bom  # utf-8-sig counts from after the byte-order mark
        line = data[:offset].count(b"\n") + 1
        byte = data[offset]
        raise DataError(
            f"the file is not UTF-8 text: byte 0x{byte:02x} at byte offset {offset} (line {line}) "
            "is not valid UTF-8; save the file as UTF-8 (in Excel: 'CSV UTF-8') and load it again",
            row=line - 2 if line >= 2 else None,
            value=f"0x{byte:02x}",
        ) from None


def guess_separator(text: str) -> str:
    """',' unless the header has none and has ';' or a tab (European Excel exports)."""
    header = text.lstrip().split("\n", 1)[0]
    if "," not in header:
        for sep in (";", "\t"):
            if sep in header:
                return sep
    return ","


def unique_names(names: list[str], repair: bool) -> tuple[list[str], tuple[tuple[int, str, str], ...]]:
    """Header names stripped; blank names become 'column_<n>' and repeated ones '<name>_2', '<name>_3' (with
    `repair`; without, a repeated name is a DataError naming both positions)."""
    names = [str(name).strip() for name in names]
    renamed = []
    for i, name in enumerate(names):
        if not name:
            names[i] = f"column_{i + 1}"
            renamed.append((i, "", names[i]))
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            if not repair:
                raise DataError(f"columns {seen[name] + 1} and {i + 1} are both named {cell(name)}; rename one, or "
                                f"number repeated names with {REPAIR_HINT}", column=name, repairable=True)
            k = 2
            while f"{name}_{k}" in names or f"{name}_{k}" in seen:
                k += 1
            names[i] = f"{name}_{k}"
            renamed.append((i, name, names[i]))
        seen.setdefault(names[i], i)
    return names, tuple(renamed)


def _header(text: str, sep: str, repair: bool) -> tuple[list[str], tuple[tuple[int, str, str], ...]]:
    first = text.lstrip("\n\r").split("\n", 1)[0]
    try:
        names = next(csv.reader([first], delimiter=sep))
    except (csv.Error, StopIteration):
        raise DataError("the file's first line is not a readable CSV header") from None
    return unique_names(names, repair)


def read_table(text: str, name: str, *, repair: bool = False, progress: Progress | None = None) -> RawTable:
    """The cells of a CSV's text (see RawTable). DataError for a file without data rows or a broken line."""
    sep = guess_separator(text)
    names, renamed = _header(text, sep, repair)
    options = dict(sep=sep, header=0, names=names, skip_blank_lines=False, skipinitialspace=True, index_col=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        cells = _parse(text, name, options, progress)
    if any("does not match length of data" in str(w.message) for w in caught):
        line = _first_long_line(text, sep, len(names))
        raise DataError(f"line {line} has more fields than the header's {len(names)}; a separator inside a value "
                        f"must be quoted, or a header name is missing ({cell(name, 60)})")
    lines = np.arange(len(cells)) + 2  # the header is line 1 (blank lines stay rows until here)
    blank = cells.isna().all(axis=1).to_numpy()
    if blank.any():
        logger.info("%s: skipped %d empty lines", name, int(blank.sum()))
        cells = cells.loc[~blank].reset_index(drop=True)
        lines = lines[~blank]
    if len(cells) == 0:
        raise DataError(f"the file has a header but no data rows ({cell(name, 60)}: {names_phrase(names, 100)})")
    kept = np.flatnonzero(~blank)

    def reread(columns: list[str]) -> pd.DataFrame:
        again = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, usecols=columns,
                            **{k: v for k, v in options.items() if k != "index_col"})
        return again.iloc[kept].reset_index(drop=True).apply(lambda c: c.where(c.str.strip() != "", None))

    return RawTable(name, sep, cells, lines, renamed, reread)


def _first_long_line(text: str, sep: str, width: int) -> int:
    for number, fields in enumerate(csv.reader(io.StringIO(text), delimiter=sep), start=1):
        if len(fields) > width:
            return number
    return 2


def _parse(text: str, name: str, options: dict, progress: Progress | None) -> pd.DataFrame:
    try:
        if progress is not None and len(text) > CHUNKED_BYTES:
            total = max(1, text.count("\n"))
            chunks = []
            for chunk in pd.read_csv(io.StringIO(text), chunksize=CHUNK_ROWS, **options):
                chunks.append(chunk)
                progress(min(1.0, CHUNK_ROWS * len(chunks) / total), f"reading rows of {name}")
            cells = pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame(columns=options["names"])
        else:
            cells = pd.read_csv(io.StringIO(text), low_memory=False, **options)
    except pd.errors.EmptyDataError:
        raise DataError("the file is empty") from None
    except pd.errors.ParserError as err:
        raise DataError(f"could not read the file as CSV: {cell(err, 160)} ({cell(name, 60)})") from None
    return cells


def is_text(column: pd.Series) -> bool:
    """Whether pandas left a column as text (object or string dtype): not every cell was a plain number."""
    return pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)


def text_cells(column: pd.Series) -> pd.Series:
    """An object column's cells as stripped strings, missing (NaN or blank) as None."""
    present = column.notna()
    out = pd.Series(None, index=column.index, dtype=object)
    stripped = column[present].astype(str).str.strip()
    out[present] = stripped.where(stripped != "", None)
    return out


__all__ = ["CHUNKED_BYTES", "MAX_BYTES", "Progress", "RawTable", "Source", "decode", "guess_separator",
           "read_source", "read_table", "is_text", "text_cells", "unique_names"]
