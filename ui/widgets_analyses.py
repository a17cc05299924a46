"""Drawing helpers of the analysis pages, next to `ui.widgets` (whose charts, tables and download buttons
they reuse)."""
from __future__ import annotations

from typing import Callable

import plotly.graph_objects as go
import streamlit as st

from .widgets import PLOTLY_CONFIG, html_download


def clickable_chart(fig: go.Figure, file_name: str, key: str, on_select: Callable[[], None]) -> None:
    """A plotly chart whose point clicks rerun the page through `on_select` (which reads
    st.session_state[f"chart_{key}"]), and its HTML download."""
    st.plotly_chart(fig, key=f"chart_{key}", config=PLOTLY_CONFIG, on_select=on_select, selection_mode="points")
    html_download(fig, file_name, key)
