"""Informer Lab: `streamlit run app.py`.

The entry script sets the page up, runs the page chosen in the navigation, then draws the shared
sidebar (active model, device, analysis seed, training jobs). Pages live in `ui/pages/` and are
registered in `ui/nav.py`.

The sidebar comes after the page because it loads the active model, and with it torch: on a cold
start the Data & model page has by then sent its data and chart to the browser (ui/frames.py). It is
drawn in `finally` so that a page that stops early (st.stop() with a message) still has it.
"""
import streamlit as st

from ui import nav

st.set_page_config(page_title="Informer Lab", page_icon=":material/query_stats:", layout="wide")
page = st.navigation(nav.pages())
try:
    page.run()
finally:
    from ui import sidebar  # torch: imported once the page has drawn (see above)

    sidebar.draw()
