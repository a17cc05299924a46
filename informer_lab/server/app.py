"""The server `informer-lab ui` runs (`streamlit run …/informer_lab/server/app.py`); a checkout's app.py is the same.

This file is the server: an `st.App`, which `streamlit run` detects and serves. Every browser tab runs the
Streamlit script `informer_lab/lab.py` (page config, navigation, the page, the sidebar). It sits in a folder of its
own because `streamlit run` puts the folder of the file it serves first on the import path: this one holds
nothing else that could stand for another module.

It exists for two reasons. Its middleware decides who may reach the lab (ui/access.py): this machine only, unless
the server is bound to a network on purpose, and then only with the access token. Its lifespan hook runs at server
start, before any browser connects: it prints that token's URL when there is one, and starts a thread that gets
the torch-free half of the app ready (pandas, plotly, the bundled sample parsed: ui/server.py), so that a fresh
server's first page does not wait for them.
"""
from informer_lab.hugepages import prefer_huge_pages

prefer_huge_pages()  # before anything imports torch (it reads the setting at its first tensor)

import streamlit as st  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from informer_lab.ui.server import LAB_SCRIPT, MIDDLEWARE, lifespan  # noqa: E402

app = st.App(LAB_SCRIPT, lifespan=lifespan, middleware=MIDDLEWARE)
