"""Helpers for reading what an AppTest run drew."""
from __future__ import annotations

import base64
import json
import time

import numpy as np

import pandas as pd

DATA_PAGE = "ui/data_model/page.py"
MASK_PAGE = "ui/head_masking/page.py"
FORECAST_PAGE = "ui/forecast/page.py"


def metric(at, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r} among {[m.label for m in at.metric]}"
    return found[0]


def checkbox(at, label: str):
    found = [c for c in at.checkbox if c.label == label]
    assert found, f"no checkbox {label!r}"
    return found[0]


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def sidebar_text(at) -> str:
    return "\n".join([m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption])


def parse_markdown_table(text: str) -> pd.DataFrame:
    """A markdown table (as ui.tables.markdown_table writes it) back to the strings a reader sees: cells split on
    unescaped "|", backslash escapes removed. Written independently of the writer, to check what it shows."""
    rows = []
    for line in text.strip().splitlines():
        cells, cell, escaped = [], "", False
        for ch in line.strip()[1:-1]:
            if escaped:
                cell, escaped = cell + ch, False
            elif ch == "\\":
                escaped = True
            elif ch == "|":
                cells, cell = cells + [cell.strip()], ""
            else:
                cell += ch
        rows.append(cells + [cell.strip()])
    header, rule, *body = rows
    assert all(set(r) <= set(":-") for r in rule), f"the second line is not a header rule: {rule}"
    return pd.DataFrame(body, columns=header)


def markdown_tables(at) -> list[pd.DataFrame]:
    """Every markdown table drawn in the last run."""
    return [parse_markdown_table(m.value) for m in at.markdown if m.value.lstrip().startswith("| ")]


def charts(at) -> list[dict]:
    """The plotly figures drawn in the last run, as dicts."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def table(at, index: int = 0) -> pd.DataFrame:
    return at.dataframe[index].value


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def run_until(at, done, seconds: float = 240.0):
    """Rerun until done(at) (a background job has finished), at most `seconds`; no exception on the way."""
    end = time.monotonic() + seconds
    while not done(at):
        assert time.monotonic() < end, "the job did not finish in time"
        time.sleep(1.0)
        at.run()
        assert not at.exception, at.exception
    return at


def table_with(at, column: str) -> pd.DataFrame:
    """The first table drawn that has `column`."""
    for frame in (d.value for d in at.dataframe):
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with a {column!r} column")


def grid(field, dtype=None) -> np.ndarray:
    """A 2-D trace array (z, customdata): base64 'bdata' with a 'shape' (plotly 6+), or nested lists."""
    if isinstance(field, dict) and "shape" in field:
        out = array(field).reshape([int(n) for n in str(field["shape"]).split(",")])
    else:
        out = np.asarray(field)
    return out.astype(dtype) if dtype is not None else out


def figure(at, title_start: str) -> dict:
    """The one chart of the last run whose title starts with `title_start`."""
    found = [f for f in charts(at) if f["layout"]["title"]["text"].startswith(title_start)]
    assert found, f"no chart titled {title_start!r} among {[f['layout']['title']['text'] for f in charts(at)]}"
    return found[0]


def array(field) -> np.ndarray:
    """A trace's x or y as an array (plotly 6+ writes numeric arrays as base64 'bdata')."""
    if isinstance(field, dict) and "bdata" in field:
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=np.dtype(field["dtype"]))
    return np.asarray(field)
