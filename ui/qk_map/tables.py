"""Shaping for the Query/key map screen: the points to draw (capped), the colour of each, a clicked point."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.instruments.qk_map import QKMap, qk_map_table

MAX_DRAWN = 12_000  # points drawn: a 1,200 × 620 px map shows its density with these; a browser without a GPU
# (software WebGL) took 5.6 s to redraw 60,000 on a recolouring, 3.1 s for 20,000; the CSV holds every point
COLOURS = {"kind": "query or key", "position": "input step", "hour": "hour of day", "weekday": "day of week",
           "mbar": "sampled M̄ (queries)", "window": "window"}


def drawn_points(m: QKMap, seed: int = 0, limit: int = MAX_DRAWN) -> pd.DataFrame:
    """The map's table with a `point` column (its row in the whole map), cut to at most `limit` points by a seeded
    uniform draw that keeps every ProbSparse-selected query (they are what the map is about) while they fill at most
    half the drawing; past that (a seq_len-1440 map of 256 windows has 10,240) a seeded half-drawing of them."""
    table = qk_map_table(m).assign(point=np.arange(m.n_points))
    if len(table) <= limit:
        return table
    rng = np.random.default_rng(seed)
    selected = table["selected"].to_numpy()
    chosen, others = np.flatnonzero(selected), np.flatnonzero(~selected)
    if len(chosen) > limit // 2:
        chosen = rng.choice(chosen, size=limit // 2, replace=False)
    room = max(0, limit - len(chosen))
    keep = np.zeros(len(table), dtype=bool)
    keep[chosen] = True
    keep[rng.choice(others, size=min(room, len(others)), replace=False)] = True
    return table[keep].reset_index(drop=True)


def colour_values(points: pd.DataFrame, by: str) -> np.ndarray:
    """The value each point is coloured by (NaN where it has none, e.g. keys for M̄ or points without a time)."""
    stamps = pd.DatetimeIndex(points["timestamp"])
    if by == "position":
        return points["step"].to_numpy(float)
    if by == "hour":
        return np.asarray(stamps.hour, dtype=float)
    if by == "weekday":
        return np.asarray(stamps.day_of_week, dtype=float)
    if by == "mbar":
        return points["mbar"].to_numpy(float)
    if by == "window":
        return points["window"].to_numpy(float)
    raise ValueError(f"unknown colouring {by!r}")


def colourings(points: pd.DataFrame) -> dict[str, np.ndarray | None]:
    """Every colouring the map offers (`COLOURS`' keys, in order) → one value per drawn point (None: by kind), less
    those no point has a value for (hour and weekday of a series without timestamps)."""
    found: dict[str, np.ndarray | None] = {"kind": None}
    for by in list(COLOURS)[1:]:
        values = colour_values(points, by)
        if np.isfinite(values).any():
            found[by] = values
    return found


def traces_of(points: pd.DataFrame) -> list[pd.DataFrame]:
    """The drawn points of each trace of `charts.map_figure`, in its order: keys, queries, the selected queries."""
    return [points[points["kind"] == "key"], points[points["kind"] == "query"], points[points["selected"]]]


def clicked_point(selection, points: pd.DataFrame) -> int | None:
    """The map point (its row in the whole map) a click on the drawn `points` chose, or None."""
    try:
        clicked = selection["selection"]["points"][0]
        curve, index = int(clicked["curve_number"]), int(clicked["point_index"])
        return int(traces_of(points)[curve]["point"].iloc[index])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def default_windows(choices: tuple[int, ...], seq_len: int, preferred: int = 256, budget: int = 1_000_000) -> int:
    """The index in `choices` of `preferred` windows, or of fewer when their queries and keys (≈ 2·seq_len points a
    window) would pass `budget` points (at least the first choice)."""
    fits = [i for i, n in enumerate(choices) if n <= preferred and 2 * n * seq_len <= budget]
    return fits[-1] if fits else 0


def point_summary(m: QKMap, point: int) -> dict:
    """What a point is: kind, window, position, step, timestamp, selected, M̄."""
    return {"kind": "query" if m.is_query[point] else "key", "window": int(m.window[point]),
            "position": int(m.position[point]), "step": int(m.step[point]), "timestamp": m.timestamp[point],
            "selected": bool(m.selected[point]), "mbar": float(m.mbar[point])}
