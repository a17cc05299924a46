"""The Streamlit front end: pages draw widgets and charts, `ui.cache` calls `analysis` (DESIGN §1).

    app.py            page config, shared sidebar, st.navigation(ui.nav.pages()).run()
    ui/nav.py         the page registry: one line per page
    ui/pages/*.py     one script per page (never a folder named `pages/`)
    ui/cache.py       the only place that caches: checkpoints (resource), frames and results (data)
    ui/state.py       per-tab session state: the active model, the active data, the seed
    ui/jobs.py        background training (a thread + stop event in session_state)
    ui/charts.py      plotly figures;  ui/widgets.py  small drawing helpers (downloads, errors)
    ui/tables.py      pure presentation helpers (no Streamlit), tested in tests/app
"""
