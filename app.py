"""Informer Lab: `streamlit run app.py`.

This file is the server: an `st.App`, which `streamlit run` detects and serves. Every browser tab runs the
Streamlit script `informer_lab.py` (page config, navigation, the page, the sidebar).

It exists for two reasons. Its middleware decides who may reach the lab (ui/access.py): this machine only, unless
the server is bound to a network on purpose, and then only with the access token. Its lifespan hook runs at server
start, before any browser connects: it prints that token's URL when there is one, and starts a thread that gets
the torch-free half of the app ready (pandas, plotly, the bundled sample parsed: ui/server.py), so that a fresh
server's first page does not wait for them.
"""
import streamlit as st
from starlette.middleware import Middleware

from ui.access import AccessMiddleware
from ui.server import lifespan

app = st.App("informer_lab.py", lifespan=lifespan, middleware=[Middleware(AccessMiddleware)])
