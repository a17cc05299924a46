"""The Data page's third source: a series generated with a planted answer (analysis.planted.synth), as
`python cli.py synth` writes it. The answer stays beside the data in this tab (`answer_of`), for the Known answers
screen, and both download as files. Torch-free (the data half of the page)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.planted.synth import KINDS, Answer, SynthSpec, answer_json, generate
from informer_lab.source import command
from informer_lab.ui import frames, state

ANSWERS = "known_answers"  # session state: data digest → answer dict
KIND_HELP = {"seasonal_ar": "y_t = φ·y_{t−s} (+ a second lag) + noise", "driver": "y also reads a driver column at a lag",
             "spikes": "seasonal AR with spikes at known times", "regime": "the seasonal lag switches at known times"}


def _numbers(text: str, kind, what: str) -> tuple:
    try:
        values = tuple(kind(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise InformerLabError(f"{what}: expected numbers separated by commas, got {text!r}") from None
    if not values:
        raise InformerLabError(f"{what}: give at least one number")
    return values


def answer_of(ref: state.DataRef) -> Answer | None:
    """The planted answer of the active data, when this tab generated it (or was given it)."""
    data = st.session_state.get(ANSWERS, {}).get(ref.digest)
    return None if data is None else Answer.from_dict(data)


def remember(ref: state.DataRef, answer: Answer) -> None:
    st.session_state.setdefault(ANSWERS, {})[ref.digest] = answer.to_dict()


def _spec() -> SynthSpec:
    g = st.session_state
    kind = g["ka_kind"]
    lags = _numbers(g["ka_lags"], int, "Seasonal lags")
    coefs = _numbers(g["ka_coefs"], float, "Coefficients")
    return SynthSpec(kind=kind, rows=int(g["ka_rows"]), freq=g["ka_freq"].strip() or "h", seed=int(g["ka_seed"]),
                     lags=lags, coefs=coefs, irrelevant=int(g["ka_irrelevant"]), driver_lag=int(g["ka_driver_lag"]),
                     events=int(g["ka_events"]), regime_lags=_numbers(g["ka_regime_lags"], int, "Regime lags")[:2],
                     regime_length=int(g["ka_regime_length"]))


def _generate() -> None:
    try:
        pd.date_range("2024-01-01", periods=2, freq=st.session_state["ka_freq"].strip() or "h")
        spec = _spec()
        frame, answer = generate(spec)
    except (InformerLabError, ValueError) as err:
        st.session_state["ka_error"] = str(err)
        return
    data = frame.to_csv(index=False).encode("utf-8")
    ref = state.DataRef("synth", f"{spec.kind}-seed{spec.seed}.csv", frames.digest(data))
    state.set_data(ref, data)
    remember(ref, answer)
    st.session_state.pop("ka_error", None)


def summary(answer: Answer, pred_len: int = 24) -> str:
    relevant = ", ".join(f"`{r['column']}` at lag {r['lag']}" + (f" (regime {r['regime']})" if r["regime"] else "")
                         for r in answer.relevant)
    events = f"; {len(answer.events)} planted events" if answer.events else ""
    return (f"**Planted:** {relevant}{events}. **Bayes MSE** of `{answer.target}` (standardised, steps 1–{pred_len}): "
            f"{answer.bayes_for([answer.target], pred_len):.3f} (features S/MS), "
            f"{answer.bayes_for(answer.columns, pred_len):.3f} over every column (features M).")


def draw() -> None:
    """The generator's form; the active data's answer and its downloads when this tab generated it."""
    with st.form("known_answer_form", border=True):
        c = st.columns([1.4, 1, 1, 1])
        c[0].selectbox("Kind", KINDS, key="ka_kind", format_func=lambda k: f"{k}: {KIND_HELP[k]}")
        c[1].number_input("Rows", 200, 2_000_000, 10_080, key="ka_rows")
        c[2].text_input("Step", "h", key="ka_freq", help="A pandas step alias: h, 15min, D, W-SUN, MS, …")
        c[3].number_input("Seed", 0, 2**31 - 1, 0, key="ka_seed")
        c = st.columns(4)
        c[0].text_input("Seasonal lags", "24", key="ka_lags", help="One or two lags of y (seasonal_ar, spikes; "
                                                                   "the first for driver)")
        c[1].text_input("Coefficients", "0.9", key="ka_coefs", help="One per lag; their absolute values sum below 1")
        c[2].number_input("Irrelevant columns", 0, 64, 1, key="ka_irrelevant")
        c[3].number_input("Driver lag", 1, 10_000, 6, key="ka_driver_lag")
        c = st.columns(3)
        c[0].number_input("Spikes", 0, 100_000, 20, key="ka_events")
        c[1].text_input("Regime lags", "24,12", key="ka_regime_lags")
        c[2].number_input("Steps between switches", 2, 1_000_000, 720, key="ka_regime_length")
        st.form_submit_button("Generate", type="primary", icon=":material/auto_awesome:", on_click=_generate)
    if st.session_state.get("ka_error"):
        st.error(st.session_state["ka_error"])
    ref = state.data_ref()
    answer = answer_of(ref) if ref.source == "synth" else None
    if answer is None:
        st.info("Generate a series to use it; the data in use stays active until then.")
        return
    st.markdown(summary(answer))
    c = st.columns([1, 1, 3])
    c[0].download_button("Download the CSV", state.data_bytes(ref), file_name=ref.name, mime="text/csv",
                         icon=":material/download:", on_click="ignore", key="ka_csv")
    c[1].download_button("Download the answer", answer_json(answer), file_name=ref.name[:-4] + ".answer.json",
                         mime="application/json", icon=":material/download:", on_click="ignore", key="ka_json")
    c[2].caption("Train a model on it below, then open **Known answers** to test the instruments against it "
                 f"(`{command('selftest')}` does the same).")
