"""Informer Lab: `streamlit run app.py`.

The entry script sets the page up, draws the shared sidebar (active model, device, analysis seed,
training jobs) and runs the page chosen in the navigation. Pages live in `ui/pages/` and are
registered in `ui/nav.py`.
"""
import streamlit as st

from ui import nav, sidebar

st.set_page_config(page_title="Informer Lab", page_icon=":material/query_stats:", layout="wide")
page = st.navigation(nav.pages())
sidebar.draw()
page.run()
