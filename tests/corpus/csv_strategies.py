"""Hypothesis strategies for CSV files as exports make them: a regular series written in one of several styles,
then (for the broken ones) damaged the ways real files are: rows lost or repeated, rows swapped, cells emptied or
replaced by words, infinities, stray bytes, truncation.

`valid_csvs()` gives (bytes, expected frame values) pairs that must be read exactly; `any_csvs()` gives bytes that
must be read or refused with a typed error, never anything else. Used by tests/analysis/data/test_properties.py
(a few hundred examples) and benchmarks/fuzz_csv.py (thousands).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

FREQS = ("h", "15min", "D", "MS", "W-SUN", "B", "s")
STYLES = {  # separator, decimal mark, timestamp format
    "iso": (",", ".", "%Y-%m-%d %H:%M:%S"),
    "iso-t": (",", ".", "%Y-%m-%dT%H:%M:%S"),
    "european": (";", ",", "%d.%m.%Y %H:%M:%S"),
    "tabs": ("\t", ".", "%Y-%m-%d %H:%M:%S"),
}


@st.composite
def series(draw):
    """(timestamps, values [N, C], column names, style)."""
    n = draw(st.integers(3, 40))
    c = draw(st.integers(1, 4))
    freq = draw(st.sampled_from(FREQS))
    start = pd.Timestamp("2020-01-06") + pd.Timedelta(hours=draw(st.integers(0, 2000))) if freq in ("h", "15min", "s") \
        else pd.Timestamp("2020-01-06")
    stamps = pd.date_range(start, periods=n, freq=freq)
    values = np.array(draw(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)),
                                             min_size=c, max_size=c), min_size=n, max_size=n)))
    names = [f"v{i}" for i in range(c)]
    style = draw(st.sampled_from(sorted(STYLES)))
    return stamps, values, names, style


def write(stamps, values, names, style) -> list[str]:
    sep, mark, fmt = STYLES[style]
    lines = [sep.join(["date", *names])]
    for stamp, row in zip(stamps, values):
        cells = [repr(float(v)).replace(".", mark) if mark == "," else repr(float(v)) for v in row]
        lines.append(sep.join([stamp.strftime(fmt), *cells]))
    return lines


@st.composite
def valid_csvs(draw):
    stamps, values, names, style = draw(series())
    return ("\n".join(write(stamps, values, names, style)) + "\n").encode(), stamps, values, names


DAMAGE = ("drop_row", "repeat_row", "swap_rows", "empty_cell", "word_cell", "inf_cell", "extra_field", "blank_line",
          "bad_timestamp", "empty_header")  # line by line; stray bytes and truncation are drawn apart


@st.composite
def any_csvs(draw):
    stamps, values, names, style = draw(series())
    lines = write(stamps, values, names, style)
    sep = STYLES[style][0]
    for damage in draw(st.lists(st.sampled_from(DAMAGE), max_size=4)):
        i = draw(st.integers(1, len(lines) - 1)) if len(lines) > 1 else 0
        fields = lines[i].split(sep)
        j = draw(st.integers(0, len(fields) - 1))
        if damage == "drop_row" and len(lines) > 2:
            del lines[i]
        elif damage == "repeat_row":
            lines.insert(i, lines[i])
        elif damage == "swap_rows" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif damage in ("empty_cell", "word_cell", "inf_cell", "bad_timestamp"):
            fields[0 if damage == "bad_timestamp" else j] = {"empty_cell": "", "word_cell": "n/a?", "inf_cell": "inf",
                                                             "bad_timestamp": "someday"}[damage]
            lines[i] = sep.join(fields)
        elif damage == "extra_field":
            lines[i] += sep + "1"
        elif damage == "blank_line":
            lines.insert(i, "")
        elif damage == "empty_header":
            lines[0] = sep.join("" for _ in lines[0].split(sep))
    data = ("\n".join(lines) + "\n").encode()
    if draw(st.integers(0, 3)) == 0:  # stray bytes
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    if draw(st.integers(0, 9)) == 0:  # truncation
        data = data[: draw(st.integers(0, len(data)))]
    return data
