"""Training a new model on the active data, in a background job: the form (which names its data; its window and
batch sizes follow the file's length), the guard that says when the chosen sizes leave too few windows (and a
button applying sizes that fit), the live progress and loss. The run folder is checked before training starts."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.data import DataSpec, Fit, column_departure, describe_frequency, ett_steps_per_hour, fitting_sizes, \
    window_budget
from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.outputs import OutputError, check_folder_target, describe_os_error
from informer_lab.analysis.learning.attention_options import ATTENTION_KINDS, describe_parameters, parse_attention_options, \
    split_option_text
from informer_lab.analysis.learning.embedding import EMBEDDINGS, describe_embedding, embedding_fields, lag_history
from informer_lab.analysis.learning.unit_root import UNIT_ROOTS
from informer_lab.analysis.learning.runs import free_run_name
from informer_lab.analysis.learning.settings import AUTO_EPOCHS, AUTO_STEPS
from informer_lab.analysis.learning.training import TrainSettings
from informer_lab.analysis.learning.workflow import ModelSize
from informer_lab.ui import settings, sidebar, state, widgets
from informer_lab.ui.compute import one_thread
from informer_lab.ui.data_model import charts, tables
from informer_lab.ui.data_model.source import Refusal
from informer_lab.ui.jobs import TrainJob, check_training_inputs

LEARNING_RATES = [1e-2, 3e-3, 2e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5]
DEFAULTS = TrainSettings()
SIZE = ModelSize()  # the model's default size, as `informer-lab train` takes it
SCHEDULES = {"cosine": "warm-up, hold, cosine decay", "paper": "halved every epoch (the paper's)",
             "constant": "constant"}
MINUTES = 3.0  # the form's time budget: a run ends within it, its schedule decaying in time
# seq_len, label_len, pred_len (the paper's) and the lab's batch size: the form's defaults when they fit
SIZES = (96, 48, 24, DEFAULTS.batch_size)
SIZE_KEYS = ("train_seq", "train_label", "train_pred", "train_batch")
SIZES_FOR = "train_sizes_for"  # (data key, the sizes the form was given for it)


def _use_sizes(fit: Fit) -> None:
    st.session_state["train_seq"], st.session_state["train_label"] = fit.spec.seq_len, fit.spec.label_len
    st.session_state["train_pred"], st.session_state["train_batch"] = fit.spec.pred_len, fit.batch_size


SIZES_NOTE = "train_sizes_note"  # what the form says of sizes it set for a short file


def _fit_for(frame, spec: DataSpec, batch_size: int) -> Fit | None:
    return fitting_sizes(frame.n_rows, spec, batch_size, freq=frame.freq, ett_steps_per_hour=ett_steps_per_hour(frame))


def _sizes_for(frame) -> tuple[tuple[int, int, int, int], str | None]:
    """The form's sizes for `frame`, and a sentence when they are not the paper's."""
    seq, label, pred, batch = SIZES
    fit = _fit_for(frame, DataSpec(frame.columns[-1], "M", seq, label, pred), batch)
    if fit is None:
        return SIZES, None
    sizes = (fit.spec.seq_len, fit.spec.label_len, fit.spec.pred_len, fit.batch_size)
    if sizes == SIZES:
        return sizes, None
    why = (f"two seasons of history and one ahead ({describe_frequency(frame.freq)})" if fit.seasonal
           else "the longest windows that leave enough")
    return sizes, (f"Sizes set for {frame.name} ({frame.n_rows:,} rows, too short for the paper's 96 / 48 / 24 at "
                   f"batch {SIZES[3]}): seq_len {sizes[0]}, label_len {sizes[1]}, pred_len {sizes[2]}, "
                   f"batch {sizes[3]}: "
                   f"{why}, the batch made smaller before the windows.")


def _interval_notes(frame) -> list[str]:
    """What the form's current sizes leave the test split: too few windows for an interval, said before training."""
    seq, label, pred, batch = (st.session_state.get(k) for k in SIZE_KEYS)
    if None in (seq, pred, batch):
        return []
    spec = DataSpec(frame.columns[-1], "M", int(seq), min(int(seq), max(1, int(label or 1))), int(pred))
    return window_budget(frame.n_rows, spec, int(batch), ett_steps_per_hour=ett_steps_per_hour(frame)).notes


def _trend_hint(frame) -> str | None:
    """A sentence when the chosen target's test rows leave its train range (before any model is trained)."""
    target = st.session_state.get("train_target")
    target = target if target in frame.columns else frame.columns[-1]
    seq = int(st.session_state.get("train_seq") or SIZES[0])
    departure = column_departure(frame.values[target].to_numpy(), seq)
    if not departure.left:
        return None
    return (f"{target}: {departure.describe()}. A model trained without RevIN reads those windows at levels it never "
            "saw; RevIN reads each window at its own level.")


def follow_length(data: state.ActiveData) -> None:
    """The form's window and batch sizes follow the data's length: the paper's 96/48/24 at the lab's batch where they
    fit, else sizes that do; sizes the user changed are left alone."""
    key, given = st.session_state.get(SIZES_FOR, (None, None))
    if key == data.key:
        return
    current = tuple(st.session_state.get(k) for k in SIZE_KEYS)
    untouched = all(v is None for v in current) or current == given or (given is None and current == SIZES)
    sizes, note = _sizes_for(data.frame)
    if untouched:
        for k, v in zip(SIZE_KEYS, sizes):
            st.session_state[k] = v
    st.session_state[SIZES_NOTE] = note if untouched else None
    st.session_state[SIZES_FOR] = (data.key, sizes if untouched else given)


def _guard(frame, spec: DataSpec, batch_size: int) -> bool:
    """True when the sizes leave enough windows; else a warning naming the counts and a button for sizes that do."""
    ett = ett_steps_per_hour(frame)
    budget = window_budget(frame.n_rows, spec, batch_size, ett_steps_per_hour=ett)
    if budget.ok:
        return True
    fit = _fit_for(frame, spec, batch_size)
    counts = ", ".join(f"{name} {n:,}" for name, n in budget.windows.items())
    text = (f"**Not started: {budget.problems[0]}.** Windows of seq_len {spec.seq_len} + pred_len {spec.pred_len} "
            f"in {frame.n_rows:,} rows: {counts}.")
    if fit is None:
        st.warning(text + " Even the shortest windows do not fit: use a longer file.", icon=":material/warning:")
        return False
    proposed = window_budget(frame.n_rows, fit.spec, fit.batch_size, ett_steps_per_hour=ett)
    batch = f", batch size {fit.batch_size}" if fit.batch_size != batch_size else ""
    st.warning(text + f" Sizes that fit: seq_len {fit.spec.seq_len}, label_len {fit.spec.label_len}, pred_len "
               f"{fit.spec.pred_len}{batch} ({proposed.windows['train']:,} train windows, {proposed.steps_per_epoch} "
               f"steps an epoch; on the CLI: {fit.flags(batch_size)}).", icon=":material/warning:")
    st.button(f"Use seq_len {fit.spec.seq_len} · label_len {fit.spec.label_len} · pred_len {fit.spec.pred_len}"
              + (f" · batch {fit.batch_size}" if batch else ""), key="use_proposal", on_click=_use_sizes,
              args=(fit,), icon=":material/auto_fix_high:")
    return False


class SavingTrainJob(TrainJob):
    """A training run whose save failing on the file system (full disk, read-only) is one line, not a bug. It trains
    on one torch thread (ui.compute), as the screens compute: on a busy two-core machine a second thread made a
    training step 19× slower (216 ms against 4,100 ms)."""

    def work(self) -> None:
        try:
            with one_thread():
                super().work()
        except OSError as err:
            raise OutputError(describe_os_error(err, self.out) + "; the run was not saved") from None


def _run_name(name: str, target: str, spec: DataSpec) -> str:
    runs = settings.runs_dir()
    if name.strip():
        run_name = tables.check_run_name(name)
        if (runs / run_name).exists():
            raise InformerLabError(f"a run named {run_name!r} already exists in {runs}; choose another name")
        return run_name
    return free_run_name(runs, tables.default_run_name(target, spec.features, spec.seq_len, spec.label_len,
                                                       spec.pred_len, "").rstrip("-"))


SPARSE_KINDS = tuple(k for k in ATTENTION_KINDS if k not in ("prob", "full"))
CROSS_KINDS = ("full", "prob", "lsh")
OPTIONS_HELP = ("NAME=VALUE items, e.g. `window=16 dilation=2`, `globals=0,-1`, `encoder.window=32`, "
                "`cross.buckets=4`: a bare name sets every site whose kind takes it; `encoder.`, `decoder_self.` "
                "or `cross.` one site type. Empty: the defaults, "
                + "; ".join(f"**{k}** {describe_parameters(k)}" for k in SPARSE_KINDS) + ".")


def _kind_label(kind: str) -> str:
    return {"prob": "prob (ProbSparse)", "full": "full"}.get(kind, kind)


EMBEDDING_LABELS = {"auto": "auto (the season's lags, else conv + RevIN)", "conv": "conv (the paper's)",
                    "lags": "lags (the season's)"}


UNIT_ROOT_LABELS = {"keep": "keep every level", "withhold": "withhold their levels"}
UNIT_ROOTS_HELP = ("With the lags embedding, an input column (not a target) with a unit root in the training split "
                   "(augmented Dickey–Fuller at 5 %: a random walk, a drifting level): keep (the default) reads its "
                   "level; withhold reads only its values within each window, so the model cannot take the drift "
                   "for a predictor (the model's card names such columns). On a planted random-walk input the "
                   "target never reads, withhold gave 1.01× the best possible error against 1.02×; on ETTh2, whose "
                   "target follows three drifting load columns, 1.00–1.11× the error of keep.")


def _embedding_help(freq: str | None) -> str:
    """What auto chooses for this data at the form's lengths (the last submitted, else the defaults)."""
    seq_len, pred_len = int(st.session_state.get("train_seq", 96)), int(st.session_state.get("train_pred", 24))
    extra = lag_history("auto", freq, seq_len, pred_len)
    chosen = describe_embedding(embedding_fields("auto", freq, seq_len + extra, pred_len))
    if extra:
        chosen += (f", {extra} rows before each window (windows of {seq_len + extra} rows, the encoder reading "
                   f"{seq_len})")
    return ("lags: each step is embedded with its own value and the value one season back (the smallest multiple "
            "of the season ≥ pred_len), so a forecast step reads that value itself; conv: the paper's embedding of "
            "the window. auto (the default) takes lags, the lag inside the window where it takes at most half of "
            "it, else in rows put before it (if the file has them); conv with RevIN where the data has no season. "
            "On planted hourly series conv stayed behind seasonal naive (1.14–1.42× the best possible error) and "
            "lags came within 1.02–1.03× of it. "
            f"For this data at seq_len {seq_len} and pred_len {pred_len}, auto is {chosen}.")


def _attention_options(text: str, attention: str, cross: str) -> dict:
    """The form's parameter line → the config's attention_options (a wrong item raises a ValueError naming it)."""
    kinds = {"encoder": attention, "decoder_self": attention, "cross": cross}
    return parse_attention_options(split_option_text(text), kinds, flag="Attention parameters:")


def form(data: state.ActiveData, refusal: Refusal | None, running: bool) -> None:
    frame = data.frame
    columns = list(frame.columns)
    repaired = f", repaired ({len(frame.repairs.changes):,} changes)" if not frame.repairs.empty else ""
    off = refusal is not None
    with st.form("train_form", border=True):
        st.markdown(f"Train on **{frame.name}**: {frame.n_rows:,} rows, {describe_frequency(frame.freq)}, "
                    f"{len(columns):,} numeric columns{repaired}.")
        if off:
            st.caption(f"Off: the upload of **{refusal.ref.name}** was refused (above). Repair it, upload another "
                       f"file or go back to the sample; {frame.name} is not trained by mistake.")
        c = st.columns(3)
        target = c[0].selectbox("Target column", columns, index=len(columns) - 1, key="train_target",
                                persist_state="session")
        features = c[1].radio("Features", ["M", "S", "MS"], horizontal=True, key="train_features",
                              persist_state="session", help="M: all columns in, all out · S: target in, target "
                              "out · MS: all in, target out")
        name = c[2].text_input("Run name", key="train_name", persist_state="session",
                               placeholder="automatic", help="A new folder under the runs directory.")
        c = st.columns([1, 1, 2])
        attention = c[0].selectbox("Self-attention", ATTENTION_KINDS, key="train_attention", persist_state="session",
                                   format_func=_kind_label, help="The encoder's and the decoder's self-attention. "
                                   "prob: ProbSparse (the paper); full: every query reads every key; the others are "
                                   "the efficient attentions of the paper's comparison and the survey (the Attention "
                                   "variants screen compares them on one model).")
        cross = c[1].selectbox("Cross-attention", CROSS_KINDS, key="train_cross", persist_state="session",
                               help="full in the paper; positional kinds have no meaning between two sequences")
        option_text = c[2].text_input("Attention parameters", key="train_attention_options", persist_state="session",
                                      placeholder="empty: the kind's defaults", help=OPTIONS_HELP)
        if st.session_state.get(SIZES_NOTE):
            st.caption(st.session_state[SIZES_NOTE])
        for note in _interval_notes(frame):
            st.caption(f":material/info: The sizes below: {note}.")
        c = st.columns(4)
        seq_len = c[0].number_input("seq_len (encoder window)", 2, 4096, 96, key="train_seq", persist_state="session")
        label_len = c[1].number_input("label_len (decoder start)", 1, 4096, 48, key="train_label",
                                      persist_state="session")
        pred_len = c[2].number_input("pred_len (horizon)", 1, 2048, 24, key="train_pred", persist_state="session")
        factor = c[3].number_input("factor c (u = c·⌈ln L⌉)", 1, 50, SIZE.factor, key="train_factor",
                                   persist_state="session",
                                   help=f"{SIZE.factor} by default (the paper's is 5): more active queries learned "
                                        "planted structure closer to its best possible error")
        c = st.columns(5)
        d_model = c[0].number_input("d_model", 4, 2048, SIZE.d_model, step=4, key="train_d_model", persist_state="session")
        n_heads = c[1].number_input("heads", 1, 64, SIZE.n_heads, key="train_heads", persist_state="session")
        e_layers = c[2].text_input("encoder layers", "2", key="train_e_layers", persist_state="session",
                                   help="2 = one encoder of 2 layers; 3,2,1 = the InformerStack pyramid")
        d_layers = c[3].number_input("decoder layers", 1, 8, SIZE.d_layers, key="train_d_layers", persist_state="session")
        d_ff = c[4].number_input("d_ff", 4, 8192, SIZE.d_ff, step=4, key="train_d_ff", persist_state="session")
        c = st.columns([1, 1.3, 1, 1, 1.6, 1.1, 1])
        epochs = c[0].number_input("epochs", 1, 100, DEFAULTS.epochs, key="train_epochs", persist_state="session",
                                   placeholder="auto",
                                   help=f"empty: auto, the fewest whole epochs that give {AUTO_STEPS} optimiser steps "
                                        f"({AUTO_EPOCHS[0]} to {AUTO_EPOCHS[1]}); the paper's count is 6")
        max_steps = c[1].number_input("max steps per epoch (0: all)", 0, 100000, 0, key="train_max_steps",
                                      persist_state="session")
        batch_size = c[2].number_input("batch size", 1, 1024, DEFAULTS.batch_size, key="train_batch",
                                       persist_state="session", help="16 by default; the paper's is 32")
        learning_rate = c[3].selectbox("peak learning rate", LEARNING_RATES,
                                       index=LEARNING_RATES.index(DEFAULTS.learning_rate),
                                       format_func=lambda v: f"{v:g}", key="train_lr", persist_state="session",
                                       help="The schedule's peak. The paper uses 1e-4 halved every epoch, which "
                                            "learns little in a short run.")
        schedule = c[4].selectbox("schedule", list(SCHEDULES), format_func=SCHEDULES.get, key="train_schedule",
                                  persist_state="session", help="cosine: a short warm-up, the peak held to 30 % of "
                                  "the run, then a cosine decay (the lab's default); paper: halved after every epoch")
        minutes = c[5].number_input("time budget (min, 0: none)", 0.0, 10_000.0, MINUTES, step=0.5,
                                    key="train_minutes", persist_state="session",
                                    help="Training and validation end within it; the schedule decays in time too.")
        train_seed = c[6].number_input("seed", 0, 2**31 - 1, 0, key="train_seed", persist_state="session")
        c = st.columns([1.2, 2, 1, 1.2])
        embedding = c[0].selectbox("Input embedding", EMBEDDINGS, index=EMBEDDINGS.index(SIZE.embedding),
                                   format_func=EMBEDDING_LABELS.get,
                                   key="train_embedding", persist_state="session", help=_embedding_help(frame.freq))
        revin = c[1].checkbox("RevIN: reversible instance normalisation", key="train_revin", persist_state="session",
                              help="Each window standardised by its own mean and deviation, the forecast mapped back "
                                   "(Kim et al. 2022): for a series whose level trends out of the train split's "
                                   "range. Recorded in the checkpoint. With RevIN, auto is the conv embedding.")
        average = c[2].number_input("weight average δ", 0.0, 0.9999, DEFAULTS.average, step=0.01,
                                    format="%.4g", key="train_average", persist_state="session",
                                    help=f"The kept weights are a moving average w̄ ← δ·w̄ + (1 − δ)·w over the steps "
                                         f"({DEFAULTS.average:g} by default: about the last 50 steps; lower test MSE "
                                         "than the last step's weights in 28 of 30 planted runs); 0 keeps the last "
                                         "step's weights, as the paper does.")
        unit_roots = c[3].selectbox("Unit-root inputs", UNIT_ROOTS, index=UNIT_ROOTS.index(SIZE.unit_roots),
                                    format_func=UNIT_ROOT_LABELS.get, key="train_unit_roots", persist_state="session",
                                    help=UNIT_ROOTS_HELP)
        hint = _trend_hint(frame)
        if hint:
            st.caption(f":material/trending_up: {hint}")
        submitted = st.form_submit_button("Train", type="primary", disabled=running or off)

    if not submitted or running or off:
        return
    try:
        spec = DataSpec(target=target, features=features, seq_len=int(seq_len), label_len=int(label_len),
                        pred_len=int(pred_len))
        size = ModelSize(d_model=int(d_model), n_heads=int(n_heads), e_layers=tables.parse_e_layers(e_layers),
                         d_layers=int(d_layers), d_ff=int(d_ff), factor=int(factor),
                         encoder_attention=attention, decoder_attention=attention, cross_attention=cross,
                         attention_options=_attention_options(option_text, attention, cross), revin=bool(revin),
                         embedding=embedding, unit_roots=unit_roots)
        train_settings = TrainSettings(epochs=int(epochs) if epochs else None, batch_size=int(batch_size),
                                       learning_rate=float(learning_rate), seed=int(train_seed),
                                       max_steps_per_epoch=int(max_steps) or None, schedule=schedule,
                                       max_minutes=float(minutes) or None, average=float(average))
        if not _guard(frame, spec, int(batch_size)):
            return
        run_name = _run_name(name, target, spec)
        check_training_inputs(frame, spec, size)
        check_folder_target(settings.runs_dir() / run_name, "the run folder", checkpoint=True)
    except (InformerLabError, ValueError) as err:
        st.error(str(err))
    else:
        st.session_state[state.JOB_KEY] = SavingTrainJob(run_name, settings.runs_dir() / run_name, frame, spec, size,
                                                   train_settings).start()
        st.rerun()


def _draw_result(view) -> None:
    if view.finished and view.summary:
        test = view.summary.get("test") or {}
        st.success(f"Saved to `{view.out}` · {view.summary['epochs']} epoch(s), {view.summary['stopped']} · "
                   f"device {view.summary['device']} · test MSE {test.get('mse', float('nan')):.4f}, "
                   f"MAE {test.get('mae', float('nan')):.4f} (standardised). It is now the active model.")


def _draw_loss(view) -> None:
    steps, epochs = tables.loss_curves(view.reports)
    if len(steps):
        widgets.chart(charts.loss_figure(steps, epochs), f"{view.name}-loss", "loss")
    if view.finished and len(epochs):
        with st.expander("Loss per epoch"):
            widgets.table(epochs, f"{view.name}-epochs", "epochs")


# While a run trains, two pollers: the progress every second, the loss chart (heavier to draw in the
# browser, and the training thread shares the CPU with it) every three seconds.
@st.fragment(run_every=1.0)
def _live_progress() -> None:
    job: TrainJob = st.session_state[state.JOB_KEY]
    if st.button("Stop", key="stop_training", icon=":material/stop:", disabled=job.view().stop_requested,
                 help="Stop after the current step; the best weights so far are kept and saved."):
        job.stop()
    widgets.job_progress(job.view())
    if job.view().finished:
        sidebar.adopt(job)
        st.rerun()


@st.fragment(run_every=3.0)
def _live_loss() -> None:
    _draw_loss(st.session_state[state.JOB_KEY].view())


def draw(data: state.ActiveData | None, refusal: Refusal | None) -> None:
    job: TrainJob | None = st.session_state.get(state.JOB_KEY)
    running = job is not None and not job.view().finished
    if data is None:
        st.info("Choose usable data above to train a model on it.")
    else:
        follow_length(data)
        form(data, refusal, running)
    if job is not None:
        st.subheader(f"Run `{job.name}`")
        if running:
            _live_progress()
            _live_loss()
        else:
            view = job.view()
            widgets.job_progress(view)
            _draw_loss(view)
            _draw_result(view)
