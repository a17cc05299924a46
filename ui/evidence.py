"""The evidence line beside an instrument (analysis.planted.evidence): what kind of evidence it gives and, where it
was scored against planted answers, its score beside the random control's and the verdict. An instrument no better
(or worse) than random says so in a warning where it is drawn. The scores are the newest benchmark in this lab's
home (`informer-lab benchmark --out …`), else the table the lab ships (docs/measurements.md)."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.planted.evidence import current_verdicts, evidence_line


@st.cache_data(ttl=60, show_spinner=False)
def _verdicts():
    return current_verdicts()


def note(*names: str) -> None:
    """One line per instrument named; a warning where the benchmark found it no better than random."""
    table, source = _verdicts()
    for name in names:
        line = evidence_line(name, table)
        if source and "On planted answers" in line:
            line += f" (Scores: {source}.)"
        if "no better than random" in line or "worse than random" in line:
            st.warning(line, icon=":material/rule:")
        else:
            st.caption(f":material/verified: {line}")
