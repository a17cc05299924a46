"""The server's parts (app.py and informer_lab/server/app.py assign `st.App(LAB_SCRIPT, lifespan=lifespan,
middleware=MIDDLEWARE)`): who may reach the lab (ui/access.py) and what a server does at start.

Server start (the lifespan): get the torch-free half of the app ready in the background.

A fresh server's first browser run used to import pandas and plotly and parse the bundled sample (0.6–0.7 s on
two cores) before it sent its first chart, and the browser only starts loading Streamlit's plotly bundle (4.7 MB,
1.5 s or more to evaluate and draw) once a chart arrives. Here a thread started with the server does that work
before a browser has connected, so the first run finds it done. The thread does not block the server: it
answers health checks and serves the page meanwhile.

Torch is not imported here: importing it while the browser loads and draws the page slowed the first chart by
about a second (ui/deferred.py); the model stack loads once the browser has drawn the page.
"""
from __future__ import annotations

import importlib
import logging
import threading
from contextlib import asynccontextmanager

from starlette.middleware import Middleware

from informer_lab.source import PACKAGE
from informer_lab.ui.access import AccessMiddleware, keep_streamlit_offline

LAB_SCRIPT = str(PACKAGE / "lab.py")  # the Streamlit script every browser tab runs
MIDDLEWARE = [Middleware(AccessMiddleware)]  # who may reach the lab
keep_streamlit_offline()  # no request to another host, not even Streamlit's public-address lookup

# What a fresh server's first run imports before the Data & model page's chart, torch-free
# (tests/ui/test_cold_path.py checks that this covers what the first run imports, and that none of it is torch).
DATA_HALF = ("pandas", "plotly.graph_objects", "plotly.subplots", "informer_lab.analysis.data",
             *(f"informer_lab.ui.{name}" for name in ("state", "frames", "charts", "tables", "widgets", "settings",
                                                     "deferred", "nav", "data_model.charts", "data_model.tables",
                                                     "data_model.source", "data_model.data_view")))

_LOG = logging.getLogger(__name__)
THREAD = "informer-lab-warm-up"


class _NoContextWarning(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warning for the warm-up thread only: it calls a cached
    function outside any script run on purpose, and the warning would greet every server start."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == THREAD and "missing ScriptRunContext" in record.getMessage())


def warm_up() -> None:
    """Import the data half, parse the bundled sample into the shared CSV cache (the first page shows it), and
    build and serialise a small figure of it the way the page's chart is, which imports the many plotly modules
    that load on first use (layout validators, plotly.io's JSON)."""
    for name in DATA_HALF:
        importlib.import_module(name)
    import plotly.io
    import plotly.tools

    from informer_lab.ui import state
    from informer_lab.ui.data_model import charts, tables

    try:
        frame = state.load_data(state.sample_data_ref()).frame
    except Exception as err:  # noqa: BLE001  the Data page shows a bad sample to the user; here it is only logged
        _LOG.warning("warm-up: the bundled sample did not parse (%s)", err)
        return
    long, _ = tables.downsample_minmax(frame.values, 100)
    figure = charts.series_figure(long, list(frame.columns), frame.name)
    plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(figure, validate_figure=True))  # as st.plotly_chart


def announce_access() -> None:
    """Where to open the lab, printed at start (Streamlit's own banner is off: it would ask checkip.amazonaws.com for
    this machine's public address). Served to a network: the URL with its access token, the only place it appears,
    as Jupyter does."""
    import os
    import sys

    from streamlit import config

    from informer_lab.ui.access import TokenError, network_url, server_access

    try:
        access = server_access()
    except TokenError as err:  # a token too short to guard the lab: refuse to serve, in one line
        print(f"error: {err}", file=sys.stderr, flush=True)
        os._exit(2)  # the lifespan runs inside the server's event loop: a SystemExit here would print a traceback
    port = config.get_option("server.port")
    if access.network:
        url = network_url(access, config.get_option("server.address"), port)
        print(f"\n  Informer Lab is served to the network and asks every visitor for its access token. Open:\n"
              f"    {url}\n  (anyone with this token can use the lab; without it nothing is shown)\n",
              file=sys.stderr, flush=True)
    else:
        print(f"\n  Informer Lab (this machine only): http://localhost:{port}\n", file=sys.stderr, flush=True)


@asynccontextmanager
async def lifespan(_app):
    announce_access()
    context_logger = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    if not any(isinstance(f, _NoContextWarning) for f in context_logger.filters):
        context_logger.addFilter(_NoContextWarning())
    threading.Thread(target=warm_up, name=THREAD, daemon=True).start()
    yield
