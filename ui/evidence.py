"""The evidence line beside an instrument (analysis.planted.evidence): what kind of evidence it gives and, where it
was scored against planted answers, its score beside the random control's and the verdict. An instrument no better
(or worse) than random says so in a warning where it is drawn. The scores are the newest benchmark in this lab's
home (`informer-lab benchmark --out …`), else the table the lab ships (docs/measurements.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from informer_lab.analysis.planted.evidence import MEASURED, evidence_line, read_verdicts
from informer_lab.home import benchmarks_dir

FILE = "instruments.csv"


def newest_benchmark() -> Path | None:
    """The instruments.csv of the newest benchmark folder in the lab's home, or None."""
    try:
        found = [p / FILE for p in benchmarks_dir().iterdir() if (p / FILE).is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


@st.cache_data(max_entries=8, show_spinner=False)
def _read(path: str, modified: float) -> pd.DataFrame | None:
    return read_verdicts(Path(path))


def verdicts() -> tuple[pd.DataFrame | None, str]:
    """(the verdict table, where it comes from)."""
    own = newest_benchmark()
    path = own or MEASURED
    try:
        table = _read(str(path), path.stat().st_mtime)
    except OSError:
        table = None
    if table is None:
        return None, ""
    return table, (f"your benchmark {own.parent.name}" if own else "the lab's benchmark, docs/measurements.md")


def note(*names: str) -> None:
    """One line per instrument named; a warning where the benchmark found it no better than random."""
    table, source = verdicts()
    for name in names:
        line = evidence_line(name, table)
        if source and "On planted answers" in line:
            line += f" (Scores: {source}.)"
        if "no better than random" in line or "worse than random" in line:
            st.warning(line, icon=":material/rule:")
        else:
            st.caption(f":material/verified: {line}")
