"""Properties of the two readings of long tables and calendar columns, over generated files:

- decimal marks: any file written with either mark (with or without thousands separators, any separator) reads
  back to exactly the values written, or is refused naming --decimal; given the mark it always reads back exactly;
  and a file with a cell only one mark can read (a decimal part of other than three digits) is never refused;
- long → wide: any long table of series with their own spans, ids of any characters and rows in any order becomes
  columns `<id>.value` on exactly the span the series share, each cell the value that series had at that time.
"""
from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.errors import DataError

PANDAS_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
             "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


def written(value: float, decimals: int, mark: str, group: str | None) -> str:
    """A number as a person's spreadsheet exports it: `decimals` digits after `mark`, thousands grouped by `group`."""
    text = f"{abs(value):.{decimals}f}"
    whole, _, fraction = text.partition(".")
    if group:
        digits = whole
        whole = ""
        while len(digits) > 3:
            whole, digits = group + digits[-3:] + whole, digits[:-3]
        whole = digits + whole
    return ("-" if value < 0 else "") + whole + (mark + fraction if decimals else "")


@st.composite
def marked_files(draw):
    mark = draw(st.sampled_from([".", ","]))
    group = draw(st.sampled_from([None, " ", "'", "." if mark == "," else ","]))
    sep = draw(st.sampled_from([";", "\t"] if mark == "," or group == "," else [",", ";", "\t"]))
    n, c = draw(st.integers(2, 12)), draw(st.integers(1, 3))
    decimals = [draw(st.integers(0, 4)) for _ in range(c)]
    values = np.array([[round(draw(st.floats(-5e6, 5e6, allow_nan=False)), decimals[j]) for j in range(c)]
                       for _ in range(n)])
    stamps = pd.date_range("2024-01-01", periods=n, freq="D").strftime("%Y-%m-%d")
    rows = [sep.join(["date", *(f"v{j}" for j in range(c))])]
    cells = [[written(values[i, j], decimals[j], mark, group) for j in range(c)] for i in range(n)]
    rows += [sep.join([stamps[i], *cells[i]]) for i in range(n)]
    decided = any(d not in (0, 3) for d in decimals) or any(
        (d == 3 and abs(v) < 1) for j, d in enumerate(decimals) for v in values[:, j])
    return ("\n".join(rows) + "\n").encode(), values, mark, decided


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marked_files())
@example(case=(b"date;v0\n2024-01-01;0\n2024-01-02;1.000\n", np.array([[0.0], [1000.0]]), ",", False))  # all floats
def test_a_file_written_with_either_mark_reads_back_to_its_values_or_asks(case):
    data, values, mark, decided = case
    try:
        frame = load_csv(data)
    except DataError as err:
        assert "--decimal" in str(err), str(err)
        assert not decided, ("a cell decides the mark, yet the file was refused", str(err))
    else:
        np.testing.assert_allclose(frame.values.to_numpy(), values, rtol=0, atol=1e-9)
    told = load_csv(data, decimal=mark)
    np.testing.assert_allclose(told.values.to_numpy(), values, rtol=0, atol=1e-9)


ids = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=8).map(str.strip) \
    .filter(lambda s: s and s not in PANDAS_NA)


@st.composite
def long_tables(draw):
    names = draw(st.lists(ids, min_size=2, max_size=5, unique=True))
    freq = draw(st.sampled_from(["D", "h", "MS"]))
    base = pd.Timestamp("2020-01-01")
    spans = {}
    for sid in names:
        start = draw(st.integers(0, 6))
        spans[sid] = (start, draw(st.integers(max(2, 8 - start), 20)))  # every span covers steps 6 and 7
    rows = []
    for k, (sid, (start, n)) in enumerate(spans.items()):
        stamps = pd.date_range(base, periods=start + n, freq=freq)[start:]
        rows += [(sid, t, float(k * 1000 + i + start)) for i, t in enumerate(stamps)]
    order = draw(st.sampled_from(["series", "time", "shuffled-within-time"]))
    table = pd.DataFrame(rows, columns=["unique_id", "ds", "value"])
    if order == "shuffled-within-time":
        table = table.sample(frac=1, random_state=draw(st.integers(0, 99)))
    if order != "series":
        table = table.sort_values("ds", kind="stable")
    buffer = io.StringIO()
    table.assign(ds=table["ds"].dt.strftime("%Y-%m-%d %H:%M")).to_csv(buffer, index=False, quoting=csv.QUOTE_MINIMAL)
    return buffer.getvalue().encode(), spans, freq


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_tables())
def test_a_long_table_becomes_columns_on_the_span_its_series_share(case):
    data, spans, freq = case
    frame = load_csv(data, id_column="unique_id")
    first = max(start for start, _ in spans.values())
    last = min(start + n for start, n in spans.values()) - 1
    grid = pd.date_range("2020-01-01", periods=last + 1, freq=freq)[first:]
    assert (frame.timestamps == grid).all() and frame.freq == pd.tseries.frequencies.to_offset(freq).freqstr
    assert frame.long is not None and set(frame.long.ids) == set(spans)
    order = list(frame.long.ids)
    assert frame.columns == tuple(f"{sid}.value" for sid in order)
    for k, sid in enumerate(spans):
        np.testing.assert_array_equal(frame.values[f"{sid}.value"].to_numpy(), k * 1000 + np.arange(first, last + 1))
    cut = [sid for sid, (start, n) in spans.items() if start < first or start + n - 1 > last]
    notes = " ".join(frame.notes)
    assert ("cut to the span they share" in notes) == bool(cut)
