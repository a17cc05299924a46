"""Runs: every run in the lab's home — its training and validation curves beside the others', its settings, its test
error — and a click that makes one the active model. Read from each run's JSON files (analysis.learning.runs), so
the list is quick however many runs there are; a run's model loads only when asked for its check against the
baselines."""
import streamlit as st

from informer_lab.analysis.errors import InformerLabError, count
from informer_lab.analysis.learning.runs import curves, read_runs, runs_table
from informer_lab.source import command
from informer_lab.ui import settings, state, widgets
from informer_lab.ui.runs import charts, tables

CHART_RUNS = 8  # the newest runs drawn by default (more can be picked)

st.title("Runs")
root = settings.runs_dir()
settings.install_sample()
records = read_runs(root)
st.caption(f"Every checkpoint folder in `{root}`, newest first. Losses and test errors are standardised (each "
           "column scaled by its training mean and deviation); the test error is over every test window.")
unreadable = settings.runs_problem(write=False)
if unreadable is not None:
    st.error(unreadable, icon=":material/folder_off:")
    state.stop_page()
if not records:
    st.info(f"No runs in `{root}` yet: train one on the Data & model page, or with `{command('train --csv FILE')}`.")
    state.stop_page()

table = runs_table(records)
broken = [r for r in records if r.problem is not None]
if broken:  # said above the table, the reason beside each name: a wide table hides its last column
    st.warning(f"{count(len(broken), 'run folder')} cannot be read, listed without numbers: "
               + "; ".join(f"`{r.name}`: {r.problem}" for r in broken[:5])
               + (f"; and {len(broken) - 5} more (the table's problem column)" if len(broken) > 5 else ""),
               icon=":material/folder_off:")
    table = table[["run", "problem", *[c for c in table.columns if c not in ("run", "problem")]]]
widgets.table(table.drop(columns=["problem"]) if not broken else table, "runs.csv", "runs_table",
              column_config=tables.COLUMN_CONFIG)

names = [r.name for r in records if r.problem is None]
shown = st.multiselect("Runs on the chart", names, default=names[:CHART_RUNS], key="runs_chart_runs",
                       help="The newest eight by default; every run can be added.")
chosen_records = [r for r in records if r.name in shown]
if chosen_records:
    widgets.chart(charts.curves_figure(curves(chosen_records)), "run-curves", "runs_curves")

st.subheader("One run")
active = state.model_ref()
default = names.index(active.name) if active is not None and active.name in names else 0
if not names:
    st.info("No run here can be read; the table says why for each.")
    state.stop_page()
name = st.selectbox("Run", names, index=default, key="runs_chosen")
record = next(r for r in records if r.name == name)
left, right = st.columns([1, 1])
with left:
    widgets.small_table(tables.settings_rows(record), f"{name}-settings.csv", "runs_settings")
with right:
    is_active = active is not None and active.source == "folder" and active.name == name
    if is_active:
        st.caption(f":material/check_circle: `{name}` is the active model.")
    elif st.button(f"Make `{name}` the active model", key="runs_activate", type="primary"):
        state.set_model(state.folder_ref(record.path))
        st.rerun()
    data = state.require_data()
    misfit = tables.data_misfit(record, data.frame)
    if misfit is not None:
        st.caption(f"Its check against seasonal naive and the linear baseline needs data it can read: {misfit}.")
    elif st.toggle(f"Check against seasonal naive and the linear baseline on {data.ref.name}",
                   key=f"runs_check_{name}",
                   help="Loads the model and forecasts up to 512 test windows (in the background)."):
        from informer_lab.ui import model_check  # torch, only when asked

        try:
            model = state.load_model(state.folder_ref(record.path))
        except InformerLabError as err:
            st.error(f"{name} cannot be loaded: {err}")
            state.stop_page()
        model_check.draw(model.key, data.key, model.checkpoint, state.require_prepared(model, data))
