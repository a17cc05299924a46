"""Shaping for the Distilling pyramid screen: cells of the picture, padded level rows, clicked cells, views."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from informer_lab.ui.tables import clicked_customdata


def steps_text(first: int, last: int) -> str:
    """'step 36' or 'steps 10–11'."""
    return f"step {first}" if first == last else f"steps {first}–{last}"


def row_title(replica: int, level: int, length: int, stacked: bool) -> str:
    where = f"replica {replica} · " if stacked else ""
    return f"{where}layer {level} (L = {length})"


def pyramid_cells(spans: pd.DataFrame, norms: pd.DataFrame, lengths: pd.DataFrame, seq_len: int) -> pd.DataFrame:
    """One row per drawn cell of the pyramid picture, on the input-step axis.

    Every (replica, level) is a bar of `length` unit cells centred over the input steps its replica
    reads (replica r: the last seq_len // 2**r steps), so a bar is as wide as its sequence is long.
    Columns: row (drawing order, 0 = the input window at the bottom), row_title, replica, level, position,
    x0 (left edge), norm, span_start/span_end (input steps of the window), receptive_start/_end,
    timestamp_start/_end, span_text, wraps.
    """
    cells = spans.merge(norms, on=["replica", "level", "position"], how="left", validate="one_to_one")
    offsets = lengths.set_index(["replica", "level"])["input_length"]
    stacked = lengths["replica"].nunique() > 1
    parts, row = [], 1
    for (replica, level), part in cells.groupby(["replica", "level"], sort=True):
        L_r = int(offsets[(replica, level)])
        first = seq_len - L_r  # window step of the replica's first input step
        n = len(part)
        centre = first + L_r / 2
        part = part.sort_values("position").copy()
        part["x0"] = centre - n / 2 + part["position"].to_numpy()
        for column in ("span_start", "span_end", "receptive_start", "receptive_end"):
            part[column] = part[column] + first  # replica steps → window steps
        part["span_text"] = span_texts(part)
        part["row"] = row
        part["row_title"] = row_title(int(replica), int(level), n, stacked)
        parts.append(part)
        row += 1
    return pd.concat(parts, ignore_index=True)


def level_matrix(table: pd.DataFrame, keys: Sequence[str], position: str, value: str
                 ) -> tuple[np.ndarray, list[tuple]]:
    """Rows of different lengths padded with NaN: ([n_rows, max_len] values, the row keys in order)."""
    groups = list(table.groupby(list(keys), sort=True))
    width = max((len(g) for _, g in groups), default=0)
    z = np.full((len(groups), width), np.nan)
    for i, (_, g) in enumerate(groups):
        g = g.sort_values(position)
        z[i, g[position].to_numpy(dtype=int)] = g[value].to_numpy(dtype="float64")
    return z, [k if isinstance(k, tuple) else (k,) for k, _ in groups]


def pyramid_pick(selection) -> tuple[int, int, int] | None:
    """(replica, level, position) of the first clicked pyramid cell: its customdata is those three numbers (the
    input row's is one step, the joined output's four values)."""
    for data in clicked_customdata(selection):
        try:
            values = [float(v) for v in data]
        except (TypeError, ValueError):
            continue
        if len(values) == 3 and all(np.isfinite(values)) and min(values) >= 0:
            return int(values[0]), int(values[1]), int(values[2])
    return None


def output_cells(cells: pd.DataFrame, seq_len: int) -> pd.DataFrame:
    """The joined encoder-stack output: each replica's last layer, concatenated along time, centred.

    Columns: replica, position (in the replica's last layer), index (in the joined output), x0.
    """
    last = cells[cells["level"] == cells.groupby("replica")["level"].transform("max")]
    last = last.sort_values(["replica", "position"])[["replica", "position"]].reset_index(drop=True)
    n = len(last)
    last["index"] = np.arange(n)
    last["x0"] = seq_len / 2 - n / 2 + last["index"]
    return last


def span_texts(spans: pd.DataFrame) -> pd.Series:
    """'start → end' (or one timestamp) per row of a spans table."""
    start = pd.DatetimeIndex(spans["timestamp_start"]).strftime("%Y-%m-%d %H:%M")
    end = pd.DatetimeIndex(spans["timestamp_end"]).strftime("%Y-%m-%d %H:%M")
    return pd.Series(np.where(start == end, start, start + " → " + end), index=spans.index)


def level_spans(table: pd.DataFrame, keys: Sequence[str], position: str) -> np.ndarray:
    """The same padded layout as `level_matrix`, of each position's span (span_start, span_end): [n_rows, max_len, 2]
    float32, NaN where a row is shorter (numbers for the hover: text per cell cost the server 0.1 s a rerun at
    seq_len 1440)."""
    groups = list(table.groupby(list(keys), sort=True))
    width = max((len(g) for _, g in groups), default=0)
    out = np.full((len(groups), width, 2), np.nan, dtype=np.float32)
    for i, (_, g) in enumerate(groups):
        out[i, g[position].to_numpy(dtype=int)] = g[["span_start", "span_end"]].to_numpy(np.float32)
    return out


def kept_view(kept: pd.DataFrame) -> pd.DataFrame:
    """Pool winners per output position i: the fraction of channels whose max came from input 2i−1, 2i, 2i+1."""
    return kept[["replica", "step", "position", "offset_minus1", "offset_0", "offset_plus1"]].rename(
        columns={"offset_minus1": "from 2i−1", "offset_0": "from 2i", "offset_plus1": "from 2i+1"})


def lengths_view(lengths: pd.DataFrame) -> pd.DataFrame:
    out = lengths.rename(columns={"input_length": "replica input length",
                                  "analytic_length": "analytic ⌊(L−1)/2⌋+1",
                                  "recorded_length": "recorded"}).copy()
    out["match"] = np.where(lengths["match"], "✓", "✗")
    return out


def survival_difference(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Per (replica, step, input_position) both models have: survived of the second − survived of the first."""
    merged = first.merge(second, on=["replica", "step", "input_position"], suffixes=("_a", "_b"))
    return merged.assign(difference=merged["survived_b"] - merged["survived_a"])[
        ["replica", "step", "input_position", "survived_a", "survived_b", "difference"]]
