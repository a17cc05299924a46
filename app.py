"""Informer Lab from a checkout: `streamlit run app.py` (`informer-lab ui` serves informer_lab/server/app.py, the
same server: the access middleware, the warm-up at start, every tab running informer_lab/lab.py).

`streamlit run` finds the server by reading this file for an `st.App(...)` assignment, so the assignment is here
and its parts are in informer_lab.ui.server.
"""
from informer_lab.hugepages import prefer_huge_pages

prefer_huge_pages()  # before anything imports torch (it reads the setting at its first tensor)

import streamlit as st  # noqa: E402

from informer_lab.ui.server import LAB_SCRIPT, MIDDLEWARE, lifespan  # noqa: E402

app = st.App(LAB_SCRIPT, lifespan=lifespan, middleware=MIDDLEWARE)
