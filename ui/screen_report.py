"""This screen as a report: every figure and table a page draws through `ui.widgets` is collected during the run,
and the sidebar offers them as one self-contained HTML file (`analysis.reports.html`), with the model's and the
data's provenance and the analysis seed.

The collection lives in this tab's session state, keyed by each element's widget key, so a fragment's rerun
replaces its own figures instead of adding copies; `start` empties it at the top of every full run.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

KEY = "_screen_report"


def start(title: str) -> None:
    st.session_state[KEY] = {"title": title, "figures": {}, "tables": {}}


def _collected() -> dict | None:
    return st.session_state.get(KEY)


def add_figure(key: str, figure: go.Figure) -> None:
    found = _collected()
    if found is not None:
        found["figures"][key] = figure


def add_table(key: str, name: str, table: pd.DataFrame) -> None:
    found = _collected()
    if found is not None:
        found["tables"][key] = (name, table)


def build_html(collected: dict, provenance: dict, seed: int) -> str:
    """The collected figures and tables of one screen as a self-contained HTML page."""
    from informer_lab.analysis.reports.html import Report, ReportSection, render_html

    section = ReportSection(collected["title"], text=f"As drawn on the screen, analysis seed {seed}.",
                            figures=list(collected["figures"].values()), tables=list(collected["tables"].values()))
    return render_html(Report(f"Informer Lab: {collected['title']}", [section], provenance))


def provenance(model, data, raw: bytes | None, seed: int) -> dict:
    """The model's config, schema and digests, the data's fingerprint (of its bytes `raw` when known) and the
    seed. Called when the button is clicked, outside the script run: it reads no session state."""
    from informer_lab.analysis.reports.report import checkpoint_provenance, frame_provenance

    folder = Path(model.ref.path) if model.ref.source == "folder" and model.ref.path else None
    out = checkpoint_provenance(model.checkpoint, folder)
    out["data"] = frame_provenance(data.frame, raw)
    out["analysis seed"] = seed
    return out


def download_button(model, data, seed: int) -> None:
    """The sidebar's "Download this screen (HTML)" button; the page is built only when clicked."""
    collected = _collected()
    if not collected or not (collected["figures"] or collected["tables"]):
        return
    snapshot = {"title": collected["title"], "figures": dict(collected["figures"]),
                "tables": dict(collected["tables"])}
    from informer_lab.analysis.errors import InformerLabError

    from . import state
    from .tables import file_stem

    try:
        raw = state.data_bytes(data.ref)
    except InformerLabError:
        raw = None  # the fingerprint of the values read stands in

    st.download_button(f"Download this screen as a report ({len(snapshot['figures'])} figures, HTML)",
                       lambda: build_html(snapshot, provenance(model, data, raw, seed), seed),
                       file_name=f"{file_stem('report-' + collected['title'] + '-' + model.ref.name)}.html",
                       mime="text/html", key="dl_screen_report", on_click="ignore", icon=":material/summarize:",
                       help="Every figure and table of this screen in one HTML file that opens offline, with the "
                            "model's config, the data's fingerprint and the seed.")
