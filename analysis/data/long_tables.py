"""Long ("tidy") tables: one row per (series, time), the `unique_id, ds, y` form of neuralforecast and darts and of
most database exports, read as one series or as columns per series.

- The id column is named (`--id-column`) or found by its content: a text column (or a whole-number column named
  like an id) whose values repeat while the timestamps repeat once per value; the note says so.
- `--series A` reads that series with its value columns as they are named; `--series A,B` (or no `--series`: every
  series) makes columns named `<series>.<column>` after aligning the timestamps: series covering different spans
  are cut to the span they share (the note names the series cut and by how many rows), and a series missing steps
  inside that span is refused with the `--repair` way out, naming the series.
- Within each series the usual checks and repairs apply (repair.py); their messages name the series.

`SeriesError` carries the table's series (ids, lengths, spans) so that the app can offer them even when reading
every series was refused.
"""
from __future__ import annotations

import csv
import re

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .frequency import describe_frequency
from .long_align import LongTable, SeriesError, SeriesInfo, align_fast, align_series
from .messages import REPAIR_HINT, cell, names_phrase, plural, rows_phrase
from .repair import RepairReport
from .table import RawTable, is_text, text_cells

ID_NAME = re.compile(r"^(unique_?id|id|.*_id|series|item|symbol|ticker|station|sensor|site|key|code|country|region|"
                     r"store|product|sku|entity|location|name|group)s?$", re.IGNORECASE)
NUMBER_LIKE = re.compile(r"^[+-]?[\d.,' \u00a0]+([eE][+-]?\d+)?$")
MIN_REPEATED_SHARE = 0.2  # of rows whose timestamp an earlier row has: below it, repeats are a file's mistakes
MAX_SAME_KEY_SHARE = 0.01  # of rows repeating an (id, timestamp) pair: a repair merges them


def id_strings(column: pd.Series) -> pd.Series:
    """A column's cells as series ids: stripped text, whole numbers without '.0'; None where missing."""
    if is_text(column):
        return text_cells(column.map(lambda v: v if v is None or isinstance(v, str) or pd.isna(v) else _number(v)))
    return column.map(lambda v: None if pd.isna(v) else _number(v)).astype(object)


def table_ids(table: RawTable, column: str) -> pd.Series:
    """The ids of a column as the file wrote them: a CSV's cells are read again as text, so that 'NA' (Namibia),
    'null' or '007' stay ids rather than becoming missing or 7."""
    cache = table.__dict__.setdefault("_ids", {})  # detection and reading ask for the same column
    if column not in cache:
        cache[column] = text_cells(table.reread([column])[column]) if table.reread is not None else \
            id_strings(table.cells[column])
    return cache[column]


def _stamp(t: pd.Timestamp) -> str:
    return f"{t:%Y-%m-%d}" if t == t.normalize() else str(t)


def _number(v) -> str:
    return str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v)


def find_id_column(table: RawTable, times, requested: str | None) -> tuple[str | None, str | None]:
    """(the id column or None for a wide table, a note when it was found by content)."""
    columns = [c for c in table.cells.columns if c not in times.sources]
    if requested is not None:
        if requested in times.sources:
            raise DataError(f"--id-column {cell(requested)} is the datetime column; name the column that says which "
                            "series a row belongs to", column=requested)
        if requested not in columns:
            raise DataError(f"there is no column named {cell(requested)} (--id-column); the columns are "
                            f"{names_phrase(columns)}", column=requested)
        return requested, None
    ts = pd.Series(times.values)
    present = ts.notna().to_numpy()
    if present.sum() < 4 or ts[present].duplicated().mean() < MIN_REPEATED_SHARE:
        return None, None
    candidates = []
    for position, c in enumerate(columns):
        column = table.cells[c]
        named = bool(ID_NAME.match(c.strip()))
        plain = pd.api.types.is_bool_dtype(column) or pd.api.types.is_datetime64_any_dtype(column)
        if plain or not (is_text(column) or (named and (pd.api.types.is_integer_dtype(column)
                                                        or column.isna().all()))):
            continue
        ids = table_ids(table, c)[present]
        if ids.isna().mean() > 0.5 or (not named and ids.dropna().str.match(NUMBER_LIKE).mean() > 0.9):
            continue
        n = ids.nunique()
        if n < 2 or n > present.sum() / 2:
            continue
        pairs = pd.DataFrame({"id": ids.to_numpy(), "t": ts[present].to_numpy()})
        repeated = float(pairs.duplicated().mean())
        if repeated > MAX_SAME_KEY_SHARE:
            continue
        candidates.append((repeated, n, position, c))  # one row per (id, time) first, then the fewest ids
    if not candidates:
        return None, None
    c = min(candidates)[3]
    ids = table_ids(table, c).dropna().unique()
    others = [name for *_, name in sorted(candidates) if name != c]
    also = f" (also possible: {names_phrase(others, 60)})" if others else ""
    return c, (f"{c!r} read as the series id{also}: {plural(len(ids), 'series', 'series')} ({names_phrase(ids, 60)}), "
               "the timestamps repeat per series; --id-column names another, --series picks series")


def pick(requested: tuple[str, ...] | None, available: list[str], long: LongTable) -> list[str]:
    """The series asked for (each item an id, or ids separated by commas, quoted as in CSV when an id holds one)."""
    if not requested:
        return list(available)
    known, out = set(available), []
    for item in requested:
        parts = [item] if item in known else [p.strip() for p in next(csv.reader([item], skipinitialspace=True), [])]
        for part in parts:
            if part not in known:
                raise SeriesError(f"no series {cell(part)} in column {cell(long.id_column, 30)}; it has "
                                  f"{plural(len(available), 'series', 'series')}: {names_phrase(available)}", long,
                                  column=long.id_column, value=part)
            if part not in out:
                out.append(part)
    return out


def _infos(ids: pd.Series, ts: pd.DatetimeIndex) -> tuple[SeriesInfo, ...]:
    frame = pd.DataFrame({"id": ids.to_numpy(), "t": ts}).dropna(subset=["id"])
    stats = frame.groupby("id", sort=False)["t"].agg(["size", "min", "max"])
    return tuple(SeriesInfo(str(i), int(r["size"]), r["min"], r["max"]) for i, r in stats.iterrows())


def column_names(chosen: list[str], value_columns: list[str], single: bool) -> list[str]:
    """'<series>.<column>' for each chosen series and value column (the columns as they are for one series);
    control characters in ids become spaces, and a name two pairs would share gets '_2'."""
    if single:
        return list(value_columns)
    names, seen = [], set()
    for sid in chosen:
        for c in value_columns:
            name = re.sub(r"[\x00-\x1f\x7f]", " ", f"{sid}.{c}")
            base, k = name, 2
            while name in seen:
                name, k = f"{base}_{k}", k + 1
            seen.add(name)
            names.append(name)
    return names


def read_long(table: RawTable, times, id_column: str, numbers, *, raw_times: pd.Series, options, note: str | None
              ) -> tuple[pd.DatetimeIndex, pd.DataFrame, str, RepairReport, list[str], LongTable]:
    """(timestamps, values, freq, repair report, notes, LongTable) of a long table (see the module docstring)."""
    ids = table_ids(table, id_column)
    ts = pd.DatetimeIndex(times.values)
    long = LongTable(id_column, _infos(ids, ts), (), tuple(numbers.values.columns))
    missing = np.flatnonzero(ids.isna().to_numpy())
    keep = np.ones(len(ids), dtype=bool)
    dropped_rows: list[int] = []
    if len(missing):
        if not options.repairs:
            raise SeriesError(f"missing series id in column {cell(id_column)} at {rows_phrase(missing, table.lines)} "
                              f"({plural(len(missing), 'row')} in all); fill them, or drop those rows with "
                              f"{REPAIR_HINT}", long, column=id_column, row=int(missing[0]), repairable=True)
        keep[missing] = False
        dropped_rows = list(missing)
    chosen = pick(options.series, list(long.ids), long)
    long = LongTable(id_column, long.series, tuple(chosen), long.value_columns)
    infos = {s.id: s for s in long.series}
    start = max(infos[s].first for s in chosen)
    end = min(infos[s].last for s in chosen)
    if pd.isna(start) or pd.isna(end) or start > end:
        spans = ", ".join(f"{cell(s, 20)} {_stamp(infos[s].first)}…{_stamp(infos[s].last)}" for s in chosen[:4])
        raise SeriesError(f"the series share no time span ({spans}{', …' if len(chosen) > 4 else ''}); pick series "
                          "that overlap with --series (in the app: Series)", long, column=id_column)
    single = len(chosen) == 1
    names = column_names(chosen, list(numbers.values.columns), single)
    inside = np.asarray(ts.isna() | ((ts >= start) & (ts <= end)))
    codes, uniques = pd.factorize(ids)  # one pass over the ids (-1: missing), not one per series
    position = {u: i for i, u in enumerate(uniques)}
    outside = np.bincount(codes[keep & ~inside], minlength=len(uniques))
    cut = {s: int(outside[position[s]]) for s in chosen}
    notes = [n for n in (note,) if n]
    if any(cut.values()):
        shown = ", ".join(f"{cell(s, 20)} by {n:,}" for s, n in cut.items() if n)
        notes.append(f"series cut to the span they share ({_stamp(start)} to {_stamp(end)}): {shown} rows")
    selected = np.flatnonzero(keep & inside)
    grouped = selected[np.argsort(codes[selected], kind="stable")]
    pieces = np.split(grouped, np.cumsum(np.bincount(codes[selected], minlength=len(uniques)))[:-1])
    rows = {s: pieces[position[s]] for s in chosen}
    fast = None if options.repairs or dropped_rows else align_fast(ts, numbers, rows, chosen, start, end,
                                                                   options.freq)
    if fast is not None:
        stamps, values, freq = fast
        values.columns = names
        report = RepairReport(pd.DataFrame(columns=["change", "timestamp", "column", "value", "rows", "detail"]),
                              options.repair, freq)
    else:
        stamps, values, freq, report = align_series(ts, numbers, rows, chosen, names, single, start, end, long,
                                                    raw_times=raw_times, column=times.column, lines=table.lines,
                                                    options=options, dropped_rows=dropped_rows)
    if len(chosen) < len(long.ids):
        notes.append(f"{plural(len(chosen), 'series', 'series')} of {len(long.ids):,} read "
                     f"({names_phrase(chosen, 60)}); --series picks others")
    return stamps, values, freq, report, notes, long


def describe_series(info: SeriesInfo, freq: str | None = None) -> str:
    """'A: 120 rows, 2001-01-01 → 2010-12-01' (for pickers)."""
    step = f", {describe_frequency(freq)}" if freq else ""
    return f"{info.id}: {info.rows:,} rows, {info.first:%Y-%m-%d} → {info.last:%Y-%m-%d}{step}"


__all__ = ["LongTable", "SeriesError", "SeriesInfo", "column_names", "describe_series", "find_id_column",
           "id_strings", "pick", "read_long"]
