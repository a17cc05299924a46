"""The Streamlit front end: pages draw widgets and charts, `ui.cache` calls `analysis` (DESIGN §1).

    app.py            the server (`st.App`): its lifespan runs ui/server.py's warm-up at server start
    informer_lab.py   the script every tab runs: page config, st.navigation(ui.nav.pages()).run(), the sidebar
    ui/server.py      server start: import the torch-free half and parse the bundled sample, in a thread
    ui/nav.py         the page registry: one line per page
    ui/pages/*.py     one script per page (never a folder named `pages/`)
    ui/cache.py       the cached layer: checkpoints (resource), analysis results (data)
    ui/frames.py      its torch-free half: CSV frames, so the Data page plots before torch loads
    ui/deferred.py    a fresh server's first run: draw without torch, load it once the browser has drawn
    ui/state.py       per-tab session state: the active model, the active data, the seed
    ui/jobs.py        background training (a thread + stop event in session_state)
    ui/charts*.py     plotly figures, each built in one go.Figure(traces, charts.layout(...)) call;
                      ui/widgets.py  small drawing helpers (downloads, errors)
    ui/tables.py      pure presentation helpers (no Streamlit), tested in tests/app
"""
