"""The Streamlit front end, one folder per screen (DESIGN §1): to change a screen, open `ui/<screen>/`.

    app.py               the server (`st.App`): its lifespan runs ui/server.py's warm-up at server start
    lab.py      the script every tab runs: page config, st.navigation(ui.nav.pages()).run(), the sidebar

Screens (each folder: page.py, the script, which only draws; charts.py its figures; tables.py its pure pandas
shaping; cache.py its cached analysis calls; anything else only it uses):

    ui/data_model/   data source, parse summary, training in the background, loading a model
    ui/runs/         every run of the lab's home: curves together, settings, test error, make one active
    ui/forecast/     the pred_len steps after the last row, and the download
    ui/compare/      forecasts against the full-attention counterfactual, a twin (twin.py) and baselines
    ui/head_masking/ switch heads off and see one window's forecast change
    ui/sparsity/     M̄ and the top-u queries per site and head, sampled vs exact
    ui/pyramid/      the distilling pyramid of one window
    ui/anatomy/      how a forecast is computed: rollout and flow, the forecast lens, direct shares
    ui/circuits/     which heads work together: composition, attribution patching against exact, path patching
    ui/ablation/     head-ablation studies in background jobs (jobs.py)
    ui/attribution/  Integrated Gradients over the encoder window

Shared by several screens, at this level:

    nav.py            the page registry: one line per screen
    state.py          per-tab session state: the active model, the active data, the seed, the require_* guards
    sidebar.py        the sidebar every page shows (device, model, seed, training jobs)
    cache.py          the cached model and data layer: checkpoints, prepared splits, mean contexts, first start
    frames.py         its torch-free half: CSV frames, so the Data screen plots before torch loads
    jobs.py           background work: BackgroundJob, TrainJob, and the first-start recipe
    charts.py         the figure layout helper, the palette and colour scales, timestamp labels
    widgets.py        drawing helpers: charts and tables with downloads, clickable charts, job progress, seed
    tables.py         pure presentation helpers: markdown tables, file names, clicked points, model lines
    attention_rows.py one head's softmax rows and its lazy queries (Sparsity and Pyramid)
    server.py         server start: import the torch-free half and parse the bundled sample, in a thread
    deferred.py       a fresh server's first run: draw without torch, load it once the browser has drawn
    settings.py       where runs and the sample live
"""
