"""Files as people keep data: CSV text, compressed CSV (.csv.gz, .bz2, .xz, a .zip holding one file), spreadsheets
(.xlsx / .xlsm, the first sheet or a named one) and Parquet, all into one `RawTable` for the same checks, repairs
and messages.

The kind is told by the bytes, not the name (a study's Ray task gets bytes only). Sizes are checked before
anything is unpacked or parsed: a compressed stream is read at most to MAX_BYTES, a zip's and a spreadsheet's
members by their declared sizes (and then read no further than them), a Parquet file by its metadata. A
spreadsheet is read with openpyxl in read-only mode with `data_only=True`: a formula cell gives the value Excel
saved with it, and no formula is ever evaluated (a cell whose formula was never computed is empty). A zip member
whose path leaves the archive ('../x.csv', '/etc/x') is refused; nothing is ever extracted to disk.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from pathlib import PurePosixPath

from informer_lab.analysis.errors import DataError

from .messages import cell, names_phrase, plural, short_name
from .spreadsheets import read_parquet, read_sheet
from .table import MAX_BYTES, Progress, RawTable, decode, read_table

MAX_RATIO = 200  # a zip member unpacking to more than this many times its packed size is refused (a zip bomb)
JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db")
STREAMS = {b"\x1f\x8b": ("gzip", gzip.GzipFile), b"BZh": ("bzip2", bz2.BZ2File), b"\xfd7zXZ\x00": ("xz", lzma.LZMAFile)}
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Excel 97–2003 (.xls) and other compound documents


def kind_of(data: bytes) -> str:
    """'csv', 'gzip' / 'bzip2' / 'xz', 'zip', 'xlsx', 'ods', 'parquet' or 'xls', from the bytes."""
    for magic, (kind, _) in STREAMS.items():
        if data.startswith(magic):
            return kind
    if data.startswith(b"PAR1") and data.endswith(b"PAR1"):
        return "parquet"
    if data.startswith(OLE):
        return "xls"
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        try:
            names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return "zip"
        if "xl/workbook.xml" in names:
            return "xlsx"
        if "mimetype" in names and "content.xml" in names:
            return "ods"
        return "zip"
    return "csv"


def open_table(data: bytes, name: str, *, sheet: str | None = None, repair: bool = False,
               progress: Progress | None = None, depth: int = 0) -> RawTable:
    """The cells of a file's bytes, whatever its kind (see the module docstring)."""
    kind = kind_of(data)
    if sheet is not None and kind != "xlsx":
        raise DataError(f"--sheet {cell(sheet, 40)} is for spreadsheets (.xlsx), and {cell(short_name(name))} is "
                        f"{'a ' + kind.upper() + ' file' if kind != 'csv' else 'CSV text'}")
    if kind in STREAMS_BY_KIND:
        if depth:
            raise DataError(f"{cell(short_name(name))} holds another compressed file; unpack it once and give the data")
        inner = _unpack_stream(data, name, kind, progress)
        return open_table(inner, _strip_suffix(name), repair=repair, progress=progress, depth=depth + 1)
    if kind == "zip":
        if depth:
            raise DataError(f"{cell(short_name(name))} holds another archive; unpack it and give the data file")
        inner, inner_name = _zip_member(data, name)
        return open_table(inner, inner_name, repair=repair, progress=progress, depth=depth + 1)
    if kind == "xlsx":
        return read_sheet(data, name, sheet, repair, progress)
    if kind == "parquet":
        return read_parquet(data, name, repair)
    if kind in ("xls", "ods"):
        what = "an Excel 97–2003 .xls file" if kind == "xls" else "an OpenDocument spreadsheet"
        raise DataError(f"{cell(short_name(name))} is {what}, which is not read; save it as .xlsx or CSV")
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix in ("xlsx", "xlsm", "parquet", "gz", "zip", "bz2", "xz"):
        try:
            text = decode(data)
        except DataError:
            raise DataError(f"{cell(short_name(name))} is named .{suffix} but is not such a file (its bytes are "
                            "neither that nor text); save it again, or give a CSV") from None
    else:
        text = decode(data)
    return read_table(text, name, repair=repair, progress=progress)


STREAMS_BY_KIND = {kind: opener for kind, opener in STREAMS.values()}


def _strip_suffix(name: str) -> str:
    for suffix in (".gz", ".gzip", ".bz2", ".xz"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or name
    return name


UNPACK_CHUNK = 8 << 20


def _unpack_stream(data: bytes, name: str, kind: str, progress: Progress | None = None) -> bytes:
    """The content of a gzip / bzip2 / xz stream, read in chunks (progress against the size gzip declares, ISIZE)
    and refused as soon as it passes MAX_BYTES, before the rest is unpacked."""
    expected = int.from_bytes(data[-4:], "little") if kind == "gzip" and len(data) >= 4 else 0  # mod 2^32
    parts, size = [], 0
    try:
        opener = STREAMS_BY_KIND[kind]
        with (opener(fileobj=io.BytesIO(data)) if kind == "gzip" else opener(io.BytesIO(data))) as stream:
            while True:
                chunk = stream.read(UNPACK_CHUNK)
                if not chunk:
                    break
                parts.append(chunk)
                size += len(chunk)
                if size > MAX_BYTES:
                    raise DataError(f"{cell(short_name(name))} unpacks to more than {MAX_BYTES >> 20} MiB, the largest "
                                    "text read (about a minute on two cores); save the data as Parquet, or keep the "
                                    "rows and columns you need")
                if progress is not None:
                    progress(min(0.99, size / max(expected, size + 1)) if expected else 0.0,
                             f"unpacking ({size >> 20} MiB so far)")
    except (OSError, EOFError, lzma.LZMAError, ValueError) as err:
        raise DataError(f"{cell(short_name(name))} is not a readable {kind} file: {cell(err, 80)}") from None
    return b"".join(parts)


def _unsafe(path: str) -> bool:
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":") or ".." in parts


def _zip_member(data: bytes, name: str) -> tuple[bytes, str]:
    """The one data file of a zip (bytes, its name); DataError for none, several, an unsafe path, an encrypted or
    oversized member."""
    shown = cell(short_name(name))
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise DataError(f"{shown} is not a readable zip file: {cell(err, 80)}") from None
    unsafe = [i.filename for i in infos if _unsafe(i.filename)]
    if unsafe:
        raise DataError(f"{shown} holds a path outside the archive ({cell(unsafe[0], 60)}); it is not read")
    files = [i for i in infos if not i.is_dir() and not any(j in i.filename for j in JUNK)
             and not PurePosixPath(i.filename).name.startswith("._")]
    if len(files) != 1:
        listed = f": {names_phrase([i.filename for i in files], 100)}" if files else ""
        raise DataError(f"{shown} holds {plural(len(files), 'file')}{listed}; a zip is read when it holds exactly one "
                        "data file (unpack it and give the one you mean)")
    info = files[0]
    if info.flag_bits & 0x1:
        raise DataError(f"{shown} is encrypted; unpack it and give the data file")
    if info.file_size > MAX_BYTES or info.file_size > MAX_RATIO * max(info.compress_size, 1) + (1 << 20):
        raise DataError(f"{shown}: {cell(info.filename, 60)} unpacks to {info.file_size / 1e6:,.0f} MB "
                        f"({info.file_size / max(info.compress_size, 1):,.0f} times its packed size); it is not read")
    try:
        with archive.open(info) as member:
            inner = member.read(info.file_size + 1)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as err:
        raise DataError(f"{shown}: {cell(info.filename, 60)} cannot be unpacked: {cell(err, 80)}") from None
    if len(inner) > info.file_size:
        raise DataError(f"{shown}: {cell(info.filename, 60)} unpacks to more than it declares; it is not read")
    return inner, PurePosixPath(info.filename).name


__all__ = ["kind_of", "open_table"]
