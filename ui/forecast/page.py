"""Forecast: the pred_len steps after the last row of the active data, in original units."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.compare.comparison import INFORMER, LAST_VALUE, SEASONAL_NAIVE
from informer_lab.analysis.data import describe_frequency
from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.intervals import METHOD, interval_sign
from informer_lab.analysis.learning.windows import limit_windows
from informer_lab.ui import model_check, second_model, state, widgets
from informer_lab.ui.forecast import cache, charts, tables
from informer_lab.ui.cache import n_windows, prepared_for
from informer_lab.ui.tables import COMPARED, file_stem
from informer_lab.analysis.errors import count

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
    state.way_out(data, model)
    state.stop_page()

try:  # the model against the baselines above the forecast, as above every analysis page (ui/model_check.py)
    model_check.draw(model.key, data.key, checkpoint, prepared_for(model.key, data.key, checkpoint, frame))
except InformerLabError as err:  # no test split to check it on: the forecast still stands, and the reason is said
    st.caption(f"No check against the baselines: {err}")

time_column = schema.datetime_column
targets = list(schema.target_columns)
read_from = frame.timestamps[max(0, len(frame.timestamps) - spec.seq_len)]
st.caption(f"**{model.ref.name}** forecasts the {spec.pred_len} steps {forecast[time_column].iloc[0]} → "
           f"{forecast[time_column].iloc[-1]} ({describe_frequency(frame.freq)}) that follow the last row of "
           f"**{data.ref.name}**, reading its last seq_len = {spec.seq_len} rows ({read_from} → "
           f"{frame.timestamps[-1]}). One forward pass of the generative decoder; original units; key-sample seed "
           f"{seed}.")

second = second_model.picker(model, data, st.columns([3, 1.4])[1])
other = None
if second is not None:
    try:
        other = cache.future_forecast(second.model.key, data.key, seed, second.model.checkpoint, frame)
    except InformerLabError as err:
        st.warning(f"The second model {second.name} cannot forecast {data.ref.name}: {err}")
stem = f"forecast-{file_stem(model.ref.name)}-{file_stem(data.ref.name)}"


@st.fragment
def the_chart() -> None:
    """The plotted column and the history shown. A fragment: either reruns only this chart."""
    c = st.columns([1, 2])
    column = c[0].selectbox("Plotted column", targets, index=len(targets) - 1, key="fc_column",
                            persist_state="session") if len(targets) > 1 else targets[0]
    history_len = c[1].slider("History shown (rows)", spec.seq_len // 4 if spec.seq_len >= 8 else 1,
                              min(frame.n_rows, 8 * spec.seq_len), min(frame.n_rows, spec.seq_len), key="fc_history",
                              persist_state="session", help=f"The model reads the last {spec.seq_len} rows.")
    history = frame.values[[column]].iloc[-history_len:]
    widgets.chart(charts.future_figure(history, forecast, time_column, column,
                                       f"{column}: last {history_len} rows and the {spec.pred_len}-step forecast",
                                       second=(second.name, other) if other is not None else None),
                  f"{stem}-{column}", "fc_chart")


the_chart()

st.subheader("Forecast table")
widgets.table(forecast, stem, "fc_table", label="Download forecast (CSV)",
              column_config={c: st.column_config.NumberColumn(format="%.4f") for c in targets})
if other is not None:
    paired = tables.side_by_side(forecast, other, time_column, targets, (model.ref.name, second.name))
    gaps = paired[[c for c in paired.columns if c.endswith(f"{second.name} − {model.ref.name}")]]
    st.subheader(f"Side by side with {second.name}")
    st.caption(f"Both forecasts from the same last rows of {data.ref.name}, key-sample seed {seed}, original units; "
               f"*{second.name} − {model.ref.name}* marks where they part (largest |difference|: "
               f"{float(gaps.abs().max().max()):.4g}). Blank cells: a step only one model forecasts.")
    widgets.table(paired, f"{stem}-vs-{file_stem(second.name)}", "fc_pair_table",
                  column_config={c: st.column_config.NumberColumn(format="%+.4f" if " − " in c else "%.4f")
                                 for c in paired.columns if c != time_column})

# ------------------------------------------------------------------------------------------ how good is it
NAMES = {INFORMER: f"{model.ref.name}", LAST_VALUE: "last value (naive)", SEASONAL_NAIVE: "seasonal naive",
         second_model.SECOND: f"{second.name} (second model)" if second is not None else ""}


WINDOW_CHOICES = (512, 2048, None)  # None: every test window


def test_error_section() -> None:
    """The model's error on the test split next to the naive forecasts' (the bar a forecaster must clear). Scored
    on opening when that is short (windows × seq_len ≤ tables.AUTO_INPUT_ROWS), else on its button: a seq_len-1440 model
    has ~11,000 test windows, a minute of forward passes nobody asked for."""
    st.subheader("Is it better than naive?")
    prepared = state.require_prepared(model, data)
    n = n_windows(prepared, "test")
    auto = n * spec.seq_len <= tables.AUTO_INPUT_ROWS
    windows, run = None, False
    if not auto:
        c = st.columns([2.2, 1.2, 3], vertical_alignment="bottom")
        windows = c[0].radio("Test windows scored", WINDOW_CHOICES, horizontal=True, key="fc_windows",
                             format_func=lambda w: f"all ({n:,})" if w is None else f"first {w:,}",
                             persist_state="session")
        run = c[1].button("Score on the test split", key="fc_score", type="primary", icon=":material/play_arrow:")
        c[2].caption(f"{n:,} test windows of {spec.seq_len} steps: scoring them is a forward pass per window, so it "
                     "waits for this button (the result is kept for every tab).")
    scored = limit_windows(prepared, "test", windows)
    key = (model.key, data.key, seed, second.model.key if second is not None else None, windows)
    errors, why = cache.known_test_errors(key), None
    if errors is None and (auto or run):
        bar = st.progress(0.0, text="Scoring the test windows…")
        aligned = None
        if second is not None:
            try:
                aligned = second_model.forecasts_on_first(model.key, second.model.key, data.key, "test", seed, scored,
                                                          second, windows)
            except InformerLabError as err:
                why = str(err)
                key = key[:3] + (None,) + key[4:]
        errors = cache.test_errors(key, checkpoint, scored, aligned, lambda done, total: bar.progress(
            min(1.0, done / max(1, total)), text=f"Forecasting the test windows: {done:,} of {total:,}"))
        bar.empty()
    if errors is None:
        st.info("Press **Score on the test split** to set the model against the naive forecasts.",
                icon=":material/play_circle:")
        return
    ours = errors[errors["model"] == INFORMER].iloc[0]
    cells = st.columns(len(errors))
    for cell, row in zip(cells, errors.itertuples()):
        relative = row.model != INFORMER and row.mse > 1e-12
        # under a baseline's MSE, the model's difference from it, said to be the model's (not this forecast's)
        delta = f"model − this: {ours.mse - row.mse:+.4f} ({(ours.mse - row.mse) / row.mse:+.0%})" if relative else None
        interval = (row.interval or "no interval") if pd.isna(row.mse_lo) else \
            f"95 % interval [{row.mse_lo:.4f}, {row.mse_hi:.4f}]"
        cell.metric(f"Test MSE · {NAMES.get(row.model, row.model)}", f"{row.mse:.4f}", delta=delta,
                    delta_color="inverse", help=f"{interval}; MAE {row.mae:.4f}; standardised; {row.windows:,} test "
                                                "windows. Below it: the model's MSE minus this one (negative: the "
                                                "model is better).")
    naive = errors[~errors["model"].isin([INFORMER, second_model.SECOND])]
    best = naive.loc[naive["mse"].idxmin()]
    verb, evidence = _verdict(best)
    which = "" if windows is None else "first "
    st.caption(f"On the {which}{count(int(ours.windows), 'window')} of {data.ref.name}'s test split the model {verb} the "
               f"best naive forecast ({NAMES.get(best.model, best.model)}, MSE {best.mse:.4f}): {evidence}. "
               f"Standardised with the model's own scaler; key-sample seed {seed}; intervals: {METHOD}. The Compare "
               "page adds the full-attention counterfactual and a linear baseline.")
    if second is not None:
        pair = errors[errors["model"] == second_model.SECOND]
        if len(pair):
            st.markdown(f"**{second.name} against {model.ref.name}**, on the same test windows: " +
                        _paired_sentence(pair.iloc[0], model.ref.name))
        else:
            st.caption(f"{second.name} is not scored here: {why}")


def _paired_sentence(row: pd.Series, first: str) -> str:
    """What the paired interval of ΔMSE = second − first says."""
    lo, hi, d = row["delta_mse_lo"], row["delta_mse_hi"], row["delta_mse"]
    if pd.isna(lo) or pd.isna(hi):
        return f"ΔMSE {d:+.4f} ({row.get('delta_interval') or 'no interval'})."
    word = COMPARED[interval_sign(lo, hi, row["mse"])]
    return f"{word} {first}: ΔMSE (second − first) {d:+.4f}, 95 % interval [{lo:+.4f}, {hi:+.4f}]."


def _verdict(naive: pd.Series) -> tuple[str, str]:
    """The verb, and its evidence, that the paired interval allows. The table's delta_mse is naive − model; the
    sentence says model − naive, as the metrics above it do (negative: the model is better)."""
    lo, hi, d = -naive["delta_mse_hi"], -naive["delta_mse_lo"], -naive["delta_mse"]  # model − naive
    if pd.isna(lo) or pd.isna(hi):
        return ("beats" if d < 0 else "does not beat"), \
            f"ΔMSE (model − naive) {d:+.4f} by the point estimate alone ({naive.get('delta_interval') or 'no interval'})"
    evidence = f"ΔMSE (model − naive) {d:+.4f}, 95 % interval [{lo:+.4f}, {hi:+.4f}]"
    sign = interval_sign(lo, hi, naive["mse"])
    if sign == -1:
        return "beats", evidence
    if sign == 1:
        return "is beaten by", evidence
    return "cannot be told apart from", evidence + ", across 0"


test_error_section()
