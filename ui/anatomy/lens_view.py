"""The Anatomy screen's second and third tabs: the forecast lens of the chosen window, each decoder head's direct share.

The window's readings (decoder lens per decoder layer, encoder early exit per depth) and its direct shares are one
pass each, drawn at once; scoring every lens over many windows (and fitting the tuned lens on training windows) is
a button, since it reads hundreds of windows."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.anatomy.direct import window_parts
from informer_lab.analysis.anatomy.lens import forecast_lens, window_readings
from informer_lab.ui import widgets
from informer_lab.ui.anatomy import charts
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

LENS_WINDOWS = 128
FIT_WINDOWS = 256
_READINGS: SharedLRU[pd.DataFrame] = SharedLRU(16)
_PARTS: SharedLRU[pd.DataFrame] = SharedLRU(16)
_SCORES: SharedLRU = SharedLRU(8)


def _readings(key, checkpoint, prepared, split, window, seed, maps):
    def make():
        with st.spinner("Reading every layer's forecast…"), one_thread():
            return window_readings(checkpoint.model, prepared, split, window, seed, maps)
    return _READINGS.get_or_make((*key, maps is not None), make)


def _parts(key, checkpoint, prepared, split, window, seed):
    def make():
        with st.spinner("Each head's direct share…"), one_thread():
            return window_parts(checkpoint.model, prepared, split, window, seed)
    return _PARTS.get_or_make(key, make)


def _interval(lo, hi) -> str:
    return "—" if lo != lo else f"[{lo:.4g}, {hi:.4g}]"


def lens_table(overall: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"lens": overall["lens"], "layer": overall["layer"], "MSE": overall["mse"],
                         "95 % interval": [_interval(a, b) for a, b in zip(overall["mse_low"], overall["mse_high"])],
                         "MSE to the forecast": overall["mse_to_final"], "windows": overall["windows"],
                         "no interval because": overall["reason"]})


def lens_tab(model, data, prepared, seed, checkpoint, config, split, window, column, frame, stem) -> None:
    st.caption("Decoder lens: the decoder's final norm and projection applied to each decoder layer's output (the "
               "last is the forecast). Encoder early exit: the unchanged decoder reading the encoder cut at depth l "
               "(each replica keeps its first l + 1 layers, then its own final norm; the replicas joined as the model "
               "joins them); the deepest is the forecast. Tuned: an affine map per depth, fitted by least squares on "
               f"{FIT_WINDOWS} training windows, from that depth's memory to the final one.")
    score_key = (model.key, data.key, split, seed)
    scored = _SCORES.get(score_key)
    if scored is None and st.button(f"Score every lens on up to {LENS_WINDOWS} {split} windows", key="an_lens_run",
                                    help=f"Fits the tuned lens on {FIT_WINDOWS} training windows first."):
        with st.spinner("Scoring the lenses…"), one_thread():
            scored = forecast_lens(checkpoint.model, prepared, split, windows=LENS_WINDOWS, seed=seed,
                                   fit_windows=FIT_WINDOWS, show=window)
        _SCORES.put(score_key, scored)
    maps = scored.tuned if scored is not None else None
    readings = _readings((model.key, data.key, split, window, seed), checkpoint, prepared, split, window, seed, maps)
    shown = readings[readings["column"] == column].copy()
    starts = prepared.split(split).timestamps
    future = starts[window + config.seq_len:window + config.seq_len + config.pred_len]
    shown["timestamp"] = [future[s - 1] for s in shown["step"]]
    history = pd.DataFrame({"timestamp": frame["timestamp"], "value": frame[column]}).tail(2 * config.pred_len)
    widgets.chart(charts.lens_figure(shown, history, column), f"{stem}-lens", "an_lens")
    widgets.lazy_csv_download(lambda: readings, f"{stem}-lens-readings", "an_lens_readings_csv",
                              "Download every layer's forecast of this window (CSV)")
    if scored is not None:
        widgets.table(lens_table(scored.overall), f"{stem}-lens-mse.csv", "an_lens_table")
        widgets.lazy_csv_download(lambda: scored.table, f"{stem}-lens-per-step", "an_lens_steps_csv",
                                  "Download the lens MSE per horizon step (CSV)")
        st.caption(f"MSE over {len(scored.windows)} {split} windows (one in {scored.stride}), standardised, against "
                   "the truth and against the model's own forecast, with the lab's interval for window means.")



def shares_tab(model, data, prepared, seed, checkpoint, split, window, column, stem) -> None:
    st.caption("Every LayerNorm's scale frozen at its value in this forward pass, each decoder head's write (its "
               "context through its slice of W_O) carried along the residual path to the forecast, in the data's "
               "units; the remainder (the FFN, the biases, the decoder's input and what freezing leaves) is its own "
               "part, so the parts sum to the forecast exactly.")
    parts = _parts((model.key, data.key, split, window, seed), checkpoint, prepared, split, window, seed)
    one = parts[parts["column"] == column]
    remainder = st.toggle("Stack the remainder too (the bars then sum to the forecast)", key="an_remainder",
                          help="The remainder holds the window's level (the data's mean, RevIN's window mean) and "
                               "the FFN: often much larger than any head's share.")
    widgets.chart(charts.shares_figure(one, column, remainder), f"{stem}-direct-shares", "an_shares")
    mean_remainder = one.loc[one["part"] == "remainder", "value"].mean()
    st.caption(f"Remainder over the horizon: {mean_remainder:.4g} on average; largest head share "
               f"{one.loc[~one['part'].isin(['remainder', 'forecast']), 'value'].abs().max():.4g}.")
    widgets.lazy_csv_download(lambda: parts.assign(window=window), f"{stem}-direct-shares", "an_shares_csv",
                              "Download every part of every step and column (CSV)")
