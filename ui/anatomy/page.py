"""Anatomy of a forecast: how one window's forecast is computed through the layers — attention rollout and flow from a
forecast step through the decoder, the cross-attention and the distilling pyramid to the input steps; the forecast
lens (what each layer would forecast); each decoder head's direct share of the forecast.

One forward pass per (window, seed) is recorded and cached (ui/anatomy/cache.py); the target step, α, the head and
the distilling step's transfer form only re-slice it. Flow runs one max-flow per input step: it is computed at once
on small graphs and on request on large ones.
"""
import streamlit as st

from informer_lab.analysis.anatomy.flow import MAX_EDGES, flow_edges, uniform, uniform_reason
from informer_lab.analysis.anatomy.transfer import FORMS
from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.instruments.window_edits import window_frame
from informer_lab.analysis.learning.embedding import placeholder_values
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.anatomy import cache, charts, lens_view, tables
from informer_lab.ui.tables import file_stem

FORM_HELP = {"routed": "the max-pool's winning conv position per channel, spread over its three taps (default)",
             "structural": "the conv's three taps composed with the pool's three (1, 2, 3, 2, 1 / 9 inside)",
             "jacobian": "‖∂ distilled / ∂ input‖ per pair of positions, exact to first order"}

st.title("Anatomy of a forecast")
model, data, prepared, seed, checkpoint, config = state.require_page()
st.caption("Attention rollout (Abnar & Zuidema 2020): each attention layer moves relevance by Â = α·A + (1 − α)·I, "
           "A the rows the model really used (a lazy ProbSparse query's uniform or prefix row, not the 1/L over every "
           "key that Informer2020 returns), rows renormalised; each distilling step by a transfer matrix P; the "
           "decoder's cross-attention sends α into the encoder's memory and keeps 1 − α on the decoder's own tokens "
           "(the label share). Flow is the maximum flow through the same graph. Neither sees the value embedding's "
           "own k = 3 convolution.")
evidence.note('rollout', 'flow', 'lens', 'direct_share')

c = st.columns([1, 3.4], gap="medium")
split = c[0].radio("Split", ["val", "test"], index=1, horizontal=True, key="an_split", persist_state="session")
n = state.require_windows(prepared, data, split)
window = state.window_slider(c[1], n, split, "an", state.forecast_starts(prepared, split, n))
try:
    pieces = cache.pieces(model.key, data.key, split, window, seed, checkpoint, prepared)
except (InformerLabError, ValueError) as err:
    st.error(f"The window cannot be recorded: {err}")
    state.stop_page()

column = st.selectbox("Column drawn", list(prepared.target_columns), key="an_column") \
    if len(prepared.target_columns) > 1 else prepared.target_columns[0]
frame = window_frame(prepared, split, window)
st.caption(f"Window {window} of the {split} split: encoder input {frame['timestamp'].iloc[0]} → "
           f"{frame['timestamp'].iloc[-1]} ({config.seq_len} steps) · key-sample seed {seed}.")
stem = file_stem(f"anatomy-{model.ref.name}-{split}-w{window}")


def rollout_tab() -> None:
    """Rollout (and flow) of the chosen step, α, head and P form: a re-slice of the recorded window."""
    k = st.columns([1.2, 1.2, 1.2, 2.4], gap="medium")
    steps = ["all"] + list(range(1, config.pred_len + 1))
    step = k[0].selectbox("Forecast step", steps, key="an_step", persist_state="session",
                          format_func=lambda s: "every step (mean)" if s == "all" else f"step {s}")
    alpha = k[1].slider("α (attention's share)", 0.0, 1.0, 0.5, 0.05, key="an_alpha", persist_state="session",
                        help="Â = α·A + (1 − α)·I; ½ is Abnar & Zuidema's choice.", format="%.2f")
    heads = ["mean"] + list(range(config.n_heads))
    head = k[2].selectbox("Head", heads, key="an_head", persist_state="session",
                          format_func=lambda h: "mean of the heads" if h == "mean" else f"head {h} of every layer")
    form = k[3].radio("Distilling transfer P", FORMS, horizontal=True, key="an_form", persist_state="session",
                      help="; ".join(f"{f}: {t}" for f, t in FORM_HELP.items())) if config.distil and max(
        config.e_layers) > 1 else "routed"
    targets = tuple(range(1, config.pred_len + 1)) if step == "all" else (int(step),)
    head_index = None if head == "mean" else int(head)

    forms = FORMS if config.distil and max(config.e_layers) > 1 else (form,)
    key = (model.key, data.key, split, window, seed)
    graphs = cache.graphs(key, checkpoint, pieces, alpha=alpha, head=head_index,
                          forms=(form, *(f for f in forms if f != form)))
    relevance = {f: cache.relevance(key, g, alpha=alpha, head=head_index, form=f, targets=targets)
                 for f, g in graphs.items()}
    chosen = relevance[form]
    inputs = chosen.inputs.mean(axis=0)
    label, known = float(chosen.label.mean()), float(chosen.known.mean())

    edges = flow_edges(graphs[form])
    flow_steps = len(targets) * (config.seq_len + 1)
    small = edges <= MAX_EDGES and flow_steps <= 4 * (config.seq_len + 1)
    want_flow = st.toggle(f"Flow ({edges:,} edges × {flow_steps:,} max-flows)", value=small, key=f"an_flow_{small}",
                          help="The maximum flow from the forecast row to each input step. On at once where the graph "
                               "is small; on a long window or every step it takes a while (one max-flow per input "
                               "step).")
    flow_inputs, flat = None, None
    if want_flow:
        flowed, raw = cache.flow_relevance(key, graphs[form], alpha=alpha, head=head_index, form=form, targets=targets)
        if uniform(raw):  # the same flow for every step: no chart of equal bars, the value and why
            flat = uniform_reason(raw, alpha)
        else:
            flow_inputs = flowed.inputs.mean(axis=0)

    levels = chosen.levels.groupby(["replica", "level", "position"], as_index=False)["relevance"].mean()
    lengths = {r: config.enc_len // 2 ** r for r in range(len(config.e_layers))}
    titles, z = tables.level_grid(levels, inputs, lengths, config.seq_len, config.distil_padding)
    what = "every step" if step == "all" else f"step {step}"
    widgets.chart(charts.pyramid_figure(titles, z, frame["timestamp"], f"{what}, P {form}, α = {alpha:g}"),
                  f"{stem}-pyramid", "an_pyramid")
    if config.embedding == "lags":  # its decoder reads the forecast steps only, each with lagged values
        own = (f"all on the {config.pred_len} forecast steps, which carry calendar marks, "
               f"{placeholder_values(vars(config))} and the values {', '.join(str(g) for g in config.lags if g)} "
               "steps back, read by the embedding outside the graph")
    else:
        own = (f"{known:.1%} on the {config.label_len} known steps, {label - known:.1%} on the placeholders, which "
               "carry only calendar marks")
    st.markdown(f"**{label:.1%}** of the relevance stays with the decoder's own tokens (the label share: {own}); "
                f"**{1 - label:.1%}** reaches the input steps through the cross-attention."
                + (f" Flow gives the label node {float(flowed.label.mean()):.1%} of its total." if want_flow else ""))
    if flat:
        st.info(f"**Flow:** {flat}", icon=":material/equal:")

    shaded = tables.input_frame(frame["timestamp"], frame[column].to_numpy(), inputs, flow_inputs)
    widgets.chart(charts.input_figure(shaded, column), f"{stem}-inputs", "an_inputs")
    widgets.lazy_csv_download(lambda: chosen.levels, f"{stem}-levels", "an_levels_csv",
                              "Download every layer's relevance per position (CSV)")
    widgets.lazy_csv_download(lambda: shaded, f"{stem}-relevance", "an_relevance_csv",
                              "Download the relevance of every input step (CSV)")
    if len(relevance) > 1:
        st.subheader("The three forms of P")
        widgets.small_table(tables.form_table({f: r.inputs.mean(axis=0) for f, r in relevance.items()},
                                              {f: float(r.label.mean()) for f, r in relevance.items()}),
                            f"{stem}-forms.csv", "an_forms", formats={"label share": "{:.3f}",
                                                                      "TV distance to routed": "{:.3f}",
                                                                      "ρ with routed": "{:+.3f}"})
        st.caption("Where the forms disagree, what the distilling step passes on depends on more than its wiring: "
                   "routed follows the max-pool's winners, Jacobian also weighs each channel's slope and conv "
                   "weights.")


TABS = {"Rollout and flow": rollout_tab,
        "Forecast lens": lambda: lens_view.lens_tab(model, data, prepared, seed, checkpoint, config, split, window,
                                                    column, frame, stem),
        "Direct shares": lambda: lens_view.shares_tab(model, data, prepared, seed, checkpoint, split, window, column,
                                                      stem)}


@st.fragment
def details() -> None:
    """The lazy tabs. A fragment: another tab, forecast step, α, head or form of P reruns only this part, on the
    recorded window, not the controls and notes above."""
    widgets.lazy_tabs(TABS, "an_tab")


details()
