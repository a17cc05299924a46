"""Data & model: choose the data, see how it parsed, train a model in the background, or load one."""
from __future__ import annotations

import streamlit as st

from analysis.data import DataSpec, SeriesFrame
from analysis.errors import InformerLabError
from ui import deferred, frames, settings, state, widgets
from ui.data_model import charts, tables

SOURCES = ("Bundled sample", "Upload a CSV")
MAX_PLOT_POINTS = 2000  # per column, min/max pairs: about one pair per pixel of a wide chart
LEARNING_RATES = [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5]


@st.fragment
def column_summary(frame: SeriesFrame) -> None:
    """The column summary, drawn only while its expander is open. Lazy: a table on the first page load makes
    the browser fetch and compile its data-grid bundle (~1.2 MB of JavaScript) while it draws the series
    chart: 0.4 s more main-thread work before the first chart (CPU profile of the cold start, 4 rounds).
    A fragment: opening it reruns only this part, not the page's model half."""
    summary = st.expander("Column summary (raw values)", key="summary_open", on_change="rerun")
    if summary.open:
        with summary:
            widgets.table(tables.column_summary(frame.values), f"{frame.name}-summary", "summary")


st.title("Data & model")
st.caption("The data every page analyses, and the model it analyses it with. Both are per browser tab.")


# ============================================================================================ data
st.header("Data", divider="gray")
source = st.radio("Data source", SOURCES, key="data_source", horizontal=True, persist_state="session",
                  index=0 if state.data_ref().source == "sample" else 1)
if source == SOURCES[0]:
    if state.data_ref().source != "sample":
        state.set_data(state.sample_data_ref())
        st.rerun()
else:
    up_col, dt_col = st.columns([3, 1])
    upload = up_col.file_uploader("CSV file (a datetime column and numeric columns)", type=["csv", "txt"],
                                  key="csv_upload")
    datetime_column = dt_col.text_input("Datetime column", key="datetime_column", persist_state="session",
                                        placeholder="detect", help="Leave empty to detect it (a column named "
                                        "date/datetime/time/timestamp, else the first column of timestamps).")
    if upload is not None:
        raw = upload.getvalue()
        candidate = state.DataRef("upload", upload.name, frames.digest(raw), datetime_column.strip() or None)
        failed = st.session_state.get("csv_upload_failed")  # (DataRef, message) of the last file refused
        if candidate != state.data_ref() and (failed is None or failed[0] != candidate):
            try:
                frames.frame_from_bytes(candidate.digest, raw, candidate.name, candidate.datetime_column)
            except InformerLabError as err:
                failed = st.session_state["csv_upload_failed"] = (candidate, f"{upload.name}: {err}")
            else:
                st.session_state.pop("csv_upload_failed", None)
                state.set_data(candidate, raw)
                st.rerun()
        if failed is not None and failed[0] == candidate:
            st.error(failed[1])
            st.caption(f"Still using **{state.data_ref().name}**.")
    elif state.data_ref().source == "sample":
        st.info("Upload a CSV to use it; the bundled sample stays active until then.")

data = None
try:
    data = state.active_data()
except InformerLabError as err:
    st.error(str(err))

if data is not None:
    frame = data.frame
    st.subheader(f"{frame.name}")
    m = st.columns(4)
    m[0].metric("Rows", f"{frame.n_rows:,}")
    m[1].metric("Frequency", frame.freq)
    m[2].metric("Datetime column", frame.datetime_column)
    m[3].metric("Numeric columns", len(frame.columns))
    st.markdown(f"**From** {frame.timestamps[0]} **to** {frame.timestamps[-1]}  \n"
                f"**Numeric columns:** {', '.join(f'`{c}`' for c in frame.columns)}  \n"
                f"**Dropped columns** (no numeric value): "
                f"{', '.join(f'`{c}`' for c in frame.dropped_columns) if frame.dropped_columns else 'none'}")
    long, bucket = tables.downsample_minmax(frame.values, MAX_PLOT_POINTS)
    shown = list(frame.columns)
    if len(shown) > 8:
        shown = st.multiselect("Columns to plot", list(frame.columns), default=list(frame.columns)[-8:],
                               key="plot_columns")
    widgets.chart(charts.series_figure(long, shown, f"{frame.name}: every numeric column"),
                  f"{frame.name}-series", "series")
    if bucket > 1:
        st.caption(f"Display only: {frame.n_rows:,} rows drawn as the minimum and maximum of every {bucket} rows "
                   "per column; every analysis uses all rows.")
    column_summary(frame)


# ============================================================================================ model
# The model half of the page loads checkpoints, and with them torch (2–3 s on two cores). On the first run
# of a fresh server it waits for the rerun that loads the model stack once the browser has drawn the chart
# (ui/deferred.py).
st.header("Model", divider="gray")
if not deferred.model_stack_loaded():
    st.info("Loading PyTorch and the active model (once per server start)…", icon=":material/hourglass_top:")
    state.stop_page()

from analysis.training import TrainSettings  # noqa: E402
from analysis.workflow import ModelSize  # noqa: E402
from ui import cache, sidebar  # noqa: E402
from ui.jobs import TrainJob, check_training_inputs  # noqa: E402

active_col, load_col = st.columns([3, 2], gap="large")

with active_col:
    st.subheader("Active model")
    try:
        active = state.active_model()
    except InformerLabError as err:
        active = None
        st.error(str(err))
    if active is None:
        st.info("No model yet: train one below, or load one on the right.")
    else:
        ck = active.checkpoint
        device = next(ck.model.parameters()).device
        st.markdown(f"**{active.ref.name}** · runs on **{sidebar.DEVICE_NAMES.get(device.type, device.type)}**"
                    f" · trained on **{ck.metrics.get('device', 'unknown')}** from `{ck.metrics.get('data', '?')}`"
                    f" ({ck.metrics.get('stopped', 'unknown')})")
        metrics = tables.metrics_table(ck.metrics)
        if len(metrics):
            test = ck.metrics["test"]
            st.markdown(f"Test split: **{test.get('windows', '?')} windows**, MSE and MAE over every window, "
                        f"step and target column ({', '.join(ck.schema.target_columns)}).")
            widgets.table(metrics, f"{active.ref.name}-test-metrics", "metrics",
                          column_config={"MSE": st.column_config.NumberColumn(format="%.4f"),
                                         "MAE": st.column_config.NumberColumn(format="%.4f")})
            if len(ck.schema.target_columns) > 1:
                st.caption("Original units average the target columns in their own units, so columns with "
                           "large values weigh more; the standardised figures are the ones papers report.")
        else:
            st.caption("This checkpoint records no test metrics.")
        history = tables.history_table(ck.metrics)
        if len(history):
            with st.expander("Training history (per epoch)"):
                widgets.table(history, f"{active.ref.name}-history", "history")
        with st.expander("Full model config"):
            widgets.table(tables.config_table(ck.config), f"{active.ref.name}-config", "config")

with load_col:
    st.subheader("Load a model")
    folders = state.run_folders()
    if folders:
        current = active.ref.name if active is not None and active.ref.source == "folder" else None
        chosen = st.selectbox(f"Run folder in `{settings.runs_dir()}`", folders, key=f"run_folder::{current}",
                              index=folders.index(current) if current in folders else 0)
        if st.button("Use this model", key="use_folder"):
            state.set_model(state.folder_ref(settings.runs_dir() / chosen))
            st.rerun()
    else:
        st.caption(f"No checkpoint folders in `{settings.runs_dir()}` yet.")
    uploads = st.file_uploader("…or upload checkpoint files: weights.safetensors, config.json, schema.json, "
                               "metrics.json, manifest.json", type=["safetensors", "json"],
                               accept_multiple_files=True, key="checkpoint_upload")
    if uploads:
        files = {f.name: f.getvalue() for f in uploads}
        files_digest = frames.digest(b"".join(name.encode() + frames.digest(blob).encode()
                                             for name, blob in sorted(files.items())))
        uploaded = state.ModelRef("upload", f"upload-{files_digest[:8]}", digest=files_digest)
        if files_digest != st.session_state.get("checkpoint_upload_seen"):  # new files: validate, then use them
            st.session_state["checkpoint_upload_seen"] = files_digest
            try:
                cache.checkpoint_from_upload(files_digest, files)
            except InformerLabError as err:
                st.session_state["checkpoint_upload_error"] = str(err)
            else:
                st.session_state.pop("checkpoint_upload_error", None)
                state.set_model(uploaded, files)
                st.rerun()
        if st.session_state.get("checkpoint_upload_error"):
            st.error(st.session_state["checkpoint_upload_error"])
        elif state.model_ref() != uploaded and st.button("Use the uploaded checkpoint", key="use_upload"):
            state.set_model(uploaded, files)
            st.rerun()


# ============================================================================================ training
st.header("Train a new model", divider="gray")
job: TrainJob | None = st.session_state.get(state.JOB_KEY)
running = job is not None and not job.view().finished

if data is None:
    st.info("Choose usable data above to train a model on it.")
else:
    columns = list(data.frame.columns)
    with st.form("train_form", border=True):
        c = st.columns(4)
        target = c[0].selectbox("Target column", columns, index=len(columns) - 1, key="train_target",
                                persist_state="session")
        features = c[1].radio("Features", ["M", "S", "MS"], horizontal=True, key="train_features",
                              persist_state="session", help="M: all columns in, all out · S: target in, target "
                              "out · MS: all in, target out")
        attention = c[2].radio("Self-attention", ["prob", "full"], horizontal=True, key="train_attention",
                               persist_state="session", help="ProbSparse or full attention in the encoder and the "
                               "decoder self-attention; cross-attention stays full (as in the paper).")
        name = c[3].text_input("Run name", key="train_name", persist_state="session",
                               placeholder="automatic", help="A new folder under the runs directory.")
        c = st.columns(4)
        seq_len = c[0].number_input("seq_len (encoder window)", 2, 4096, 96, key="train_seq", persist_state="session")
        label_len = c[1].number_input("label_len (decoder start)", 1, 4096, 48, key="train_label",
                                      persist_state="session")
        pred_len = c[2].number_input("pred_len (horizon)", 1, 2048, 24, key="train_pred", persist_state="session")
        factor = c[3].number_input("factor c (u = c·⌈ln L⌉)", 1, 50, 5, key="train_factor", persist_state="session")
        c = st.columns(5)
        d_model = c[0].number_input("d_model", 4, 2048, 64, step=4, key="train_d_model", persist_state="session")
        n_heads = c[1].number_input("heads", 1, 64, 4, key="train_heads", persist_state="session")
        e_layers = c[2].text_input("encoder layers", "2", key="train_e_layers", persist_state="session",
                                   help="2 = one encoder of 2 layers; 3,2,1 = the InformerStack pyramid")
        d_layers = c[3].number_input("decoder layers", 1, 8, 1, key="train_d_layers", persist_state="session")
        d_ff = c[4].number_input("d_ff", 4, 8192, 128, step=4, key="train_d_ff", persist_state="session")
        c = st.columns(5)
        epochs = c[0].number_input("epochs", 1, 100, 2, key="train_epochs", persist_state="session")
        max_steps = c[1].number_input("max steps per epoch (0: all)", 0, 100000, 100, key="train_max_steps",
                                      persist_state="session")
        batch_size = c[2].number_input("batch size", 1, 1024, 32, key="train_batch", persist_state="session")
        learning_rate = c[3].selectbox("learning rate", LEARNING_RATES, index=LEARNING_RATES.index(1e-3),
                                       format_func=lambda v: f"{v:g}", key="train_lr", persist_state="session",
                                       help="Halved after every epoch. The paper uses 1e-4 over full epochs; "
                                            "1e-3 suits short runs.")
        train_seed = c[4].number_input("seed", 0, 2**31 - 1, 0, key="train_seed", persist_state="session")
        submitted = st.form_submit_button("Train", type="primary", disabled=running)

    if submitted and not running:
        try:
            spec = DataSpec(target=target, features=features, seq_len=int(seq_len), label_len=int(label_len),
                            pred_len=int(pred_len))
            size = ModelSize(d_model=int(d_model), n_heads=int(n_heads), e_layers=tables.parse_e_layers(e_layers),
                             d_layers=int(d_layers), d_ff=int(d_ff), factor=int(factor),
                             encoder_attention=attention, decoder_attention=attention)
            train_settings = TrainSettings(epochs=int(epochs), batch_size=int(batch_size),
                                           learning_rate=float(learning_rate), seed=int(train_seed),
                                           max_steps_per_epoch=int(max_steps) or None)
            runs = settings.runs_dir()
            if name.strip():
                run_name = tables.check_run_name(name)
                if (runs / run_name).exists():
                    raise InformerLabError(f"a run named {run_name!r} already exists in {runs}; choose another name")
            else:
                base = tables.default_run_name(target, features, spec.seq_len, spec.label_len, spec.pred_len, "")
                base = base.rstrip("-")
                run_name, n = base, 2
                while (runs / run_name).exists():
                    run_name, n = f"{base}-{n}", n + 1
            check_training_inputs(data.frame, spec, size)
        except (InformerLabError, ValueError) as err:
            st.error(str(err))
        else:
            st.session_state[state.JOB_KEY] = TrainJob(run_name, runs / run_name, data.frame, spec, size,
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
