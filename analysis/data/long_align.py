"""Long tables, second half: the chosen series of a long table aligned on one grid (long_tables.py decides which
rows and names; this module builds the wide values).

`align_fast` handles the common clean table in a few array operations (every series complete on one grid, in time
order, every cell a number: a 1,000-series table of a million rows in about a second); anything else goes through
`align_series`, which regularises each series with repair.py (its checks, repairs and messages, naming the series)
and then puts them on the grid of the span they share.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .frequency import check_supported_frequency, describe_frequency, fit_frequency, grid
from .messages import REPAIR_HINT, cell, plural
from .repair import COLUMNS, RepairReport, regularise


@dataclass(frozen=True)
class SeriesInfo:
    """One series of a long table: its id, its rows in the file, its first and last timestamps."""

    id: str
    rows: int
    first: pd.Timestamp
    last: pd.Timestamp


@dataclass(frozen=True)
class LongTable:
    """What a long table holds: the id column, every series (first-seen order), the series read, the value columns."""

    id_column: str
    series: tuple[SeriesInfo, ...]
    chosen: tuple[str, ...]
    value_columns: tuple[str, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.series)


class SeriesError(DataError):
    """A long table that cannot be read as asked; `long` lists its series (for a picker)."""

    def __init__(self, message: str, long: LongTable, **where):
        super().__init__(message, **where)
        self.long = long


def align_fast(ts: pd.DatetimeIndex, numbers, rows: dict[str, np.ndarray], chosen: list[str], start, end,
               freq: str | None) -> tuple[pd.DatetimeIndex, pd.DataFrame, str] | None:
    """(timestamps [G], values [G, S·C] series-major, freq) when every chosen series has exactly one row per grid
    step of [start, end], in time order, with a number in every cell; None otherwise (the careful path decides)."""
    order = np.concatenate([rows[s] for s in chosen]) if chosen else np.array([], dtype=int)
    if not len(order):
        return None
    stamps = ts[order]
    if stamps.isna().any() or any(np.isin(bad_rows, order).any() for bad_rows, _ in numbers.bad.values()):
        return None
    values = numbers.values.to_numpy(dtype="float64")[order]
    if np.isnan(values).any():
        return None
    if freq is None:
        union = stamps.unique().sort_values()
        if len(union) < 2:
            return None
        freq, share = fit_frequency(union)
        if share < 1.0:
            return None
    check_supported_frequency(freq)
    points = grid(start, end, freq)
    position = points.get_indexer(stamps)
    counts = np.array([len(rows[s]) for s in chosen])
    if (position < 0).any() or (counts != len(points)).any():
        return None
    codes = np.repeat(np.arange(len(chosen)), counts)
    if not ((np.diff(position) > 0) | (np.diff(codes) != 0)).all():
        return None
    g, s, c = len(points), len(chosen), values.shape[1]
    wide = values.reshape(s, g, c).transpose(1, 0, 2).reshape(g, s * c)
    return points, pd.DataFrame(wide, index=points), freq


def _local_bad(bad: dict, rows: np.ndarray) -> dict:
    out = {}
    for c, (bad_rows, raw) in bad.items():
        inside = np.isin(bad_rows, rows)
        if inside.any():
            out[c] = (np.searchsorted(rows, bad_rows[inside]), [r for r, i in zip(raw, inside) if i])
    return out


def _remap(changes: pd.DataFrame, rows: np.ndarray, sid: str, rename: dict[str, str]) -> pd.DataFrame:
    """A series' repair changes in the file's terms: its rows as the file's data rows, its columns as named."""
    out = changes.copy()
    out["rows"] = out["rows"].map(lambda text: "; ".join(str(int(rows[int(r) - 1]) + 1) for r in str(text).split("; ")
                                                         if r) if text else text)
    out["column"] = out["column"].map(lambda c: rename.get(c, c) if c else c)
    out["detail"] = [f"series {sid!r}: {d}" if not c else d for c, d in zip(out["column"], out["detail"])]
    return out


def _edge_fill(values: pd.DataFrame, fill: str) -> pd.DataFrame:
    return values.interpolate(method="time", limit_direction="both") if fill == "interpolate" else \
        values.ffill().bfill()


def align_series(ts, numbers, rows, chosen, names, single, start, end, long, *, raw_times, column, lines, options,
                 dropped_rows) -> tuple[pd.DatetimeIndex, pd.DataFrame, str, RepairReport]:
    """Each chosen series regularised on its own (refused or repaired as `options.repair` says, messages naming
    the series), then put on the grid of the span they share."""
    width = numbers.values.shape[1]
    changes, parts, freqs = [], {}, {}
    if dropped_rows:
        changes.append(pd.DataFrame([{"change": "row dropped (no series id)", "timestamp": ts[r], "column": "",
                                      "value": np.nan, "rows": str(r + 1), "detail": "no series id"}
                                     for r in dropped_rows], columns=COLUMNS))
    for i, sid in enumerate(chosen):
        r = rows[sid]
        rename = dict(zip(numbers.values.columns, names[i * width:(i + 1) * width]))
        try:
            if len(r) < 2:
                raise DataError(f"has {plural(len(r), 'row')} in the span the series share; it needs at least 2")
            stamps, values, freq, report = regularise(
                ts[r], numbers.values.iloc[r].reset_index(drop=True), raw_times=raw_times.iloc[r].reset_index(drop=True),
                column=column, lines=lines[r], fill=options.repair, freq=options.freq,
                bad_cells=_local_bad(numbers.bad, r))
        except DataError as err:
            other = "" if single else "; or leave it out with --series"
            raise SeriesError(f"series {cell(sid, 30)}: {err}{other}", long, column=err.column,
                              row=None if err.row is None or err.row >= len(r) else int(r[err.row]), value=err.value,
                              repairable=err.repairable) from None
        freqs[sid] = freq
        parts[sid] = values.rename(columns=rename)
        changes.append(_remap(report.changes, r, sid, rename))
    steps = dict.fromkeys(freqs.values())
    if len(steps) > 1:
        a = chosen[0]
        b = next(s for s in chosen if freqs[s] != freqs[a])
        raise SeriesError(f"the series step differently: {cell(a, 30)} {describe_frequency(freqs[a])}, "
                          f"{cell(b, 30)} {describe_frequency(freqs[b])}; pick series of one step with --series, or choose the grid with "
                          "--freq and --repair", long, column=long.id_column)
    freq = next(iter(steps))
    first = min(p.index[0] for p in parts.values())
    last = max(p.index[-1] for p in parts.values())
    points = grid(first, last, freq)
    columns = []
    for sid in chosen:
        part = parts[sid]
        on = part.reindex(points)
        absent = points[~points.isin(part.index)]
        if len(absent):
            if not options.repairs:
                raise SeriesError(f"series {cell(sid, 30)} has no row at {absent[0]} inside the span the series "
                                  f"share ({points[0]} to {points[-1]}; {plural(len(absent), 'missing step')}); fill "
                                  f"them with {REPAIR_HINT}" + ("" if single else ", or leave it out with --series"),
                                  long, column=long.id_column, value=sid, repairable=True)
            filled = _edge_fill(on, options.repair)
            log = [{"change": "row added (gap in the grid)", "timestamp": p, "column": "", "value": np.nan, "rows": "",
                    "detail": f"series {sid!r}: {describe_frequency(freq)} grid"} for p in absent]
            log += [{"change": "cell filled (the nearest value (at the edge))", "timestamp": p, "column": c,
                     "value": float(filled.at[p, c]), "rows": "", "detail": ""} for p in absent for c in on.columns]
            changes.append(pd.DataFrame(log, columns=COLUMNS))
            on = filled
        columns.append(on)
    values = pd.concat(columns, axis=1)
    table = pd.concat([c for c in changes if len(c)], ignore_index=True) if any(len(c) for c in changes) else \
        pd.DataFrame(columns=COLUMNS)
    table["timestamp"] = pd.to_datetime(table["timestamp"])
    return points, values, freq, RepairReport(table, options.repair, freq)


__all__ = ["LongTable", "SeriesError", "SeriesInfo", "align_fast", "align_series"]
