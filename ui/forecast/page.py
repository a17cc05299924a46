"""Forecast: the pred_len steps after the last row of the active data, in original units."""
from __future__ import annotations

import streamlit as st

from analysis.errors import InformerLabError
from ui import state, widgets
from ui.forecast import cache, charts
from ui.tables import safe_file_part

st.title("Forecast")

model = state.require_model()
data = state.require_data()
checkpoint, seed = model.checkpoint, state.seed()
schema, frame = checkpoint.schema, data.frame
spec = schema.spec

try:
    forecast = cache.future_forecast(model.key, data.key, seed, checkpoint, frame)
except InformerLabError as err:
    st.error(f"{model.ref.name} cannot forecast {data.ref.name}: {err}")
    state.stop_page()

time_column = schema.datetime_column
targets = list(schema.target_columns)
st.caption(f"**{model.ref.name}** forecasts the {spec.pred_len} steps after the last row of **{data.ref.name}** "
           f"({frame.timestamps[-1]}), from its last seq_len = {spec.seq_len} rows: "
           f"{forecast[time_column].iloc[0]} → {forecast[time_column].iloc[-1]}, every {frame.freq}. "
           f"One forward pass of the generative decoder; original units; key-sample seed {seed}.")

c = st.columns([1, 3])
column = c[0].selectbox("Plotted column", targets, index=len(targets) - 1, key="fc_column",
                        persist_state="session") if len(targets) > 1 else targets[0]
history_len = c[1].slider("History shown (rows)", spec.seq_len // 4 if spec.seq_len >= 8 else 1,
                          min(frame.n_rows, 8 * spec.seq_len), min(frame.n_rows, spec.seq_len), key="fc_history",
                          persist_state="session", help=f"The model reads the last {spec.seq_len} rows.")
history = frame.values[targets].iloc[-history_len:]
stem = f"forecast-{safe_file_part(model.ref.name)}-{safe_file_part(data.ref.name)}"
widgets.chart(charts.future_figure(history, forecast, time_column, column,
                                   f"{column}: last {history_len} rows and the {spec.pred_len}-step forecast"),
              f"{stem}-{column}", "fc_chart")

st.subheader("Forecast table")
widgets.table(forecast, stem, "fc_table", label="Download forecast (CSV)",
              column_config={c: st.column_config.NumberColumn(format="%.4f") for c in targets})

# ------------------------------------------------------------------------------------------ comparison
# Reserved for the comparison section (analysis/comparison.py, e.g. ProbSparse vs full attention on
# this forecast). Draw it below this line; `model`, `data`, `checkpoint`, `forecast` and `seed` are ready.
