"""The cached layer's torch-free half: CSV frames, keyed by the SHA-256 of the file's bytes.

Split from `ui.cache` so that the Data & model page can read and plot the data before torch has loaded
(on a cold start the model stack loads only once the browser has drawn the page: ui/deferred.py).
A test (tests/ui/test_cold_path.py) keeps this module, `ui.state` and `analysis.data` free of torch.
"""
from __future__ import annotations

import hashlib
import io

import streamlit as st

from analysis.data import SeriesFrame, load_csv


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@st.cache_data(max_entries=8, show_spinner="Reading the CSV…")
def frame_from_bytes(data_digest: str, _data: bytes, name: str, datetime_column: str | None) -> SeriesFrame:
    buffer = io.BytesIO(_data)
    buffer.name = name  # load_csv names the frame (and its messages) after the file
    return load_csv(buffer, datetime_column=datetime_column)
