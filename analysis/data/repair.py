"""Regular series from real files: refuse what is irregular, or repair it and list every change.

What real exports hold, and what a repair does with it (`fill` = "interpolate" or "ffill"; "none" refuses):

- rows without a readable timestamp: dropped;
- rows out of time order: sorted;
- repeated timestamps (a daylight-saving autumn hour, a duplicated export): merged into one row, the mean of each
  column;
- gaps (a daylight-saving spring hour, a missing week): rows added on the series' grid, their cells missing;
- timestamps off the grid (a reading at 10:02 in an hourly series): moved to the nearest grid point;
- missing cells, and cells that were not numbers: filled, by time interpolation ("interpolate"; the first and last
  rows take the nearest value) or by the last known value ("ffill"; leading cells take the first one).

The grid is the frequency asked for, else the one `frequency.fit_frequency` infers. Every change is one row of the
`RepairReport`: what, when, which column, the new value, the original rows (1-based data rows), in words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .frequency import check_supported_frequency, describe_frequency, fit_frequency, grid, grid_size
from .messages import REPAIR_HINT, cell, plural, rows_phrase

Fill = Literal["none", "interpolate", "ffill"]
FILLS = ("none", "interpolate", "ffill")
COLUMNS = ["change", "timestamp", "column", "value", "rows", "detail"]
MAX_ADDED_SHARE = 0.5  # a grid that would invent more rows than this share of the data is not the data's step
HOW = {"interpolate": "interpolated in time", "ffill": "carried forward"}


@dataclass(frozen=True, eq=False)
class RepairReport:
    """Every change a repair made (one row each): change, timestamp, column, value, rows, detail."""

    changes: pd.DataFrame
    fill: str
    freq: str

    @property
    def empty(self) -> bool:
        return self.changes.empty

    def counts(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.changes["change"].value_counts(sort=False).items()}

    def summary(self) -> list[str]:
        """One line per kind of change, e.g. '1 row added (gaps in the hourly grid): 2021-03-28 02:00'."""
        lines = []
        for change, part in self.changes.groupby("change", sort=False):
            stamps = pd.DatetimeIndex(part["timestamp"].dropna()).unique()
            first = ", ".join(stamps[:3].strftime("%Y-%m-%d %H:%M")) + (", …" if len(stamps) > 3 else "")
            lines.append(f"{len(part):,} × {change}" + (f": {first}" if first else ""))
        return lines

    def to_dict(self) -> dict:
        records = self.changes.assign(timestamp=self.changes["timestamp"].astype(str).replace("NaT", ""))
        return {"fill": self.fill, "freq": self.freq, "counts": self.counts(),
                "changes": records.astype(object).where(records.notna(), None).to_dict(orient="records")}

    @classmethod
    def from_dict(cls, data: dict) -> "RepairReport":
        changes = pd.DataFrame(data.get("changes") or [], columns=COLUMNS)
        changes["timestamp"] = pd.to_datetime(changes["timestamp"].replace("", None), errors="coerce")
        return cls(changes, str(data.get("fill", "none")), str(data.get("freq", "")))


def empty_report(freq: str = "", fill: str = "none") -> RepairReport:
    return RepairReport(pd.DataFrame(columns=COLUMNS), fill, freq)


class _Changes:
    def __init__(self):
        self.rows: list[dict] = []

    def add(self, change: str, *, timestamp=None, column: str = "", value: float = np.nan, rows=(), detail: str = ""):
        self.rows.append({"change": change, "timestamp": timestamp, "column": column, "value": value,
                          "rows": "; ".join(str(int(r) + 1) for r in rows), "detail": detail})

    def frame(self) -> pd.DataFrame:
        table = pd.DataFrame(self.rows, columns=COLUMNS)
        table["timestamp"] = pd.to_datetime(table["timestamp"])
        return table


def regularise(stamps: pd.DatetimeIndex, values: pd.DataFrame, *, raw_times: pd.Series, column: str,
               lines: np.ndarray, fill: Fill, freq: str | None = None,
               bad_cells: dict[str, tuple[np.ndarray, list[str]]] | None = None
               ) -> tuple[pd.DatetimeIndex, pd.DataFrame, str, RepairReport]:
    """Timestamps on a regular grid and their values with no missing cell, or a DataError (fill "none") naming
    the count, the first rows and the option that repairs it. values: [N, C] float64 in file row order (row i is
    data row i); bad_cells: cells already blanked because they were not finite numbers (see numbers.py).

    Returns (timestamps [M], values [M, C] indexed by them, freq, report).
    """
    if fill not in FILLS:
        raise DataError(f"repair must be one of {', '.join(FILLS)}, got {cell(fill)}")
    repair = fill != "none"
    log = _Changes()
    ts = pd.DatetimeIndex(stamps)
    for name, (rows, raw) in (bad_cells or {}).items():
        for r, text in zip(rows, raw):
            log.add("cell not a number (treated as missing)", timestamp=ts[r], column=name, rows=[r],
                    detail=f"was {cell(text)}")
    origin = np.arange(len(ts))  # the data row each current row came from
    ts, values, origin = _drop_unreadable(ts, values, origin, raw_times, column, lines, repair, log)
    ts, values, origin = _sort(ts, values, origin, raw_times, column, lines, repair, log)
    ts, values, groups = _merge_duplicates(ts, values, origin, raw_times, column, lines, repair, log)
    if len(ts) < 2:
        raise DataError(f"need at least 2 timestamps to infer the frequency, got {len(ts)}", column=column)
    freq = freq or fit_frequency(ts)[0]
    check_supported_frequency(freq)
    ts, values = _onto_grid(ts, values, groups, freq, raw_times, column, lines, repair, log)
    values = _fill(ts, values, fill, lines, log)
    values.index = ts
    return ts, values, freq, RepairReport(log.frame(), fill, freq)


def _drop_unreadable(ts, values, origin, raw_times, column, lines, repair, log):
    bad = ts.isna()
    if not bad.any():
        return ts, values, origin
    rows = np.flatnonzero(bad)
    missing = raw_times.iloc[rows].isna().to_numpy()
    if not repair:
        first = rows[0]
        what = "missing timestamp" if missing[0] else f"{cell(raw_times.iloc[first])} is not a date/time"
        raise DataError(f"{what} in column {cell(column)} at {rows_phrase(rows, lines)} "
                        f"({plural(len(rows), 'row')} in all); fix them, or drop those rows with {REPAIR_HINT}",
                        column=column, row=int(first), value=raw_times.iloc[first], repairable=True)
    for r, gone in zip(rows, missing):
        log.add("row dropped (no readable timestamp)", rows=[origin[r]],
                detail="no timestamp" if gone else f"timestamp {cell(raw_times.iloc[r])}")
    keep = ~bad
    return ts[keep], values[keep].reset_index(drop=True), origin[keep]


def _sort(ts, values, origin, raw_times, column, lines, repair, log):
    backwards = np.flatnonzero(np.diff(ts.asi8) < 0)
    if not len(backwards):
        return ts, values, origin
    if not repair:
        row = int(origin[backwards[0] + 1])
        raise DataError(f"timestamps are not in increasing order: {cell(raw_times.iloc[row])} at "
                        f"{rows_phrase([row], lines)} comes before the row above it ({plural(len(backwards), 'place')} "
                        f"in all); sort the file by time, or with {REPAIR_HINT}", column=column, row=row,
                        value=raw_times.iloc[row], repairable=True)
    order = np.argsort(ts.asi8, kind="stable")
    log.add("rows sorted by time", rows=origin[backwards + 1][:20],
            detail=f"{plural(len(backwards), 'row')} came before the row above")
    return ts[order], values.iloc[order].reset_index(drop=True), origin[order]


def _merge_duplicates(ts, values, origin, raw_times, column, lines, repair, log):
    """Rows with one timestamp become one row (the mean of each column); groups: the data rows of each row."""
    duplicated = ts.duplicated(keep=False)
    if not duplicated.any():
        return ts, values, [[int(o)] for o in origin]
    repeats = np.flatnonzero(ts.duplicated(keep="first"))
    if not repair:
        row = int(origin[repeats[0]])
        raise DataError(f"duplicated timestamp {cell(raw_times.iloc[row])} at {rows_phrase([row], lines)} "
                        f"({plural(len(repeats), 'repeated row')} in all, e.g. a daylight-saving autumn hour); remove "
                        f"them, or merge them (the mean) with {REPAIR_HINT}", column=column, row=row,
                        value=raw_times.iloc[row], repairable=True)
    keys = pd.Index(ts)
    merged = values.groupby(keys, sort=False).mean()
    groups = pd.Series(origin).groupby(keys, sort=False).agg(list)
    for stamp, rows in groups.items():
        if len(rows) > 1:
            log.add("duplicate timestamps merged (mean)", timestamp=stamp, rows=rows,
                    detail=f"{len(rows)} rows with this timestamp")
    return pd.DatetimeIndex(merged.index), merged.reset_index(drop=True), list(groups)


def _onto_grid(ts, values, groups, freq, raw_times, column, lines, repair, log):
    if repair and grid_size(ts[0], ts[-1], freq) > (1 + MAX_ADDED_SHARE) * len(ts) + 2:
        raise DataError(f"the timestamps are too irregular to repair as {describe_frequency(freq)}: from {ts[0]} to "
                        f"{ts[-1]} that grid has about {grid_size(ts[0], ts[-1], freq):,} rows for {len(ts):,} "
                        "timestamps; choose the step with --freq (e.g. --freq D)", column=column)
    points = grid(ts[0], ts[-1], freq)
    position = points.get_indexer(ts)
    off = position < 0
    if not off.any() and len(points) == len(ts):
        return ts, values
    added = len(points) - (len(ts) - int(off.sum()))
    if not repair:
        gaps = np.flatnonzero(np.diff(points.get_indexer(ts[~off])) > 1)
        first_off = int(np.argmax(off)) if off.any() else None
        row = groups[first_off][0] if first_off is not None else groups[int(np.flatnonzero(~off)[gaps[0] + 1])][0]
        where = rows_phrase([row], lines)
        problem = (f"{cell(raw_times.iloc[row])} at {where} is off the {describe_frequency(freq)} grid"
                   if first_off is not None else
                   f"{cell(raw_times.iloc[row])} at {where} comes after a gap")
        stray = f" and {plural(int(off.sum()), 'stray timestamp')}" if off.any() else ""
        raise DataError(f"irregular spacing: {problem}; {plural(added, 'missing step')}{stray} in all (the series "
                        f"steps {describe_frequency(freq)}); fill the gaps with {REPAIR_HINT}", column=column, row=row,
                        value=raw_times.iloc[row], repairable=True)
    if added > MAX_ADDED_SHARE * len(ts) + 2:
        raise DataError(f"the timestamps are too irregular to repair as {describe_frequency(freq)}: it would add "
                        f"{added:,} rows to {len(ts):,}; choose the step with --freq (e.g. --freq D)", column=column)
    if off.any():
        nearest = _nearest(points, ts[off])
        for i, to in zip(np.flatnonzero(off), nearest):
            log.add("timestamp moved to the grid", timestamp=points[to], rows=groups[i],
                    detail=f"from {ts[i]} ({describe_frequency(freq)} grid)")
        position = position.copy()
        position[off] = nearest
    frame = values.groupby(position).mean()  # stray points landing on one grid point: their mean
    frame = frame.reindex(np.arange(len(points)))
    have = np.zeros(len(points), dtype=bool)
    have[position] = True
    for p in np.flatnonzero(~have):
        log.add("row added (gap in the grid)", timestamp=points[p], detail=f"{describe_frequency(freq)} grid")
    return points, frame.reset_index(drop=True)


def _nearest(points: pd.DatetimeIndex, stamps: pd.DatetimeIndex) -> np.ndarray:
    right = np.clip(points.searchsorted(stamps), 0, len(points) - 1)
    left = np.clip(right - 1, 0, len(points) - 1)
    closer_left = np.abs((stamps - points[left]).asi8) <= np.abs((points[right] - stamps).asi8)
    return np.where(closer_left, left, right)


def _fill(ts, values, fill, lines, log):
    missing = values.isna()
    if not missing.to_numpy().any():
        return values
    counts = missing.sum()
    counts = counts[counts > 0]
    if fill == "none":  # nothing was moved: row p is data row p
        c = counts.index[0]
        rows = np.flatnonzero(missing[c].to_numpy())
        per_column = ", ".join(f"{n:,} in {cell(k)}" for k, n in list(counts.items())[:4])
        raise DataError(f"missing values: {per_column}{', …' if len(counts) > 4 else ''} (the first in {cell(c)} "
                        f"at {ts[rows[0]]}, {rows_phrase(rows, lines)}); fill them with {REPAIR_HINT}", column=c,
                        row=int(rows[0]), repairable=True)
    timed = values.set_axis(ts)
    filled = timed.interpolate(method="time", limit_direction="both") if fill == "interpolate" else \
        timed.ffill().bfill()
    for c in counts.index:
        known = np.flatnonzero(values[c].notna().to_numpy())
        for p in np.flatnonzero(missing[c].to_numpy()):
            how = HOW[fill]
            if len(known) and (p < known[0] or (fill == "interpolate" and p > known[-1])):
                how = "the nearest value (at the edge)" if fill == "interpolate" else "carried back (no earlier value)"
            log.add(f"cell filled ({how})", timestamp=ts[p], column=c, value=float(filled[c].iloc[p]))
    return filled.reset_index(drop=True)


__all__ = ["FILLS", "Fill", "RepairReport", "empty_report", "regularise"]
