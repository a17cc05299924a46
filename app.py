"""Informer Lab: `streamlit run app.py`.

This file is the server: an `st.App`, which `streamlit run` detects and serves. Every browser tab runs the
Streamlit script `informer_lab.py` (page config, navigation, the page, the sidebar).

It exists for one reason: its lifespan hook runs at server start, before any browser connects, and starts a
thread that gets the torch-free half of the app ready (pandas, plotly, the bundled sample parsed: ui/server.py),
so that a fresh server's first page does not wait for them.
"""
import streamlit as st

from ui.server import lifespan

app = st.App("informer_lab.py", lifespan=lifespan)
