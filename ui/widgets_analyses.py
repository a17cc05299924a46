"""Drawing helpers of the analysis pages, next to `ui.widgets` (whose `chart` and `table` they reuse)."""
from __future__ import annotations

from typing import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .tables import safe_file_part
from .widgets import PLOTLY_CONFIG, csv_bytes


def html_download(fig: go.Figure, file_name: str, key: str, *, label: str = "Download chart (HTML)") -> None:
    st.download_button(label, lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{safe_file_part(file_name)}.html", mime="text/html", key=f"dl_html_{key}",
                       on_click="ignore", icon=":material/download:")


def csv_download(table: pd.DataFrame, file_name: str, key: str, label: str) -> None:
    st.download_button(label, csv_bytes(table), file_name=f"{safe_file_part(file_name)}.csv", mime="text/csv",
                       key=f"dl_csv_{key}", on_click="ignore", icon=":material/download:")


def clickable_chart(fig: go.Figure, file_name: str, key: str, on_select: Callable[[], None]) -> None:
    """A plotly chart whose point clicks rerun the page through `on_select` (which reads
    st.session_state[f"chart_{key}"]), and its HTML download."""
    st.plotly_chart(fig, key=f"chart_{key}", config=PLOTLY_CONFIG, on_select=on_select, selection_mode="points")
    html_download(fig, file_name, key)
