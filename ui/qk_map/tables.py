"""Shaping for the Query/key map screen: the points to draw (capped), the colour of each, a clicked point."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.qk_map import QKMap, qk_map_table

MAX_DRAWN = 60_000  # points sent to the browser; WebGL draws more, but the page's JSON grows ~60 bytes a point
COLOURS = {"kind": "query or key", "position": "input step", "hour": "hour of day", "weekday": "day of week",
           "mbar": "sampled M̄ (queries)", "window": "window"}


def drawn_points(m: QKMap, seed: int = 0, limit: int = MAX_DRAWN) -> pd.DataFrame:
    """The map's table with a `point` column (its row in the whole map), cut to at most `limit` points by a
    seeded uniform draw that keeps every ProbSparse-selected query (they are what the map is about)."""
    table = qk_map_table(m).assign(point=np.arange(m.n_points))
    if len(table) <= limit:
        return table
    keep = table["selected"].to_numpy(copy=True)  # pandas 3 hands out read-only views of its columns
    rest = np.flatnonzero(~keep)
    room = max(0, limit - int(keep.sum()))
    chosen = np.random.default_rng(seed).choice(rest, size=min(room, len(rest)), replace=False)
    keep[chosen] = True
    return table[keep].reset_index(drop=True)


def colour_values(points: pd.DataFrame, by: str) -> np.ndarray:
    """The value each point is coloured by (NaN where it has none, e.g. keys for M̄ or points without a time)."""
    stamps = pd.DatetimeIndex(points["timestamp"])
    if by == "position":
        return points["step"].to_numpy(float)
    if by == "hour":
        return np.asarray(stamps.hour, dtype=float)
    if by == "weekday":
        return np.asarray(stamps.dayofweek, dtype=float)
    if by == "mbar":
        return points["mbar"].to_numpy(float)
    if by == "window":
        return points["window"].to_numpy(float)
    raise ValueError(f"unknown colouring {by!r}")


def clicked_point(selection, n_points: int) -> int | None:
    """The map point a click chose (its customdata), or None."""
    try:
        points = selection["selection"]["points"]
        point = int(points[0]["customdata"][0] if isinstance(points[0]["customdata"], list)
                    else points[0]["customdata"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return point if 0 <= point < n_points else None


def point_summary(m: QKMap, point: int) -> dict:
    """What a point is: kind, window, position, step, timestamp, selected, M̄."""
    return {"kind": "query" if m.is_query[point] else "key", "window": int(m.window[point]),
            "position": int(m.position[point]), "step": int(m.step[point]), "timestamp": m.timestamp[point],
            "selected": bool(m.selected[point]), "mbar": float(m.mbar[point])}
