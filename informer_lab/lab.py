"""Informer Lab's Streamlit script: every browser tab runs it (`streamlit run app.py` serves it; see app.py).

It sets the page up, runs the page chosen in the navigation, then draws the shared
sidebar (active model, device, analysis seed, training jobs). Each screen lives in its folder
`ui/<screen>/` (its script is `page.py`) and is registered in `ui/nav.py`.

The sidebar comes after the page because it loads the active model, and with it torch. On the first
run of a fresh server the model stack has not loaded yet: the Data & model page then draws its data
half and the sidebar only names the model; once the browser reports that it has drawn the page, the app
reruns and loads the stack first (ui/deferred.py), so that the first chart never waits for torch.
A page that stops early (a message and `state.stop_page()`) still gets the sidebar.
"""
import streamlit as st

from informer_lab.ui import deferred, nav, screen_report, state

st.set_page_config(page_title="Informer Lab", page_icon=":material/query_stats:", layout="wide")
page = st.navigation(nav.pages(), expanded=True)  # every screen listed (15: folded past 10 by default)
deferred.load_if_requested()
screen_report.start(page.title)
try:
    page.run()
except state.PageStopped:
    pass  # the page has drawn why it stopped
if deferred.model_stack_loaded():
    from informer_lab.ui import sidebar  # torch (see above)

    sidebar.draw()
else:
    deferred.draw_sidebar()
