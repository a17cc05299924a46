"""The active model (what it is, how it scored, its config) and the ways to load another one."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.data import RepairReport
from informer_lab.analysis.errors import InformerLabError
from informer_lab.ui import cache, frames, settings, sidebar, state, widgets
from informer_lab.ui.data_model import tables


def draw() -> None:
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
            training = ck.metrics.get("training") if isinstance(ck.metrics.get("training"), dict) else None
            st.caption(f"Trained with {training.get('description', '?')}; {training.get('steps', '?')} steps in "
                       f"{training.get('seconds', '?')} s." if training else
                       "Its metrics do not record the schedule (trained by an earlier version of the lab, or elsewhere).")
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
            if ck.repair:
                report = RepairReport.from_dict(ck.repair)
                with st.expander(f"Trained on repaired data: {len(report.changes):,} changes ({report.fill})"):
                    st.markdown("  \n".join(f"· {line}" for line in report.summary()))
                    widgets.table(report.changes, f"{active.ref.name}-repair-report", "model_repair",
                                  label="Download the repair report (CSV)", height=240)

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
