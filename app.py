"""Informer Lab: `streamlit run app.py`.

This file is the server: an `st.App`, which `streamlit run` detects and serves. Every browser tab runs the
Streamlit script `lab.py` (page config, navigation, the page, the sidebar).

It exists for two reasons. Its middleware decides who may reach the lab (ui/access.py): this machine only, unless
the server is bound to a network on purpose, and then only with the access token. Its lifespan hook runs at server
start, before any browser connects: it prints that token's URL when there is one, and starts a thread that gets
the torch-free half of the app ready (pandas, plotly, the bundled sample parsed: ui/server.py), so that a fresh
server's first page does not wait for them.
"""
from hugepages import prefer_huge_pages

prefer_huge_pages()  # before anything imports torch (it reads the setting at its first tensor)

import streamlit as st  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from ui.access import AccessMiddleware, keep_streamlit_offline  # noqa: E402
from ui.server import lifespan  # noqa: E402

keep_streamlit_offline()  # no request to another host, not even Streamlit's public-address lookup

app = st.App("lab.py", lifespan=lifespan, middleware=[Middleware(AccessMiddleware)])
